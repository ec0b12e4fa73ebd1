// Exported activation chains -> SiLU, HardSwish, GELU, named like the chain's last op.
// RUN: tpuc-opt %s --split-input-file --fuse-activations | filecheck %s
// RUN: tpuc-opt %s --split-input-file --fuse-activations --mlir-print-debuginfo | filecheck %s --check-prefix=LOC
// RUN: tpuc-opt %s --split-input-file --fuse-activations > %t.once
// RUN: tpuc-opt %t.once --split-input-file --fuse-activations > %t.twice
// RUN: diff %t.once %t.twice
// RUN: tpuc-opt %s --split-input-file --fuse-activations --debug-only=pattern-application 2>&1 >/dev/null | filecheck %s --check-prefix=COUNT
// COUNT:      pattern-application: 2 applied (FuseGatedActivation x2)
// COUNT-NEXT: pattern-application: 0 applied
// COUNT:      pattern-application: 3 applied (FuseScaledGate x3)
// COUNT-NEXT: pattern-application: 0 applied
// COUNT:      pattern-application: 2 applied (FuseScaledGate x2)
// COUNT-NEXT: pattern-application: 0 applied

// CHECK-LABEL: func.func @silu_hardswish
// CHECK:       %[[X:.*]] = "top.Input"
// CHECK-NEXT:  %[[S:.*]] = "top.SiLU"(%[[X]]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:  %[[H:.*]] = "top.HardSwish"(%[[X]]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:  return %[[S]], %[[H]]
// LOC-LABEL:   func.func @silu_hardswish
// LOC:         "top.SiLU"{{.*}} loc([[S:#loc[0-9]*]])
// LOC:         "top.HardSwish"{{.*}} loc([[H:#loc[0-9]*]])
// LOC:         [[S]] = loc("silu")
// LOC:         [[H]] = loc("hswish")
func.func @silu_hardswish(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %1 = "top.Sigmoid"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("sig")
  %2 = "top.Mul"(%0, %1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("silu")
  %3 = "top.HardSigmoid"(%0) {alpha = 0.1666666716337204 : f64, beta = 5.000000e-01 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("hsig")
  %4 = "top.Mul"(%3, %0) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("hswish")
  return %2, %4 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----
// Must not fire: the gate reads another value, is read elsewhere, has a scale, or is a
// HardSigmoid with ONNX's default alpha 0.2; the Mul has a fused Relu.
// CHECK-LABEL: func.func @gate_no_fire
// CHECK-NOT:   top.SiLU
// CHECK-NOT:   top.HardSwish
// CHECK-COUNT-5: "top.Mul"
func.func @gate_no_fire(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %y = "top.Input"(%arg1) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("y")
  %1 = "top.Sigmoid"(%y) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("sig_y")
  %2 = "top.Mul"(%0, %1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("other_input")
  %3 = "top.Sigmoid"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("sig_shared")
  %4 = "top.Mul"(%0, %3) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("gate_read_elsewhere")
  %5 = "top.Sigmoid"(%0) {scale = 2.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("sig_scaled")
  %6 = "top.Mul"(%0, %5) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("scaled")
  %7 = "top.HardSigmoid"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("hsig_default")
  %8 = "top.Mul"(%0, %7) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("alpha_0_2")
  %9 = "top.Sigmoid"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("sig_relu")
  %10 = "top.Mul"(%0, %9) {do_relu = true} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("mul_relu")
  return %2, %4, %3, %6, %8, %10 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----
// The three orders torch and others export GELU in, with x / sqrt2 as MulConst or DivConst.
// CHECK-LABEL: func.func @gelu_orders
// CHECK:       %[[X:.*]] = "top.Input"
// CHECK-NEXT:  %[[A:.*]] = "top.GELU"(%[[X]]) {approx_mode = "normal"}
// CHECK-NEXT:  %[[B:.*]] = "top.GELU"(%[[X]]) {approx_mode = "normal"}
// CHECK-NEXT:  %[[C:.*]] = "top.GELU"(%[[X]]) {approx_mode = "normal"}
// CHECK-NEXT:  return %[[A]], %[[B]], %[[C]]
// LOC-LABEL:   func.func @gelu_orders
// LOC:         "top.GELU"{{.*}} loc([[A:#loc[0-9]*]])
// LOC:         "top.GELU"{{.*}} loc([[B:#loc[0-9]*]])
// LOC:         "top.GELU"{{.*}} loc([[C:#loc[0-9]*]])
// LOC:         [[A]] = loc("gelu_torch")
// LOC:         [[B]] = loc("gelu_half_last")
// LOC:         [[C]] = loc("gelu_half_gate")
func.func @gelu_orders(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %x = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %a1 = "top.MulConst"(%x) {const_val = 0.70710679664085752 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("a_div")
  %a2 = "top.Erf"(%a1) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("a_erf")
  %a3 = "top.AddConst"(%a2) {const_val = 1.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("a_add")
  %a4 = "top.MulConst"(%x) {const_val = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("a_half")
  %a5 = "top.Mul"(%a4, %a3) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("gelu_torch")
  %b1 = "top.DivConst"(%x) {const_val = 1.4142135381698608 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("b_div")
  %b2 = "top.Erf"(%b1) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("b_erf")
  %b3 = "top.AddConst"(%b2) {const_val = 1.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("b_add")
  %b4 = "top.Mul"(%b3, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("b_mul")
  %b5 = "top.MulConst"(%b4) {const_val = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("gelu_half_last")
  %c1 = "top.MulConst"(%x) {const_val = 0.70710677 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("c_div")
  %c2 = "top.Erf"(%c1) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("c_erf")
  %c3 = "top.AddConst"(%c2) {const_val = 1.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("c_add")
  %c4 = "top.MulConst"(%c3) {const_val = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("c_half")
  %c5 = "top.Mul"(%x, %c4) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("gelu_half_gate")
  return %a5, %b5, %c5 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----
// Must not fire: a wrong constant (x / 2, + 0.5, * 0.25), the erf of another value, an
// intermediate that is also an output, a Relu fused into the chain.
// CHECK-LABEL: func.func @gelu_no_fire
// CHECK-NOT:   top.GELU
// CHECK-COUNT-6: "top.Erf"
func.func @gelu_no_fire(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %x = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %y = "top.Input"(%arg1) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("y")
  %a1 = "top.MulConst"(%x) {const_val = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("a_div")
  %a2 = "top.Erf"(%a1) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("a_erf")
  %a3 = "top.AddConst"(%a2) {const_val = 1.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("a_add")
  %a4 = "top.MulConst"(%x) {const_val = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("a_half")
  %a5 = "top.Mul"(%a4, %a3) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("wrong_scale")
  %b1 = "top.MulConst"(%x) {const_val = 0.70710678 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("b_div")
  %b2 = "top.Erf"(%b1) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("b_erf")
  %b3 = "top.AddConst"(%b2) {const_val = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("b_add")
  %b4 = "top.MulConst"(%x) {const_val = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("b_half")
  %b5 = "top.Mul"(%b4, %b3) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("wrong_one")
  %c1 = "top.MulConst"(%x) {const_val = 0.70710678 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("c_div")
  %c2 = "top.Erf"(%c1) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("c_erf")
  %c3 = "top.AddConst"(%c2) {const_val = 1.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("c_add")
  %c4 = "top.MulConst"(%x) {const_val = 0.25 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("c_quarter")
  %c5 = "top.Mul"(%c4, %c3) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("wrong_half")
  %d1 = "top.MulConst"(%y) {const_val = 0.70710678 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("d_div")
  %d2 = "top.Erf"(%d1) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("d_erf")
  %d3 = "top.AddConst"(%d2) {const_val = 1.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("d_add")
  %d4 = "top.MulConst"(%x) {const_val = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("d_half")
  %d5 = "top.Mul"(%d4, %d3) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("erf_of_other")
  %e1 = "top.MulConst"(%x) {const_val = 0.70710678 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("e_div")
  %e2 = "top.Erf"(%e1) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("e_erf")
  %e3 = "top.AddConst"(%e2) {const_val = 1.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("e_add")
  %e4 = "top.MulConst"(%x) {const_val = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("e_half")
  %e5 = "top.Mul"(%e4, %e3) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("erf_also_output")
  %f1 = "top.MulConst"(%x) {const_val = 0.70710678 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("f_div")
  %f2 = "top.Erf"(%f1) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("f_erf")
  %f3 = "top.AddConst"(%f2) {const_val = 1.0 : f64, do_relu = true} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("f_add")
  %f4 = "top.MulConst"(%x) {const_val = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("f_half")
  %f5 = "top.Mul"(%f4, %f3) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("relu_inside")
  return %a5, %b5, %c5, %d5, %e5, %e2, %f5 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----
// GELU's tanh form as torch exports it, and HardSwish as x * clip(x + 3, 0, 6) / 6.
// CHECK-LABEL: func.func @tanh_gelu_relu6_hardswish
// CHECK:       %[[X:.*]] = "top.Input"
// CHECK-NEXT:  %[[T:.*]] = "top.GELU"(%[[X]]) {approx_mode = "tanh"}
// CHECK-NEXT:  %[[H:.*]] = "top.HardSwish"(%[[X]]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:  return %[[T]], %[[H]]
// LOC-LABEL:   func.func @tanh_gelu_relu6_hardswish
// LOC:         "top.GELU"{{.*}} loc([[T:#loc[0-9]*]])
// LOC:         "top.HardSwish"{{.*}} loc([[H:#loc[0-9]*]])
// LOC:         [[T]] = loc("gelu_tanh")
// LOC:         [[H]] = loc("hswish_div6")
func.func @tanh_gelu_relu6_hardswish(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %x = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %0 = "top.Pow"(%x) {exponent = 3.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("cube")
  %1 = "top.MulConst"(%0) {const_val = 0.044714998453855515 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("mul_c")
  %2 = "top.Add"(%x, %1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("add_cube")
  %3 = "top.MulConst"(%2) {const_val = 0.79788458347320557 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("mul_k")
  %4 = "top.Tanh"(%3) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("tanh")
  %5 = "top.AddConst"(%4) {const_val = 1.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("add_one")
  %6 = "top.MulConst"(%x) {const_val = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("half")
  %7 = "top.Mul"(%6, %5) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("gelu_tanh")
  %h0 = "top.AddConst"(%x) {const_val = 3.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("plus3")
  %h1 = "top.Clip"(%h0) {min = 0.0 : f64, max = 6.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("relu6")
  %h2 = "top.Mul"(%x, %h1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("times_x")
  %h3 = "top.MulConst"(%h2) {const_val = 0.16666666666666666 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("hswish_div6")
  return %7, %h3 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----
// Must not fire: a cubic coefficient of 0.05, a Clip to 5, a Clip of x + 2.
// CHECK-LABEL: func.func @tanh_relu6_no_fire
// CHECK-NOT:   top.GELU
// CHECK-NOT:   top.HardSwish
// CHECK:       top.Tanh
func.func @tanh_relu6_no_fire(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %x = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %0 = "top.Pow"(%x) {exponent = 3.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("cube")
  %1 = "top.MulConst"(%0) {const_val = 0.05 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("mul_c")
  %2 = "top.Add"(%x, %1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("add_cube")
  %3 = "top.MulConst"(%2) {const_val = 0.79788458347320557 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("mul_k")
  %4 = "top.Tanh"(%3) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("tanh")
  %5 = "top.AddConst"(%4) {const_val = 1.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("add_one")
  %6 = "top.MulConst"(%x) {const_val = 0.5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("half")
  %7 = "top.Mul"(%6, %5) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("wrong_cubic")
  %h0 = "top.AddConst"(%x) {const_val = 3.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("plus3")
  %h1 = "top.Clip"(%h0) {min = 0.0 : f64, max = 5.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("clip5")
  %h2 = "top.Mul"(%x, %h1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("times_x")
  %h3 = "top.MulConst"(%h2) {const_val = 0.16666666666666666 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("clip_to_5")
  %k0 = "top.AddConst"(%x) {const_val = 2.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("plus2")
  %k1 = "top.Clip"(%k0) {min = 0.0 : f64, max = 6.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("relu6_2")
  %k2 = "top.Mul"(%x, %k1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("times_x_2")
  %k3 = "top.MulConst"(%k2) {const_val = 0.16666666666666666 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("plus_2")
  return %7, %h3, %k3 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// LLaMA's RMSNorm spelled out in ops -> top.RMSNorm (TPU-MLIR's MergeToRMSNormPattern), named
// like the chain's last Mul.
// RUN: tpuc-opt %s --split-input-file --fuse-rms-norm | filecheck %s
// RUN: tpuc-opt %s --split-input-file --fuse-rms-norm --mlir-print-debuginfo | filecheck %s --check-prefix=LOC
// RUN: tpuc-opt %s --split-input-file --canonicalize | filecheck %s --check-prefix=CANON
// RUN: tpuc-opt %s --split-input-file --fuse-rms-norm > %t.once
// RUN: tpuc-opt %s --split-input-file --fuse-rms-norm | tpuc-opt --split-input-file --fuse-rms-norm > %t.twice
// RUN: diff %t.once %t.twice

// torch >= 2.0's export: Pow 2, Reciprocal, gamma first in the last Mul: one RMSNorm with gamma.
// CHECK-LABEL: func.func @llama_rms_norm
// CHECK:       %[[X:.*]] = "top.Input"
// CHECK:       %[[G:.*]] = "top.Weight"() : () -> tensor<8xf32>
// CHECK:       %[[R:.*]] = "top.RMSNorm"(%[[X]], %[[G]]) {eps = 9.9999999747524271E-7 : f64} : (tensor<1x4x8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
// CHECK-NOT:   top.Reciprocal
// CHECK-NOT:   top.Reduce
// CHECK:       return %[[R]]
// LOC-LABEL:   func.func @llama_rms_norm
// LOC:         "top.RMSNorm"{{.*}} loc([[L:#loc[0-9]*]])
// LOC:         [[L]] = loc("input_layernorm")
// CANON-LABEL: func.func @llama_rms_norm
// CANON:       %[[R:.*]] = "top.RMSNorm"
// CANON-NEXT:  return %[[R]]
func.func @llama_rms_norm(%arg0: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> loc("x")
  %g = "top.Weight"() : () -> tensor<8xf32> loc("input_layernorm.weight")
  %0 = "top.Pow"(%x) {exponent = 2.0 : f64} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> loc("pow")
  %1 = "top.Reduce"(%0) {axes = [-1], keepdims = true, mode = "ReduceMean"} : (tensor<1x4x8xf32>) -> tensor<1x4x1xf32> loc("variance")
  %2 = "top.AddConst"(%1) {const_val = 9.9999999747524271E-7 : f64} : (tensor<1x4x1xf32>) -> tensor<1x4x1xf32> loc("add_eps")
  %3 = "top.Sqrt"(%2) : (tensor<1x4x1xf32>) -> tensor<1x4x1xf32> loc("sqrt")
  %4 = "top.Reciprocal"(%3) : (tensor<1x4x1xf32>) -> tensor<1x4x1xf32> loc("rsqrt")
  %5 = "top.Mul"(%x, %4) : (tensor<1x4x8xf32>, tensor<1x4x1xf32>) -> tensor<1x4x8xf32> loc("normed")
  %6 = "top.Mul"(%g, %5) : (tensor<8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32> loc("input_layernorm")
  return %6 : tensor<1x4x8xf32>
}

// -----
// Older exporters' Div(1, sqrt) (a reversed DivConst of 1), Mul(x, x), the inverse first, no gamma.
// CHECK-LABEL: func.func @div_form_no_gamma
// CHECK:       %[[N:.*]] = "top.None"() : () -> none
// CHECK-NEXT:  %[[R:.*]] = "top.RMSNorm"(%{{.*}}, %[[N]]) {eps = 1.000000e-05 : f64}
// CHECK-NEXT:  return %[[R]]
func.func @div_form_no_gamma(%arg0: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32> loc("x")
  %0 = "top.Mul"(%x, %x) : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32> loc("square")
  %1 = "top.Reduce"(%0) {axes = [2], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32> loc("variance")
  %2 = "top.AddConst"(%1) {const_val = 1.0e-05 : f64} : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("add_eps")
  %3 = "top.Sqrt"(%2) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("sqrt")
  %4 = "top.DivConst"(%3) {const_val = 1.0 : f64, is_reverse = true} : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("rsqrt")
  %5 = "top.Mul"(%4, %x) : (tensor<2x3x1xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32> loc("normed")
  return %5 : tensor<2x3x8xf32>
}

// -----
// Must not fire: a mean over another axis than the last, eps 0, sqrt / 1 (DivConst not reversed),
// 2 / sqrt, the root also an output, Pow 3, a square of another tensor; and a gamma of another
// shape (the RMSNorm fuses, the Mul stays).
// CHECK-LABEL: func.func @no_fire
// CHECK-COUNT-7: "top.Reduce"
// CHECK:       %[[R:.*]] = "top.RMSNorm"(%{{.*}}, %{{.*}}) {eps = 1.000000e-05 : f64} : (tensor<2x3x8xf32>, none)
// CHECK-NEXT:  "top.Mul"(%{{.*}}, %[[R]]) : (tensor<3x8xf32>, tensor<2x3x8xf32>)
// CHECK-NOT:   top.RMSNorm
func.func @no_fire(%arg0: tensor<2x3x8xf32>, %arg1: tensor<2x3x8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>) {
  %x = "top.Input"(%arg0) : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32> loc("x")
  %y = "top.Input"(%arg1) : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32> loc("y")
  %g = "top.Weight"() : () -> tensor<3x8xf32> loc("gamma_3x8")
  %a0 = "top.Mul"(%x, %x) : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32> loc("a_square")
  %a1 = "top.Reduce"(%a0) {axes = [1], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x8xf32>) -> tensor<2x1x8xf32> loc("a_variance")
  %a2 = "top.AddConst"(%a1) {const_val = 1.0e-05 : f64} : (tensor<2x1x8xf32>) -> tensor<2x1x8xf32> loc("a_eps")
  %a3 = "top.Sqrt"(%a2) : (tensor<2x1x8xf32>) -> tensor<2x1x8xf32> loc("a_sqrt")
  %a4 = "top.Reciprocal"(%a3) : (tensor<2x1x8xf32>) -> tensor<2x1x8xf32> loc("a_rsqrt")
  %a5 = "top.Mul"(%x, %a4) : (tensor<2x3x8xf32>, tensor<2x1x8xf32>) -> tensor<2x3x8xf32> loc("other_axis")
  %b0 = "top.Mul"(%x, %x) : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32> loc("b_square")
  %b1 = "top.Reduce"(%b0) {axes = [2], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32> loc("b_variance")
  %b2 = "top.AddConst"(%b1) {const_val = 0.0 : f64} : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("b_eps")
  %b3 = "top.Sqrt"(%b2) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("b_sqrt")
  %b4 = "top.Reciprocal"(%b3) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("b_rsqrt")
  %b5 = "top.Mul"(%x, %b4) : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32> loc("eps_0")
  %c0 = "top.Mul"(%x, %x) : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32> loc("c_square")
  %c1 = "top.Reduce"(%c0) {axes = [2], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32> loc("c_variance")
  %c2 = "top.AddConst"(%c1) {const_val = 1.0e-05 : f64} : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("c_eps")
  %c3 = "top.Sqrt"(%c2) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("c_sqrt")
  %c4 = "top.DivConst"(%c3) {const_val = 1.0 : f64} : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("c_sqrt_by_1")
  %c5 = "top.Mul"(%x, %c4) : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32> loc("not_reversed")
  %d0 = "top.Mul"(%x, %x) : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32> loc("d_square")
  %d1 = "top.Reduce"(%d0) {axes = [2], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32> loc("d_variance")
  %d2 = "top.AddConst"(%d1) {const_val = 1.0e-05 : f64} : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("d_eps")
  %d3 = "top.Sqrt"(%d2) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("d_sqrt")
  %d4 = "top.Reciprocal"(%d3) {const_val = 2.0 : f64} : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("d_2_over")
  %d5 = "top.Mul"(%x, %d4) : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32> loc("two_over_sqrt")
  %e0 = "top.Mul"(%x, %x) : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32> loc("e_square")
  %e1 = "top.Reduce"(%e0) {axes = [2], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32> loc("e_variance")
  %e2 = "top.AddConst"(%e1) {const_val = 1.0e-05 : f64} : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("e_eps")
  %e3 = "top.Sqrt"(%e2) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("e_sqrt")
  %e4 = "top.Reciprocal"(%e3) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("e_rsqrt")
  %e5 = "top.Mul"(%x, %e4) : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32> loc("root_also_output")
  %f0 = "top.Pow"(%x) {exponent = 3.0 : f64} : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32> loc("f_cube")
  %f1 = "top.Reduce"(%f0) {axes = [2], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32> loc("f_variance")
  %f2 = "top.AddConst"(%f1) {const_val = 1.0e-05 : f64} : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("f_eps")
  %f3 = "top.Sqrt"(%f2) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("f_sqrt")
  %f4 = "top.Reciprocal"(%f3) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("f_rsqrt")
  %f5 = "top.Mul"(%x, %f4) : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32> loc("pow_3")
  %h0 = "top.Mul"(%y, %y) : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32> loc("h_square_of_y")
  %h1 = "top.Reduce"(%h0) {axes = [2], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32> loc("h_variance")
  %h2 = "top.AddConst"(%h1) {const_val = 1.0e-05 : f64} : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("h_eps")
  %h3 = "top.Sqrt"(%h2) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("h_sqrt")
  %h4 = "top.Reciprocal"(%h3) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("h_rsqrt")
  %h5 = "top.Mul"(%x, %h4) : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32> loc("x_by_rms_of_y")
  %k0 = "top.Mul"(%x, %x) : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32> loc("k_square")
  %k1 = "top.Reduce"(%k0) {axes = [2], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32> loc("k_variance")
  %k2 = "top.AddConst"(%k1) {const_val = 1.0e-05 : f64} : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("k_eps")
  %k3 = "top.Sqrt"(%k2) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("k_sqrt")
  %k4 = "top.Reciprocal"(%k3) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("k_rsqrt")
  %k5 = "top.Mul"(%x, %k4) : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32> loc("k_normed")
  %k6 = "top.Mul"(%g, %k5) : (tensor<3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32> loc("gamma_other_shape")
  return %a5, %b5, %c5, %d5, %e5, %e3, %f5, %h5, %k6 : tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>, tensor<2x3x8xf32>
}

// -----
// Must not fire: eps added with a fused Relu (the chain's inner_link refuses it).
// CHECK-LABEL: func.func @relu_eps
// CHECK:       "top.AddConst"{{.*}}do_relu = true
// CHECK-NOT:   top.RMSNorm
func.func @relu_eps(%arg0: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
  %x = "top.Input"(%arg0) : (tensor<2x3x8xf32>) -> tensor<2x3x8xf32> loc("x")
  %0 = "top.Mul"(%x, %x) : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32> loc("square")
  %1 = "top.Reduce"(%0) {axes = [2], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32> loc("variance")
  %2 = "top.AddConst"(%1) {const_val = 1.0e-05 : f64, do_relu = true} : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("relu_eps")
  %3 = "top.Sqrt"(%2) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("sqrt")
  %4 = "top.Reciprocal"(%3) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("rsqrt")
  %5 = "top.Mul"(%x, %4) : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32> loc("normed")
  return %5 : tensor<2x3x8xf32>
}

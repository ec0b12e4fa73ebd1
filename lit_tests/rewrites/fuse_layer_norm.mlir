// The LayerNorm exporters spell out in ops -> top.LayerNorm, named like the chain's last op.
// RUN: tpuc-opt %s --split-input-file --fuse-layer-norm | filecheck %s
// RUN: tpuc-opt %s --split-input-file --fuse-layer-norm --mlir-print-debuginfo | filecheck %s --check-prefix=LOC
// RUN: tpuc-opt %s --split-input-file --fuse-layer-norm > %t.once
// RUN: tpuc-opt %t.once --split-input-file --fuse-layer-norm > %t.twice
// RUN: diff %t.once %t.twice

// Pow(d, 2), gamma and beta: one LayerNorm with both, named like the Add of beta.
// CHECK-LABEL: func.func @torch_layer_norm
// CHECK:       %[[X:.*]] = "top.Input"
// CHECK-DAG:   %[[G:.*]] = "top.Weight"() : () -> tensor<4xf32>
// CHECK-DAG:   %[[B:.*]] = "top.Weight"() : () -> tensor<4xf32>
// CHECK:       %[[L:.*]] = "top.LayerNorm"(%[[X]], %[[G]], %[[B]]) {axis = 2 : i64, eps = 9.9999997473787516E-6 : f64, normalized_shape = [4]}
// CHECK-NOT:   top.Reduce
// CHECK-NOT:   top.Div
// CHECK:       return %[[L]]
// LOC-LABEL:   func.func @torch_layer_norm
// LOC:         "top.LayerNorm"{{.*}} loc([[L:#loc[0-9]*]])
// LOC:         [[L]] = loc("ln_out")
func.func @torch_layer_norm(%arg0: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %x = "top.Input"(%arg0) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("x")
  %g = "top.Weight"() : () -> tensor<4xf32> loc("gamma")
  %b = "top.Weight"() : () -> tensor<4xf32> loc("beta")
  %0 = "top.Reduce"(%x) {axes = [-1], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32> loc("mean")
  %1 = "top.Sub"(%x, %0) : (tensor<2x3x4xf32>, tensor<2x3x1xf32>) -> tensor<2x3x4xf32> loc("centered")
  %2 = "top.Pow"(%1) {exponent = 2.0 : f64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("square")
  %3 = "top.Reduce"(%2) {axes = [2], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32> loc("var")
  %4 = "top.AddConst"(%3) {const_val = 9.9999997473787516e-06 : f64} : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("var_eps")
  %5 = "top.Sqrt"(%4) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("std")
  %6 = "top.Div"(%1, %5) : (tensor<2x3x4xf32>, tensor<2x3x1xf32>) -> tensor<2x3x4xf32> loc("normed")
  %7 = "top.Mul"(%6, %g) : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32> loc("scaled")
  %8 = "top.Add"(%b, %7) : (tensor<4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("ln_out")
  return %8 : tensor<2x3x4xf32>
}

// -----
// Mul(d, d), over the two trailing axes, without gamma and beta: operands none.
// CHECK-LABEL: func.func @two_axes_no_affine
// CHECK:       %[[N:.*]] = "top.None"() : () -> none
// CHECK-NEXT:  %[[L:.*]] = "top.LayerNorm"(%{{.*}}, %[[N]], %[[N]]) {axis = 1 : i64, eps = 1.000000e-03 : f64, normalized_shape = [3, 4]}
// CHECK-NEXT:  return %[[L]]
func.func @two_axes_no_affine(%arg0: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %x = "top.Input"(%arg0) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("x")
  %0 = "top.Reduce"(%x) {axes = [1, 2], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x4xf32>) -> tensor<2x1x1xf32> loc("mean")
  %1 = "top.Sub"(%x, %0) : (tensor<2x3x4xf32>, tensor<2x1x1xf32>) -> tensor<2x3x4xf32> loc("centered")
  %2 = "top.Mul"(%1, %1) : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("square")
  %3 = "top.Reduce"(%2) {axes = [-1, -2], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x4xf32>) -> tensor<2x1x1xf32> loc("var")
  %4 = "top.AddConst"(%3) {const_val = 1.0e-03 : f64} : (tensor<2x1x1xf32>) -> tensor<2x1x1xf32> loc("var_eps")
  %5 = "top.Sqrt"(%4) : (tensor<2x1x1xf32>) -> tensor<2x1x1xf32> loc("std")
  %6 = "top.Div"(%1, %5) : (tensor<2x3x4xf32>, tensor<2x1x1xf32>) -> tensor<2x3x4xf32> loc("normed")
  return %6 : tensor<2x3x4xf32>
}

// -----
// Must not fire: means over a leading axis, over different axes, a mean also read elsewhere,
// Pow 3, and a gamma of another shape (the LayerNorm fuses, the Mul stays).
// CHECK-LABEL: func.func @no_fire
// CHECK-COUNT-8: "top.Reduce"
// CHECK:       %[[L:.*]] = "top.LayerNorm"(%{{.*}}, %{{.*}}, %{{.*}}) {axis = 2 : i64
// CHECK-NEXT:  "top.Mul"(%[[L]], %{{.*}}) : (tensor<2x3x4xf32>, tensor<3x4xf32>)
// CHECK-NOT:   top.LayerNorm
func.func @no_fire(%arg0: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %x = "top.Input"(%arg0) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("x")
  %g = "top.Weight"() : () -> tensor<3x4xf32> loc("gamma_3x4")
  %a0 = "top.Reduce"(%x) {axes = [1], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32> loc("a_mean")
  %a1 = "top.Sub"(%x, %a0) : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32> loc("a_centered")
  %a2 = "top.Mul"(%a1, %a1) : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("a_square")
  %a3 = "top.Reduce"(%a2) {axes = [1], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32> loc("a_var")
  %a4 = "top.AddConst"(%a3) {const_val = 1.0e-05 : f64} : (tensor<2x1x4xf32>) -> tensor<2x1x4xf32> loc("a_var_eps")
  %a5 = "top.Sqrt"(%a4) : (tensor<2x1x4xf32>) -> tensor<2x1x4xf32> loc("a_std")
  %a6 = "top.Div"(%a1, %a5) : (tensor<2x3x4xf32>, tensor<2x1x4xf32>) -> tensor<2x3x4xf32> loc("leading_axis")
  %b0 = "top.Reduce"(%x) {axes = [2], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32> loc("b_mean")
  %b1 = "top.Sub"(%x, %b0) : (tensor<2x3x4xf32>, tensor<2x3x1xf32>) -> tensor<2x3x4xf32> loc("b_centered")
  %b2 = "top.Mul"(%b1, %b1) : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("b_square")
  %b3 = "top.Reduce"(%b2) {axes = [1, 2], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x4xf32>) -> tensor<2x1x1xf32> loc("b_var")
  %b4 = "top.AddConst"(%b3) {const_val = 1.0e-05 : f64} : (tensor<2x1x1xf32>) -> tensor<2x1x1xf32> loc("b_var_eps")
  %b5 = "top.Sqrt"(%b4) : (tensor<2x1x1xf32>) -> tensor<2x1x1xf32> loc("b_std")
  %b6 = "top.Div"(%b1, %b5) : (tensor<2x3x4xf32>, tensor<2x1x1xf32>) -> tensor<2x3x4xf32> loc("other_axes")
  %c0 = "top.Reduce"(%x) {axes = [2], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32> loc("c_mean")
  %c1 = "top.Sub"(%x, %c0) : (tensor<2x3x4xf32>, tensor<2x3x1xf32>) -> tensor<2x3x4xf32> loc("c_centered")
  %c2 = "top.Mul"(%c1, %c1) : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("c_square")
  %c3 = "top.Reduce"(%c2) {axes = [2], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32> loc("c_var")
  %c4 = "top.AddConst"(%c3) {const_val = 1.0e-05 : f64} : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("c_var_eps")
  %c5 = "top.Sqrt"(%c4) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("c_std")
  %c6 = "top.Div"(%c1, %c5) : (tensor<2x3x4xf32>, tensor<2x3x1xf32>) -> tensor<2x3x4xf32> loc("mean_also_output")
  %d0 = "top.Reduce"(%x) {axes = [2], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32> loc("d_mean")
  %d1 = "top.Sub"(%x, %d0) : (tensor<2x3x4xf32>, tensor<2x3x1xf32>) -> tensor<2x3x4xf32> loc("d_centered")
  %d2 = "top.Pow"(%d1) {exponent = 3.0 : f64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("d_cube")
  %d3 = "top.Reduce"(%d2) {axes = [2], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32> loc("d_var")
  %d4 = "top.AddConst"(%d3) {const_val = 1.0e-05 : f64} : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("d_var_eps")
  %d5 = "top.Sqrt"(%d4) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("d_std")
  %d6 = "top.Div"(%d1, %d5) : (tensor<2x3x4xf32>, tensor<2x3x1xf32>) -> tensor<2x3x4xf32> loc("pow_3")
  %e0 = "top.Reduce"(%x) {axes = [2], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32> loc("e_mean")
  %e1 = "top.Sub"(%x, %e0) : (tensor<2x3x4xf32>, tensor<2x3x1xf32>) -> tensor<2x3x4xf32> loc("e_centered")
  %e2 = "top.Mul"(%e1, %e1) : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32> loc("e_square")
  %e3 = "top.Reduce"(%e2) {axes = [2], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32> loc("e_var")
  %e4 = "top.AddConst"(%e3) {const_val = 1.0e-05 : f64} : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("e_var_eps")
  %e5 = "top.Sqrt"(%e4) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32> loc("e_std")
  %e6 = "top.Div"(%e1, %e5) : (tensor<2x3x4xf32>, tensor<2x3x1xf32>) -> tensor<2x3x4xf32> loc("e_normed")
  %e7 = "top.Mul"(%e6, %g) : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32> loc("gamma_other_shape")
  return %a6, %b6, %c6, %c0, %d6, %e7 : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x1xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

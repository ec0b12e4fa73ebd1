// RUN: tpuc-opt %s --shape-infer | filecheck %s
// Tensor-with-scalar ops keep the input's shape.

// CHECK: "top.AddConst"{{.*}} -> tensor<1x2x3xf32>
// CHECK: "top.SubConst"{{.*}} -> tensor<1x2x3xf32>
// CHECK: "top.MulConst"{{.*}} -> tensor<1x2x3xf32>
// CHECK: "top.DivConst"{{.*}} -> tensor<1x2x3xf32>
// CHECK: "top.MinConst"{{.*}} -> tensor<1x2x3xf32>
// CHECK: "top.MaxConst"{{.*}} -> tensor<1x2x3xf32>
func.func @main(%x: tensor<1x2x3xf32>) -> tensor<*xf32> {
  %0 = "top.AddConst"(%x) {const_val = 1.000000e+00 : f64} : (tensor<1x2x3xf32>) -> tensor<*xf32> loc("add_c")
  %1 = "top.SubConst"(%0) {const_val = 1.000000e+00 : f64, is_reverse = true} : (tensor<*xf32>) -> tensor<*xf32> loc("sub_c")
  %2 = "top.MulConst"(%1) {const_val = 2.000000e+00 : f64, do_relu = true} : (tensor<*xf32>) -> tensor<*xf32> loc("mul_c")
  %3 = "top.DivConst"(%2) {const_val = 4.000000e+00 : f64} : (tensor<*xf32>) -> tensor<*xf32> loc("div_c")
  %4 = "top.MinConst"(%3) {const_val = 3.000000e+00 : f64} : (tensor<*xf32>) -> tensor<*xf32> loc("min_c")
  %5 = "top.MaxConst"(%4) {const_val = -3.000000e+00 : f64} : (tensor<*xf32>) -> tensor<*xf32> loc("max_c")
  func.return %5 : tensor<*xf32>
}

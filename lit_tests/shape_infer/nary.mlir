// RUN: tpuc-opt %s --shape-infer | filecheck %s
// n-ary element-wise ops broadcast all operands like numpy.

// CHECK: "top.Add"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Sub"{{.*}} -> tensor<3x5xf32>
// CHECK: "top.Mul"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Div"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Min"{{.*}} -> tensor<5x6x7xf32>
// CHECK: "top.Max"{{.*}} -> tensor<2x2xf32>
func.func @main(%a: tensor<2x3x4xf32>, %v: tensor<4xf32>, %c31: tensor<3x1xf32>, %r15: tensor<1x5xf32>, %a214: tensor<2x1x4xf32>, %s: tensor<f32>, %p: tensor<5x1x1xf32>, %q: tensor<1x6x1xf32>, %r: tensor<1x1x7xf32>, %m: tensor<2x2xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = "top.Add"(%a, %v) {do_relu = true} : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<*xf32> loc("add")
  %1 = "top.Sub"(%c31, %r15) {is_reverse = true} : (tensor<3x1xf32>, tensor<1x5xf32>) -> tensor<*xf32> loc("sub")
  %2 = "top.Mul"(%a214, %c31, %v) : (tensor<2x1x4xf32>, tensor<3x1xf32>, tensor<4xf32>) -> tensor<*xf32> loc("mul3")
  %3 = "top.Div"(%a, %s) : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<*xf32> loc("div_scalar")
  %4 = "top.Min"(%p, %q, %r) : (tensor<5x1x1xf32>, tensor<1x6x1xf32>, tensor<1x1x7xf32>) -> tensor<*xf32> loc("min3")
  %5 = "top.Max"(%m) : (tensor<2x2xf32>) -> tensor<*xf32> loc("max1")
  func.return %0, %1, %2, %3, %4, %5 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// RUN: tpuc-opt %s --shape-infer | filecheck %s
// Gather: input[:axis] + indices + input[axis+1:] (a rank-0 index, or [1] with keepdims=false,
// removes the axis). Where and Compare broadcast; CompareConst keeps the shape.

// CHECK: "top.Gather"{{.*}} -> tensor<5x2x2x3xf32>
// CHECK: "top.Gather"{{.*}} -> tensor<4x3xf32>
// CHECK: "top.Gather"{{.*}} -> tensor<5x4xf32>
// CHECK: "top.Where"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Where"{{.*}} -> tensor<2x1x4xf32>
// CHECK: "top.Compare"{{.*}} -> tensor<2x3xf32>
// CHECK: "top.CompareConst"{{.*}} -> tensor<2x3xf32>
func.func @main(%x: tensor<5x4x3xf32>, %i22: tensor<2x2xf32>, %i0: tensor<f32>, %i1: tensor<1xf32>, %c: tensor<2x1x4xf32>, %t: tensor<3x1xf32>, %f: tensor<4xf32>, %f14: tensor<1x4xf32>, %l: tensor<2x3xf32>, %r: tensor<3xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %0 = "top.Gather"(%x, %i22) {axis = 1 : i64} : (tensor<5x4x3xf32>, tensor<2x2xf32>) -> tensor<*xf32> loc("gather")
  %1 = "top.Gather"(%x, %i0) {axis = 0 : i64} : (tensor<5x4x3xf32>, tensor<f32>) -> tensor<*xf32> loc("gather_scalar")
  %2 = "top.Gather"(%x, %i1) {axis = -1 : i64, keepdims = false} : (tensor<5x4x3xf32>, tensor<1xf32>) -> tensor<*xf32> loc("gather_drop")
  %3 = "top.Where"(%c, %t, %f) : (tensor<2x1x4xf32>, tensor<3x1xf32>, tensor<4xf32>) -> tensor<*xf32> loc("where")
  %4 = "top.Where"(%c, %none, %f14) {x_is_const = true, x_const_val = 0.000000e+00 : f64} : (tensor<2x1x4xf32>, none, tensor<1x4xf32>) -> tensor<*xf32> loc("where_const_x")
  %5 = "top.Compare"(%l, %r) {mode = "Greater"} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<*xf32> loc("greater")
  %6 = "top.CompareConst"(%l) {mode = "Equal", const_val = 1.000000e+00 : f64} : (tensor<2x3xf32>) -> tensor<*xf32> loc("equal_one")
  func.return %0, %1, %2, %3, %4, %5, %6 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

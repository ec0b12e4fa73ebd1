// RUN: tpuc-opt %s --shape-infer | filecheck %s
// Concat adds up the axis sizes (axis may be negative); Split has one result per part.

// CHECK: "top.Concat"{{.*}} -> tensor<1x6x4xf32>
// CHECK: "top.Concat"{{.*}} -> tensor<2x8xf32>
// CHECK: "top.Split"{{.*}} -> (tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
// CHECK: "top.Split"{{.*}} -> (tensor<1x1x4xf32>, tensor<1x5x4xf32>)
func.func @main(%a: tensor<1x2x4xf32>, %b: tensor<1x3x4xf32>, %c: tensor<1x1x4xf32>, %d: tensor<2x3xf32>, %e: tensor<2x5xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = "top.Concat"(%a, %b, %c) {axis = 1 : i64} : (tensor<1x2x4xf32>, tensor<1x3x4xf32>, tensor<1x1x4xf32>) -> tensor<*xf32> loc("concat3")
  %1 = "top.Concat"(%d, %e) {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<*xf32> loc("concat_last")
  %2:3 = "top.Split"(%0) {axis = 1 : i64, num = 3 : i64} : (tensor<*xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) loc("split_even")
  %3:2 = "top.Split"(%0) {axis = -2 : i64, num = 2 : i64, split_size = [1, 5]} : (tensor<*xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("split_sizes")
  func.return %1, %2#2, %3#1 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

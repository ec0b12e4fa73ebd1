// RUN: tpuc-opt %s --shape-infer | filecheck %s
// Pad's paddings are all begins then all ends; Tile multiplies; Expand broadcasts both ways.

// CHECK: "top.Pad"{{.*}} -> tensor<1x3x8x10xf32>
// CHECK: "top.Pad"{{.*}} -> tensor<1x3x6x6xf32>
// CHECK: "top.Tile"{{.*}} -> tensor<4x9xf32>
// CHECK: "top.Expand"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Expand"{{.*}} -> tensor<3x4xf32>
func.func @main(%x: tensor<1x3x4x4xf32>, %t: tensor<2x3xf32>, %e: tensor<3x1xf32>, %r: tensor<1x4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = "top.Pad"(%x) {paddings = [0, 0, 1, 2, 0, 0, 3, 4]} : (tensor<1x3x4x4xf32>) -> tensor<*xf32> loc("pad")
  %1 = "top.Pad"(%x) {paddings = [0, 0, 1, 1, 0, 0, 1, 1], mode = "reflect"} : (tensor<1x3x4x4xf32>) -> tensor<*xf32> loc("pad_reflect")
  %2 = "top.Tile"(%t) {tile = [2, 3]} : (tensor<2x3xf32>) -> tensor<*xf32> loc("tile")
  %3 = "top.Expand"(%e) {shape = [2, 1, 4]} : (tensor<3x1xf32>) -> tensor<*xf32> loc("expand")
  %4 = "top.Expand"(%r) {shape = [3, 1]} : (tensor<1x4xf32>) -> tensor<*xf32> loc("expand_both_ways")
  func.return %0, %1, %2, %3, %4 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

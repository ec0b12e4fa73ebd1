// RUN: tpuc-opt %s --shape-infer | filecheck %s
// Slice: offset/ends/steps per dim (axes empty) or per listed axis, clamped as ONNX Slice.

// CHECK: "top.Slice"{{.*}} -> tensor<3x8x5xf32>
// CHECK: "top.Slice"{{.*}} -> tensor<10x3x6xf32>
// CHECK: "top.Slice"{{.*}} -> tensor<5x8x6xf32>
func.func @main(%x: tensor<10x8x6xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %0 = "top.Slice"(%x, %none, %none, %none) {offset = [2, 0, 1], ends = [8, 8, 6], steps = [2, 1, 1], axes = []} : (tensor<10x8x6xf32>, none, none, none) -> tensor<*xf32> loc("slice_all_dims")
  %1 = "top.Slice"(%x, %none, %none, %none) {offset = [-3], ends = [100], steps = [1], axes = [1]} : (tensor<10x8x6xf32>, none, none, none) -> tensor<*xf32> loc("slice_tail_clamped")
  %2 = "top.Slice"(%x, %none, %none, %none) {offset = [-1], ends = [-100], steps = [-2], axes = [0]} : (tensor<10x8x6xf32>, none, none, none) -> tensor<*xf32> loc("slice_reverse")
  func.return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

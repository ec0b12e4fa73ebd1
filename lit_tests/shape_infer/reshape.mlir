// RUN: tpuc-opt %s --shape-infer | filecheck %s
// Reshape's `shape` may hold one -1 (inferred) and 0s (copy the input dim), as ONNX Reshape;
// with a shapeT operand instead, the (ranked) result type is kept. Flatten, Squeeze, Unsqueeze.

// CHECK: "top.Reshape"{{.*}} -> tensor<6x4xf32>
// CHECK: "top.Reshape"{{.*}} -> tensor<2x12xf32>
// CHECK: "top.Reshape"{{.*}} -> tensor<4x3x2xf32>
// CHECK: "top.Reshape"{{.*}} -> tensor<24xf32>
// CHECK: "top.Reshape"{{.*}} -> tensor<3x8xf32>
// CHECK: "top.Flatten"{{.*}} -> tensor<2x12xf32>
// CHECK: "top.Flatten"{{.*}} -> tensor<6x4xf32>
// CHECK: "top.Squeeze"{{.*}} -> tensor<3x4xf32>
// CHECK: "top.Squeeze"{{.*}} -> tensor<3x4xf32>
// CHECK: "top.Unsqueeze"{{.*}} -> tensor<1x3x4x1xf32>
// CHECK: "top.Unsqueeze"{{.*}} -> tensor<3x4x1xf32>
func.func @main(%x: tensor<2x3x4xf32>, %shape: tensor<2xf32>, %ones: tensor<1x3x1x4xf32>, %y: tensor<3x4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<3x8xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = "top.Reshape"(%x) {shape = [-1, 4]} : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("reshape_infer")
  %1 = "top.Reshape"(%x) {shape = [0, 12]} : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("reshape_copy")
  %2 = "top.Reshape"(%x) {shape = [4, 0, 2]} : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("reshape_copy_middle")
  %3 = "top.Reshape"(%x) {shape = [24]} : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("reshape_static")
  %4 = "top.Reshape"(%x, %shape) : (tensor<2x3x4xf32>, tensor<2xf32>) -> tensor<3x8xf32> loc("reshape_dynamic")
  %5 = "top.Flatten"(%x) {start_dim = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("flatten_tail")
  %6 = "top.Flatten"(%x) {start_dim = 0 : i64, end_dim = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("flatten_head")
  %7 = "top.Squeeze"(%ones) {axes = [0, -2]} : (tensor<1x3x1x4xf32>) -> tensor<*xf32> loc("squeeze_axes")
  %8 = "top.Squeeze"(%ones) {axes = []} : (tensor<1x3x1x4xf32>) -> tensor<*xf32> loc("squeeze_all")
  %9 = "top.Unsqueeze"(%y) {axes = [0, 3]} : (tensor<3x4xf32>) -> tensor<*xf32> loc("unsqueeze")
  %10 = "top.Unsqueeze"(%y) {axes = [-1]} : (tensor<3x4xf32>) -> tensor<*xf32> loc("unsqueeze_last")
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<3x8xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

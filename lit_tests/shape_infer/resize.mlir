// RUN: tpuc-opt %s --shape-infer | filecheck %s
// Interp scales H and W by scale_h/scale_w (rounded down, as ONNX Resize); with a target_shape
// operand the ranked result type carries the size. Upsample multiplies by integer factors.
// Depth2Space moves channels into blocks (is_inversed: back), NCHW or NHWC on either side.

// CHECK: "top.Interp"{{.*}} -> tensor<1x3x10x3xf32>
// CHECK: "top.Interp"{{.*}} -> tensor<1x3x4x4xf32>
// CHECK: "top.Upsample"{{.*}} -> tensor<1x3x8x15xf32>
// CHECK: "top.Depth2Space"{{.*}} -> tensor<1x2x4x6xf32>
// CHECK: "top.Depth2Space"{{.*}} -> tensor<1x8x2x3xf32>
// CHECK: "top.Depth2Space"{{.*}} -> tensor<1x4x6x2xf32>
// CHECK: "top.Depth2Space"{{.*}} -> tensor<1x2x4x6xf32>
func.func @main(%x: tensor<1x3x5x7xf32>, %size: tensor<4xf32>, %u: tensor<1x3x4x5xf32>, %d: tensor<1x8x2x3xf32>, %s: tensor<1x2x4x6xf32>, %nhwc: tensor<1x2x3x8xf32>) -> (tensor<*xf32>, tensor<1x3x4x4xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %0 = "top.Interp"(%x, %none) {mode = "nearest", coord_mode = "asymmetric", scale_h = 2.000000e+00 : f64, scale_w = 5.000000e-01 : f64} : (tensor<1x3x5x7xf32>, none) -> tensor<*xf32> loc("interp_scale")
  %1 = "top.Interp"(%x, %size) {mode = "linear", coord_mode = "half_pixel"} : (tensor<1x3x5x7xf32>, tensor<4xf32>) -> tensor<1x3x4x4xf32> loc("interp_target")
  %2 = "top.Upsample"(%u) {scale_h = 2 : i64, scale_w = 3 : i64} : (tensor<1x3x4x5xf32>) -> tensor<*xf32> loc("upsample")
  %3 = "top.Depth2Space"(%d) {block_h = 2 : i64, block_w = 2 : i64, is_CRD = true, is_inversed = false} : (tensor<1x8x2x3xf32>) -> tensor<*xf32> loc("d2s")
  %4 = "top.Depth2Space"(%s) {block_h = 2 : i64, block_w = 2 : i64, is_CRD = false, is_inversed = true} : (tensor<1x2x4x6xf32>) -> tensor<*xf32> loc("s2d")
  %5 = "top.Depth2Space"(%d) {block_h = 2 : i64, block_w = 2 : i64, is_CRD = false, is_inversed = false, out_is_NCHW = false} : (tensor<1x8x2x3xf32>) -> tensor<*xf32> loc("d2s_to_nhwc")
  %6 = "top.Depth2Space"(%nhwc) {block_h = 2 : i64, block_w = 2 : i64, is_CRD = false, is_inversed = false, in_is_NCHW = false} : (tensor<1x2x3x8xf32>) -> tensor<*xf32> loc("d2s_from_nhwc")
  func.return %0, %1, %2, %3, %4, %5, %6 : tensor<*xf32>, tensor<1x3x4x4xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// RUN: tpuc-opt %s --shape-infer | filecheck %s
// top.Input with TPU-MLIR's preprocessing attributes keeps the argument's shape.

// CHECK: "top.Input"{{.*}}pixel_format = "bgr"{{.*}} -> tensor<1x3x14x14xf32>
func.func @main(%arg0: tensor<1x3x14x14xf32>) -> tensor<*xf32> {
  %0 = "top.Input"(%arg0) {channel_format = "nchw", keep_aspect_ratio = false, keep_ratio_mode = "letterbox", mean = [0.000000e+00, 0.000000e+00, 0.000000e+00], pad_type = "center", pad_value = 0 : i64, pixel_format = "bgr", resize_dims = [14, 14], scale = [1.000000e+00, 1.000000e+00, 1.000000e+00]} : (tensor<1x3x14x14xf32>) -> tensor<*xf32> loc("input0")
  func.return %0 : tensor<*xf32>
}

// RUN: tpuc-opt %s --shape-infer | filecheck %s
// Pool output size: (in + pads - dilation*(k-1) - 1) / stride + 1, rounded up with ceil_mode,
// but a last window that would start in the end padding is dropped (as PyTorch and onnxruntime do).

// CHECK: "top.MaxPool"{{.*}} -> tensor<1x2x3x3xf32>
// CHECK: "top.MaxPool"{{.*}} -> tensor<1x2x4x4xf32>
// CHECK: "top.MaxPool"{{.*}} -> tensor<1x2x3x3xf32>
// CHECK: "top.AvgPool"{{.*}} -> tensor<1x2xf32>
// CHECK: "top.AvgPool"{{.*}} -> tensor<1x2x3xf32>
// CHECK: "top.AdaptiveAvgPool"{{.*}} -> tensor<1x2x2x3xf32>
// CHECK: "top.MaxPool"{{.*}} -> tensor<1x2x2x2x2xf32>
// 7 + 0 - 2*(3-1) - 1 = 2, so 3 windows:
// CHECK: "top.MaxPool"{{.*}}dilations = [2, 2]{{.*}} -> tensor<1x2x3x3xf32>
// 7 + 1 - 2*(2-1) - 1 = 5, 5/2 rounds up to 3, so 4 windows (the last starts at 6, inside the input):
// CHECK: "top.AvgPool"{{.*}}dilations = [2, 2]{{.*}} -> tensor<1x2x4x4xf32>
// CHECK: "top.MaxPoolWithMask"{{.*}} -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>)
func.func @main(%x: tensor<1x2x7x7xf32>, %x5: tensor<1x2x5x5xf32>, %x1d: tensor<1x2x10xf32>, %x3d: tensor<1x2x4x4x4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = "top.MaxPool"(%x) {kernel_shape = [3, 3], strides = [2, 2], pads = [0, 0, 0, 0]} : (tensor<1x2x7x7xf32>) -> tensor<*xf32> loc("maxpool")
  %1 = "top.MaxPool"(%x) {kernel_shape = [2, 2], strides = [2, 2], ceil_mode = true} : (tensor<1x2x7x7xf32>) -> tensor<*xf32> loc("maxpool_ceil")
  %2 = "top.MaxPool"(%x5) {kernel_shape = [2, 2], strides = [2, 2], pads = [1, 1, 1, 1], ceil_mode = true} : (tensor<1x2x5x5xf32>) -> tensor<*xf32> loc("maxpool_ceil_dropped")
  %3 = "top.AvgPool"(%x) {kernel_shape = [7, 7], keepdims = false} : (tensor<1x2x7x7xf32>) -> tensor<*xf32> loc("global_avg")
  %4 = "top.AvgPool"(%x1d) {kernel_shape = [3], strides = [3], count_include_pad = true} : (tensor<1x2x10xf32>) -> tensor<*xf32> loc("avgpool_1d")
  %5 = "top.AdaptiveAvgPool"(%x) {output_size = [2, 3]} : (tensor<1x2x7x7xf32>) -> tensor<*xf32> loc("adaptive")
  %6 = "top.MaxPool"(%x3d) {kernel_shape = [2, 2, 2], strides = [2, 2, 2]} : (tensor<1x2x4x4x4xf32>) -> tensor<*xf32> loc("maxpool_3d")
  %7 = "top.MaxPool"(%x) {kernel_shape = [3, 3], dilations = [2, 2]} : (tensor<1x2x7x7xf32>) -> tensor<*xf32> loc("maxpool_dilated")
  %8 = "top.AvgPool"(%x) {kernel_shape = [2, 2], strides = [2, 2], dilations = [2, 2], pads = [0, 0, 1, 1], ceil_mode = true} : (tensor<1x2x7x7xf32>) -> tensor<*xf32> loc("avgpool_dilated_ceil")
  %9:2 = "top.MaxPoolWithMask"(%x) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x2x7x7xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("maxpool_mask")
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9#0, %9#1 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

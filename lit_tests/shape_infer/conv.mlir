// RUN: tpuc-opt %s --shape-infer | filecheck %s
// Conv output size: (in + pad_begin + pad_end - dilation*(k-1) - 1) / stride + 1; filter [oc, ic/g, *k].

// CHECK-LABEL: func.func @main
// CHECK: "top.Conv"{{.*}} -> tensor<1x4x4x4xf32>
// CHECK: "top.Conv"{{.*}} -> tensor<1x6x5x5xf32>
// CHECK: "top.Conv"{{.*}} -> tensor<1x2x10x4xf32>
// CHECK: "top.Conv"{{.*}} -> tensor<1x4x4xf32>
// CHECK: "top.Conv"{{.*}} -> tensor<1x2x3x6x6xf32>
// CHECK: "top.Conv"{{.*}} -> tensor<1x4x3x3xf32>
// CHECK: "top.Conv"{{.*}} -> tensor<1x4x8x8xf32>
func.func @main(%x: tensor<1x3x8x8xf32>, %x9: tensor<1x4x9x9xf32>, %x1d: tensor<1x2x10xf32>, %x3d: tensor<1x2x4x6x6xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %w = "top.Weight"() : () -> tensor<4x3x3x3xf32> loc("w")
  %b = "top.Weight"() : () -> tensor<4xf32> loc("b")
  %wg = "top.Weight"() : () -> tensor<6x2x3x3xf32> loc("wg")
  %wa = "top.Weight"() : () -> tensor<2x3x1x3xf32> loc("wa")
  %w1 = "top.Weight"() : () -> tensor<4x2x3xf32> loc("w1")
  %w3 = "top.Weight"() : () -> tensor<2x2x2x3x3xf32> loc("w3")
  %0 = "top.Conv"(%x, %w, %none) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32> loc("conv_s2")
  %1 = "top.Conv"(%x9, %wg, %none) {kernel_shape = [3, 3], group = 2 : i64, dilations = [2, 2]} : (tensor<1x4x9x9xf32>, tensor<6x2x3x3xf32>, none) -> tensor<*xf32> loc("conv_group_dilated")
  %2 = "top.Conv"(%x, %wa, %none) {kernel_shape = [1, 3], strides = [1, 2], pads = [0, 1, 2, 0]} : (tensor<1x3x8x8xf32>, tensor<2x3x1x3xf32>, none) -> tensor<*xf32> loc("conv_asym_pads")
  %3 = "top.Conv"(%x1d, %w1, %none) {kernel_shape = [3], strides = [3], pads = [1, 1]} : (tensor<1x2x10xf32>, tensor<4x2x3xf32>, none) -> tensor<*xf32> loc("conv_1d")
  %4 = "top.Conv"(%x3d, %w3, %none) {kernel_shape = [2, 3, 3], pads = [0, 1, 1, 0, 1, 1]} : (tensor<1x2x4x6x6xf32>, tensor<2x2x2x3x3xf32>, none) -> tensor<*xf32> loc("conv_3d")
  %5 = "top.Conv"(%x, %w, %none) {kernel_shape = [3, 3], strides = [3, 3], auto_pad = "SAME_UPPER"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<*xf32> loc("conv_same")
  %6 = "top.Conv"(%x, %w, %b) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], do_relu = true, relu_limit = 6.0 : f64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<*xf32> loc("conv_bias_relu")
  func.return %0, %1, %2, %3, %4, %5, %6 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

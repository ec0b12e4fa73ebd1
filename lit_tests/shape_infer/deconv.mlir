// RUN: tpuc-opt %s --shape-infer | filecheck %s
// Deconv output size: (in - 1)*stride - pad_begin - pad_end + dilation*(k-1) + output_padding + 1.
// The filter is [ic, oc/g, *k] (ONNX layout) unless dynweight_reorderd, which means [oc, ic/g, *k].

// CHECK: "top.Deconv"{{.*}} -> tensor<1x2x10x10xf32>
// CHECK: "top.Deconv"{{.*}} -> tensor<1x6x7x7xf32>
// CHECK: "top.Deconv"{{.*}} -> tensor<1x6x10x10xf32>
// CHECK: "top.Permute"{{.*}} -> tensor<3x4x3x3xf32>
// CHECK: "top.Deconv"{{.*}}dynweight_reorderd = true{{.*}} -> tensor<1x3x7x7xf32>
func.func @main(%x: tensor<1x4x5x5xf32>, %dyn: tensor<4x3x3x3xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %w_onnx = "top.Weight"() : () -> tensor<4x2x3x3xf32> loc("w_onnx")
  %w_oc = "top.Weight"() : () -> tensor<6x4x3x3xf32> loc("w_oc")
  %w_g = "top.Weight"() : () -> tensor<4x3x2x2xf32> loc("w_g")
  %0 = "top.Deconv"(%x, %w_onnx, %none) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], output_padding = [1, 1]} : (tensor<1x4x5x5xf32>, tensor<4x2x3x3xf32>, none) -> tensor<*xf32> loc("deconv_onnx_layout")
  %1 = "top.Deconv"(%x, %w_oc, %none) {kernel_shape = [3, 3], dynweight_reorderd = true} : (tensor<1x4x5x5xf32>, tensor<6x4x3x3xf32>, none) -> tensor<*xf32> loc("deconv_reordered")
  %2 = "top.Deconv"(%x, %w_g, %none) {kernel_shape = [2, 2], strides = [2, 2], group = 2 : i64} : (tensor<1x4x5x5xf32>, tensor<4x3x2x2xf32>, none) -> tensor<*xf32> loc("deconv_group")
  %p = "top.Permute"(%dyn) {order = [1, 0, 2, 3]} : (tensor<4x3x3x3xf32>) -> tensor<*xf32> loc("deconv_dyn_reorder_permute")
  %3 = "top.Deconv"(%x, %p, %none) {kernel_shape = [3, 3], dynweight_reorderd = true} : (tensor<1x4x5x5xf32>, tensor<*xf32>, none) -> tensor<*xf32> loc("deconv_dyn")
  func.return %0, %1, %2, %3 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// kernel_shape is required.

// CHECK: conv_missing_kernel.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: 'top.Conv' op "conv_nk" requires attribute 'kernel_shape'
func.func @main(%x: tensor<1x3x8x8xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %w = "top.Weight"() : () -> tensor<4x3x3x3xf32> loc("conv_nk_w")
  %0 = "top.Conv"(%x, %w, %none) {strides = [1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x6x6xf32> loc("conv_nk")
  func.return
}

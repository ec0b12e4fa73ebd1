// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// The filter's spatial dims must be kernel_shape.

// CHECK: conv_filter_kernel.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: 'top.Conv' op "conv_k" filter 4x3x5x5 does not match kernel_shape [3, 3]
func.func @main(%x: tensor<1x3x8x8xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %w = "top.Weight"() : () -> tensor<4x3x5x5xf32> loc("conv_k_w")
  %0 = "top.Conv"(%x, %w, %none) {kernel_shape = [3, 3]} : (tensor<1x3x8x8xf32>, tensor<4x3x5x5xf32>, none) -> tensor<1x4x6x6xf32> loc("conv_k")
  func.return
}

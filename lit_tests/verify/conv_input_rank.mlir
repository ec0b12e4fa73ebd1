// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// A 2-D kernel needs a rank-4 input.

// CHECK: conv_input_rank.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: 'top.Conv' op "conv_r" input must have rank 4 for a 2-D kernel_shape, got 3x8x8
func.func @main(%x: tensor<3x8x8xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %w = "top.Weight"() : () -> tensor<4x3x3x3xf32> loc("conv_r_w")
  %0 = "top.Conv"(%x, %w, %none) {kernel_shape = [3, 3]} : (tensor<3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x6x6xf32> loc("conv_r")
  func.return
}

// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// strides need one entry per kernel dim.

// CHECK: conv_strides_length.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: 'top.Conv' op "conv_s" strides has 3 entries, expected 2
func.func @main(%x: tensor<1x3x8x8xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %w = "top.Weight"() : () -> tensor<4x3x3x3xf32> loc("conv_s_w")
  %0 = "top.Conv"(%x, %w, %none) {kernel_shape = [3, 3], strides = [1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x6x6xf32> loc("conv_s")
  func.return
}

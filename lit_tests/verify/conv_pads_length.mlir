// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// pads hold all begins then all ends: 2 entries per kernel dim.

// CHECK: conv_pads_length.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: 'top.Conv' op "conv_p" pads has 2 entries, expected 4
func.func @main(%x: tensor<1x3x8x8xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %w = "top.Weight"() : () -> tensor<4x3x3x3xf32> loc("conv_p_w")
  %0 = "top.Conv"(%x, %w, %none) {kernel_shape = [3, 3], pads = [1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x8x8xf32> loc("conv_p")
  func.return
}

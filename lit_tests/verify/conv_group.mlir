// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// group must divide the channels.

// CHECK: conv_group.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: 'top.Conv' op "conv_g" group 3 must divide input channels 4 and output channels 6
func.func @main(%x: tensor<1x4x8x8xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %w = "top.Weight"() : () -> tensor<6x2x3x3xf32> loc("conv_g_w")
  %0 = "top.Conv"(%x, %w, %none) {kernel_shape = [3, 3], group = 3 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>, none) -> tensor<1x6x6x6xf32> loc("conv_g")
  func.return
}

// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// Conv input channels must equal filter ic/g times group.

// CHECK: conv_channels.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: 'top.Conv' op "conv1" input has 4 channels but filter 8x3x3x3 with group 1 expects 3
func.func @main(%x: tensor<1x4x8x8xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %w = "top.Weight"() : () -> tensor<8x3x3x3xf32> loc("conv1_w")
  %0 = "top.Conv"(%x, %w, %none) {kernel_shape = [3, 3]} : (tensor<1x4x8x8xf32>, tensor<8x3x3x3xf32>, none) -> tensor<1x8x6x6xf32> loc("conv1")
  func.return
}

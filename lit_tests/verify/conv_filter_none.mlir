// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// The filter is not optional.

// CHECK: conv_filter_none.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'top.Conv' op "conv_nf" operand 'filter' must be a tensor, got none
func.func @main(%x: tensor<1x3x8x8xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %0 = "top.Conv"(%x, %none, %none) {kernel_shape = [3, 3]} : (tensor<1x3x8x8xf32>, none, none) -> tensor<1x4x6x6xf32> loc("conv_nf")
  func.return
}

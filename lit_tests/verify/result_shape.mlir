// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// A result type that contradicts the shape rule is rejected.

// CHECK: result_shape.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: 'top.Conv' op "conv_o" result #0 has type tensor<1x4x8x8xf32>, but its operands and attributes give shape 1x4x6x6
func.func @main(%x: tensor<1x3x8x8xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %w = "top.Weight"() : () -> tensor<4x3x3x3xf32> loc("conv_o_w")
  %0 = "top.Conv"(%x, %w, %none) {kernel_shape = [3, 3]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x8x8xf32> loc("conv_o")
  func.return
}

// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// group is an i64, not a string.

// CHECK: conv_attr_kind.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: 'top.Conv' op "conv_gs" attribute 'group' should be i64, got "2"
func.func @main(%x: tensor<1x4x8x8xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %w = "top.Weight"() : () -> tensor<4x2x3x3xf32> loc("conv_gs_w")
  %0 = "top.Conv"(%x, %w, %none) {kernel_shape = [3, 3], group = "2"} : (tensor<1x4x8x8xf32>, tensor<4x2x3x3xf32>, none) -> tensor<1x4x6x6xf32> loc("conv_gs")
  func.return
}

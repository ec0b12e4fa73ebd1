// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// Slice steps must not be 0.

// CHECK: slice_step_zero.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'top.Slice' op "slice" steps must not be 0
func.func @main(%x: tensor<4x4xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %0 = "top.Slice"(%x, %none, %none, %none) {offset = [0], ends = [2], steps = [0], axes = [0]} : (tensor<4x4xf32>, none, none, none) -> tensor<2x4xf32> loc("slice")
  func.return
}

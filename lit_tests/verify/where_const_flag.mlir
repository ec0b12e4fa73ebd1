// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// Where's tbrn is none exactly when x_is_const.

// CHECK: where_const_flag.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'top.Where' op "sel" operand #1 must be a tensor when x_is_const is false
func.func @main(%c: tensor<2x3xf32>, %y: tensor<2x3xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %0 = "top.Where"(%c, %none, %y) : (tensor<2x3xf32>, none, tensor<2x3xf32>) -> tensor<2x3xf32> loc("sel")
  func.return
}

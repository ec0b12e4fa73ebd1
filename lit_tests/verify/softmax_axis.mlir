// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// The softmax axis must be in range.

// CHECK: softmax_axis.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.Softmax' op "prob" axis -3 is out of range for rank 2
func.func @main(%x: tensor<2x3xf32>) {
  %0 = "top.Softmax"(%x) {axis = -3 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("prob")
  func.return
}

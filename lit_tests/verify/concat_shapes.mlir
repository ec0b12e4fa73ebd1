// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// Concat operands must agree outside the axis.

// CHECK: concat_shapes.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.Concat' op "cat2" operand shapes 1x2x3, 1x4x5 differ outside the concat axis 1
func.func @main(%a: tensor<1x2x3xf32>, %b: tensor<1x4x5xf32>) {
  %0 = "top.Concat"(%a, %b) {axis = 1 : i64} : (tensor<1x2x3xf32>, tensor<1x4x5xf32>) -> tensor<1x6x3xf32> loc("cat2")
  func.return
}

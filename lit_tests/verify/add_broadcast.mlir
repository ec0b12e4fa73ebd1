// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// n-ary element-wise operands must broadcast.

// CHECK: add_broadcast.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.Add' op "add" operand shapes 2x3, 4x3 do not broadcast
func.func @main(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) {
  %0 = "top.Add"(%a, %b) : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32> loc("add")
  func.return
}

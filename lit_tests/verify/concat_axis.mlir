// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// The concat axis must be in range.

// CHECK: concat_axis.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.Concat' op "cat" axis 3 is out of range for rank 3
func.func @main(%a: tensor<1x2x3xf32>) {
  %0 = "top.Concat"(%a, %a) {axis = 3 : i64} : (tensor<1x2x3xf32>, tensor<1x2x3xf32>) -> tensor<1x2x6xf32> loc("cat")
  func.return
}

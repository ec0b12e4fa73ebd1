// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// The gather axis must be in range.

// CHECK: gather_axis.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.Gather' op "emb" axis 2 is out of range for rank 2
func.func @main(%x: tensor<5x4xf32>, %i: tensor<3xf32>) {
  %0 = "top.Gather"(%x, %i) {axis = 2 : i64} : (tensor<5x4xf32>, tensor<3xf32>) -> tensor<5x4xf32> loc("emb")
  func.return
}

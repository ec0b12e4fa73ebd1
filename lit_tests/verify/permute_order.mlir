// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// order must be a permutation of the input dims.

// CHECK: permute_order.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.Permute' op "perm" order [0, 1, 1, 3] is not a permutation of the 4 input dims
func.func @main(%x: tensor<1x2x3x4xf32>) {
  %0 = "top.Permute"(%x) {order = [0, 1, 1, 3]} : (tensor<1x2x3x4xf32>) -> tensor<1x2x2x4xf32> loc("perm")
  func.return
}

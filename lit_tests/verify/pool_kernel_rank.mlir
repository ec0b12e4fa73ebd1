// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// A pool's kernel_shape fixes the input rank.

// CHECK: pool_kernel_rank.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.MaxPool' op "pool" input must have rank 5 for a 3-D kernel_shape, got 1x2x8x8
func.func @main(%x: tensor<1x2x8x8xf32>) {
  %0 = "top.MaxPool"(%x) {kernel_shape = [2, 2, 2]} : (tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32> loc("pool")
  func.return
}

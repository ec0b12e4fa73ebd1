// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// Depth2Space needs channels divisible by the block.

// CHECK: depth2space_block.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.Depth2Space' op "d2s" 6 channels are not divisible by the block 2x2
func.func @main(%x: tensor<1x6x2x2xf32>) {
  %0 = "top.Depth2Space"(%x) {block_h = 2 : i64, block_w = 2 : i64, is_CRD = false, is_inversed = false} : (tensor<1x6x2x2xf32>) -> tensor<1x1x4x4xf32> loc("d2s")
  func.return
}

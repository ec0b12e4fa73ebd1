// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// Reshape keeps the element count.

// CHECK: reshape_count.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.Reshape' op "flat" cannot reshape 2x3x4 (24 elements) into 5x5
func.func @main(%x: tensor<2x3x4xf32>) {
  %0 = "top.Reshape"(%x) {shape = [5, 5]} : (tensor<2x3x4xf32>) -> tensor<5x5xf32> loc("flat")
  func.return
}

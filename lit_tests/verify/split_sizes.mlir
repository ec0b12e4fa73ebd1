// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// split_size must add up to the axis size.

// CHECK: split_sizes.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.Split' op "split" split_size [1, 2] must be 2 sizes summing to 4
func.func @main(%x: tensor<4x4xf32>) {
  %0:2 = "top.Split"(%x) {axis = 0 : i64, num = 2 : i64, split_size = [1, 2]} : (tensor<4x4xf32>) -> (tensor<1x4xf32>, tensor<2x4xf32>) loc("split")
  func.return
}

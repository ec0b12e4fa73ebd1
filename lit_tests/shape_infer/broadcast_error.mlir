// RUN: not tpuc-opt %s --shape-infer 2>&1 | filecheck %s
// Shapes that only become known during inference are checked by the same rule as the verifier.

// CHECK: broadcast_error.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: 'top.Add' op "add" operand shapes 1x4, 1x5 do not broadcast
func.func @main(%x: tensor<1x4xf32>, %y: tensor<1x5xf32>) -> tensor<*xf32> {
  %0 = "top.Relu"(%x) : (tensor<1x4xf32>) -> tensor<*xf32> loc("relu_x")
  %1 = "top.Relu"(%y) : (tensor<1x5xf32>) -> tensor<*xf32> loc("relu_y")
  %2 = "top.Add"(%0, %1) : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32> loc("add")
  func.return %2 : tensor<*xf32>
}

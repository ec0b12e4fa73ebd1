// RUN: not tpuc-opt %s --shape-infer 2>&1 | filecheck %s
// A ranked result type that contradicts the shape inferred from upstream is an error at the op.

// CHECK: contradiction.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: 'top.Relu' op "relu2" result #0 has type tensor<1x5xf32>, but its operands and attributes give shape 1x4
// CHECK-NOT: Traceback
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x5xf32> {
  %0 = "top.Relu"(%x) : (tensor<1x4xf32>) -> tensor<*xf32> loc("relu1")
  %1 = "top.Relu"(%0) : (tensor<*xf32>) -> tensor<1x5xf32> loc("relu2")
  func.return %1 : tensor<1x5xf32>
}

// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// MatMul contracting dims must agree.

// CHECK: matmul_contract.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'top.MatMul' op "fc" contracting dims differ: input 2x3 and right 4x5 (after transposes)
func.func @main(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %0 = "top.MatMul"(%a, %b, %none) : (tensor<2x3xf32>, tensor<4x5xf32>, none) -> tensor<2x5xf32> loc("fc")
  func.return
}

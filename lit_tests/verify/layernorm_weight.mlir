// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// LayerNorm weight holds one value per normalized element.

// CHECK: layernorm_weight.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'top.LayerNorm' op "ln" weight has shape 3, expected 4 values (one per channel)
func.func @main(%x: tensor<2x3x4xf32>, %w: tensor<3xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %0 = "top.LayerNorm"(%x, %w, %none) {axis = -1 : i64, eps = 1.000000e-05 : f64} : (tensor<2x3x4xf32>, tensor<3xf32>, none) -> tensor<2x3x4xf32> loc("ln")
  func.return
}

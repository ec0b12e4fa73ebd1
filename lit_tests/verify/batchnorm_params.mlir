// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// BatchNorm statistics hold one value per channel.

// CHECK: batchnorm_params.mlir:[[# @LINE + 5]]:{{[0-9]+}}: error: 'top.BatchNorm' op "bn" operand #2 has shape 4, expected 3 values (one per channel)
func.func @main(%x: tensor<1x3x4x4xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %m = "top.Weight"() : () -> tensor<3xf32> loc("bn_mean")
  %v = "top.Weight"() : () -> tensor<4xf32> loc("bn_var")
  %0 = "top.BatchNorm"(%x, %m, %v, %none, %none) : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<4xf32>, none, none) -> tensor<1x3x4x4xf32> loc("bn")
  func.return
}

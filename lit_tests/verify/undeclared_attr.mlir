// RUN: not tpuc-opt %s --split-input-file 2>&1 | filecheck %s
// Every attribute of an op is declared (Top and Tpu alike): a misspelt one ("dilation") is an
// error, never ignored.

// CHECK: undeclared_attr.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: 'top.Conv' op "conv_typo" has attribute 'dilation', which top.Conv does not define
func.func @main(%x: tensor<1x4x8x8xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %w = "top.Weight"() : () -> tensor<4x4x3x3xf32> loc("conv_typo_w")
  %0 = "top.Conv"(%x, %w, %none) {kernel_shape = [3, 3], dilation = [2, 2]} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, none) -> tensor<1x4x4x4xf32> loc("conv_typo")
  func.return
}

// -----

// CHECK: undeclared_attr.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'tpu.Relu' op "relu" has attribute 'alpha', which tpu.Relu does not define
func.func @main(%x: tensor<4xf32>) {
  %0 = "tpu.Relu"(%x) {alpha = 1.000000e-01 : f64} : (tensor<4xf32>) -> tensor<4xf32> loc("relu")
  func.return
}

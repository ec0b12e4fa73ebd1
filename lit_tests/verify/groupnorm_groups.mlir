// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// num_groups must divide the channels.

// CHECK: groupnorm_groups.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'top.GroupNorm' op "gn" num_groups 4 must divide the 6 channels of 1x6x2x2
func.func @main(%x: tensor<1x6x2x2xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %0 = "top.GroupNorm"(%x, %none, %none) {num_groups = 4 : i64, eps = 1.000000e-05 : f64} : (tensor<1x6x2x2xf32>, none, none) -> tensor<1x6x2x2xf32> loc("gn")
  func.return
}

// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// Only dims of size 1 can be squeezed.

// CHECK: squeeze_not_one.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.Squeeze' op "sq" cannot squeeze axis 1 of size 3 in 1x3
func.func @main(%x: tensor<1x3xf32>) {
  %0 = "top.Squeeze"(%x) {axes = [1]} : (tensor<1x3xf32>) -> tensor<1xf32> loc("sq")
  func.return
}

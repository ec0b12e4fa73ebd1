// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// String enums are checked against TPU-MLIR's values.

// CHECK: reduce_mode.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.Reduce' op "mean" attribute 'mode' is 'ReduceAverage', expected one of ReduceMin, ReduceMax, ReduceMean, ReduceL2, ReduceL1, ReduceSum, ReduceProd
func.func @main(%x: tensor<2x3xf32>) {
  %0 = "top.Reduce"(%x) {axes = [1], keepdims = true, mode = "ReduceAverage"} : (tensor<2x3xf32>) -> tensor<2x1xf32> loc("mean")
  func.return
}

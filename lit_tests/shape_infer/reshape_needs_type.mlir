// RUN: not tpuc-opt %s --shape-infer 2>&1 | filecheck %s
// A Reshape whose shape comes from a tensor operand (no `shape` attribute) needs a ranked result.

// CHECK: error: 'top.Reshape' op "reshape_dyn" result #0: its shape comes from a tensor's value, not from shapes and attributes; give a ranked result type
func.func @main(%x: tensor<2x3xf32>, %s: tensor<2xf32>) -> tensor<*xf32> {
  %0 = "top.Reshape"(%x, %s) : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<*xf32> loc("reshape_dyn")
  func.return %0 : tensor<*xf32>
}

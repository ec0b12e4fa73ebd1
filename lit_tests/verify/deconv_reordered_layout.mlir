// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// With dynweight_reorderd=true the filter must be [oc, ic/g]; an ONNX-layout filter is rejected.

// CHECK: deconv_reordered_layout.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'top.Deconv' op "deconv2" input has 4 channels but filter 4x6x3x3 in layout [oc, ic/g, *k] (dynweight_reorderd=true) expects 6
func.func @main(%x: tensor<1x4x5x5xf32>, %w: tensor<4x6x3x3xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %0 = "top.Deconv"(%x, %w, %none) {kernel_shape = [3, 3], dynweight_reorderd = true} : (tensor<1x4x5x5xf32>, tensor<4x6x3x3xf32>, none) -> tensor<1x6x7x7xf32> loc("deconv2")
  func.return
}

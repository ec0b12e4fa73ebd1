// RUN: not tpuc-opt %s 2>&1 | filecheck %s
// DragGAN: a Deconv filter in [oc, ic] layout without dynweight_reorderd is read as [ic, oc/g].

// CHECK: deconv_layout.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'top.Deconv' op "deconv1" input has 4 channels but filter 6x4x3x3 in layout [ic, oc/g, *k] (dynweight_reorderd=false) expects 6
func.func @main(%x: tensor<1x4x5x5xf32>, %w: tensor<6x4x3x3xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %0 = "top.Deconv"(%x, %w, %none) {kernel_shape = [3, 3]} : (tensor<1x4x5x5xf32>, tensor<6x4x3x3xf32>, none) -> tensor<1x6x7x7xf32> loc("deconv1")
  func.return
}

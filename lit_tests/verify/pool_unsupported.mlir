// RUN: not tpuc-opt %s --split-input-file 2>&1 | filecheck %s
// TPU-MLIR pool attributes whose other values the interpreter does not model are errors.

// CHECK: pool_unsupported.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.AvgPool' op "adaptive" attribute 'is_adaptive' = true is not supported (supported: false)
func.func @main(%x: tensor<1x2x7x7xf32>) {
  %0 = "top.AvgPool"(%x) {kernel_shape = [3, 3], strides = [2, 2], is_adaptive = true} : (tensor<1x2x7x7xf32>) -> tensor<1x2x3x3xf32> loc("adaptive")
  func.return
}

// -----

// CHECK: pool_unsupported.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.MaxPool' op "pad_one" attribute 'pad_value' = 1 is not supported (supported: 0)
func.func @main(%x: tensor<1x2x7x7xf32>) {
  %0 = "top.MaxPool"(%x) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], pad_value = 1 : i64} : (tensor<1x2x7x7xf32>) -> tensor<1x2x7x7xf32> loc("pad_one")
  func.return
}

// -----

// A dilated window can skip the whole input: taps at -3, -1, 1, 3 of a 1-element axis.
// CHECK: pool_unsupported.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.AvgPool' op "hollow" window 0 along spatial axis 0 reads only padding (kernel 4, dilation 2, pads 3/3): its pooled value is not defined
func.func @main(%x: tensor<1x2x1xf32>) {
  %0 = "top.AvgPool"(%x) {kernel_shape = [4], dilations = [2], pads = [3, 3]} : (tensor<1x2x1xf32>) -> tensor<1x2x1xf32> loc("hollow")
  func.return
}

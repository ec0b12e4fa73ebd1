// RUN: not tpuc-opt %s --split-input-file 2>&1 | filecheck %s
// TPU-MLIR attributes (or values of them) that no shape rule or kernel of ours honours are
// errors naming the attribute, never silently ignored.

// CHECK: unmodelled_attrs.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: 'top.Conv' op "conv_ins" inserts [1, 1] (zeros inserted between input pixels) are not supported
func.func @main(%x: tensor<1x4x8x8xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %w = "top.Weight"() : () -> tensor<4x4x3x3xf32> loc("conv_ins_w")
  %0 = "top.Conv"(%x, %w, %none) {kernel_shape = [3, 3], inserts = [1, 1]} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, none) -> tensor<*xf32> loc("conv_ins")
  func.return
}

// -----

// CHECK: unmodelled_attrs.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.Weight' op "inline" attribute 'inline_bytes' is not supported
func.func @main() {
  %0 = "top.Weight"() {inline_bytes = "AAAAAA=="} : () -> tensor<1xf32> loc("inline")
  func.return
}

// -----

// CHECK: unmodelled_attrs.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.Reshape' op "flat" attribute 'flatten_start_dim' = 1 is not supported (supported: -1)
func.func @main(%x: tensor<2x3x4xf32>) {
  %0 = "top.Reshape"(%x) {flatten_start_dim = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32> loc("flat")
  func.return
}

// -----

// CHECK: unmodelled_attrs.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.Slice' op "sl" attribute 'hasparamConvert_axes' = [0] is not supported (supported: [])
func.func @main(%x: tensor<4x4xf32>, %n: none) {
  %0 = "top.Slice"(%x, %n, %n, %n) {offset = [1], ends = [3], steps = [1], axes = [0], hasparamConvert_axes = [0]} : (tensor<4x4xf32>, none, none, none) -> tensor<2x4xf32> loc("sl")
  func.return
}

// -----

// CHECK: unmodelled_attrs.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.Weight' op "scaled" attribute 'scale' is not supported
func.func @main() {
  %0 = "top.Weight"() {scale = [5.000000e-01]} : () -> tensor<1xf32> loc("scaled")
  func.return
}

// -----

// CHECK: unmodelled_attrs.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'top.Conv' op "conv_re" attribute 'dynweight_reorderd' = true is not supported (supported: false)
func.func @main(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %0 = "top.Conv"(%x, %w, %none) {kernel_shape = [3, 3], dynweight_reorderd = true} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, none) -> tensor<1x4x6x6xf32> loc("conv_re")
  func.return
}

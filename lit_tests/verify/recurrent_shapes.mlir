// RUN: not tpuc-opt %s --split-input-file 2>&1 | filecheck %s
// LSTM/GRU operands must have ONNX's shapes for hidden_size and the direction count (LSTM's
// peepholes [dirs, 3 * hidden]); LSTM's
// `cont` (Caffe's continuation flags) is not modelled; an undeclared attribute is an error.

// CHECK: recurrent_shapes.mlir:[[# @LINE + 5]]:{{[0-9]+}}: error: 'top.LSTM' op "bad_filter, h, c" operand #1 has shape 1x16x4, expected 1x24x4
func.func @main(%x: tensor<5x3x4xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %w = "top.Weight"() : () -> tensor<1x16x4xf32> loc("w")
  %r = "top.Weight"() : () -> tensor<1x24x6xf32> loc("r")
  %0:3 = "top.LSTM"(%x, %w, %r, %none, %none, %none, %none) {hidden_size = 6 : i64, bidirectional = false} : (tensor<5x3x4xf32>, tensor<1x16x4xf32>, tensor<1x24x6xf32>, none, none, none, none) -> (tensor<5x1x3x6xf32>, none, none) loc(fused["bad_filter", "h", "c"])
  func.return
}

// -----

// CHECK: recurrent_shapes.mlir:[[# @LINE + 6]]:{{[0-9]+}}: error: 'top.LSTM' op "bad_peephole, h, c" operand #7 has shape 1x24, expected 1x18
func.func @main(%x: tensor<5x3x4xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %w = "top.Weight"() : () -> tensor<1x24x4xf32> loc("w")
  %r = "top.Weight"() : () -> tensor<1x24x6xf32> loc("r")
  %p = "top.Weight"() : () -> tensor<1x24xf32> loc("p")
  %0:3 = "top.LSTM"(%x, %w, %r, %none, %none, %none, %none, %p) {hidden_size = 6 : i64, bidirectional = false} : (tensor<5x3x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>, none, none, none, none, tensor<1x24xf32>) -> (tensor<5x1x3x6xf32>, none, none) loc(fused["bad_peephole", "h", "c"])
  func.return
}

// -----

// CHECK: recurrent_shapes.mlir:[[# @LINE + 5]]:{{[0-9]+}}: error: 'top.GRU' op "bad_state, h" operand #4 has shape 1x3x6, expected 2x3x6
func.func @main(%x: tensor<5x3x4xf32>, %h: tensor<1x3x6xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %w = "top.Weight"() : () -> tensor<2x18x4xf32> loc("w")
  %r = "top.Weight"() : () -> tensor<2x18x6xf32> loc("r")
  %0:2 = "top.GRU"(%x, %w, %r, %none, %h) {hidden_size = 6 : i64, bidirectional = true} : (tensor<5x3x4xf32>, tensor<2x18x4xf32>, tensor<2x18x6xf32>, none, tensor<1x3x6xf32>) -> (tensor<5x2x3x6xf32>, none) loc(fused["bad_state", "h"])
  func.return
}

// -----

// CHECK: recurrent_shapes.mlir:[[# @LINE + 5]]:{{[0-9]+}}: error: 'top.LSTM' op "cont, h, c" operand 'cont' (sequence continuation flags) is not supported: it must be none
func.func @main(%x: tensor<5x3x4xf32>, %cont: tensor<5x3xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %w = "top.Weight"() : () -> tensor<1x24x4xf32> loc("w")
  %r = "top.Weight"() : () -> tensor<1x24x6xf32> loc("r")
  %0:3 = "top.LSTM"(%x, %w, %r, %none, %none, %none, %cont) {hidden_size = 6 : i64, bidirectional = false} : (tensor<5x3x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>, none, none, none, tensor<5x3xf32>) -> (tensor<5x1x3x6xf32>, none, none) loc(fused["cont", "h", "c"])
  func.return
}

// -----

// CHECK: recurrent_shapes.mlir:[[# @LINE + 5]]:{{[0-9]+}}: error: 'top.GRU' op "clipped, h" has attribute 'clip', which top.GRU does not define
func.func @main(%x: tensor<5x3x4xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %w = "top.Weight"() : () -> tensor<1x18x4xf32> loc("w")
  %r = "top.Weight"() : () -> tensor<1x18x6xf32> loc("r")
  %0:2 = "top.GRU"(%x, %w, %r, %none, %none) {hidden_size = 6 : i64, bidirectional = false, clip = 1.0 : f64} : (tensor<5x3x4xf32>, tensor<1x18x4xf32>, tensor<1x18x6xf32>, none, none) -> (tensor<5x1x3x6xf32>, none) loc(fused["clipped", "h"])
  func.return
}

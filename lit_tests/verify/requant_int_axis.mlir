// RUN: not tpuc-opt %s --split-input-file 2>&1 | filecheck %s
// tpu.RequantIntAxis: its declared attributes and operand types are verified, each error names the op.

// CHECK: requant_int_axis.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'tpu.RequantIntAxis' op "no_mode" requires attribute 'quant_mode'
func.func @main(%x: tensor<1x4x2x2xi32>) {
  %q = "top.Weight"() : () -> tensor<1x4x1x3xi32> loc("q")
  %0 = "tpu.RequantIntAxis"(%x, %q) : (tensor<1x4x2x2xi32>, tensor<1x4x1x3xi32>) -> tensor<1x4x2x2x!quant.uniform<i8:f32, 0.5>> loc("no_mode")
  func.return
}

// -----

// CHECK: requant_int_axis.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'tpu.RequantIntAxis' op "bad_axis" rq_axis 4 is not a dim of the 4-d input
func.func @main(%x: tensor<1x4x2x2xi32>) {
  %q = "top.Weight"() : () -> tensor<1x4x1x3xi32> loc("q")
  %0 = "tpu.RequantIntAxis"(%x, %q) {quant_mode = #tpu<rq_mode MultiplierShift>, rq_axis = 4 : i64} : (tensor<1x4x2x2xi32>, tensor<1x4x1x3xi32>) -> tensor<1x4x2x2x!quant.uniform<i8:f32, 0.5>> loc("bad_axis")
  func.return
}

// -----

// CHECK: requant_int_axis.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'tpu.RequantIntAxis' op "fused" fuse_rq_axis=true requantizes along the last dim (3), rq_axis is 1
func.func @main(%x: tensor<1x4x2x2xi32>) {
  %q = "top.Weight"() : () -> tensor<1x4x1x3xi32> loc("q")
  %0 = "tpu.RequantIntAxis"(%x, %q) {quant_mode = #tpu<rq_mode MultiplierShift>, fuse_rq_axis = true} : (tensor<1x4x2x2xi32>, tensor<1x4x1x3xi32>) -> tensor<1x4x2x2x!quant.uniform<i8:f32, 0.5>> loc("fused")
  func.return
}

// -----

// CHECK: requant_int_axis.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'tpu.RequantIntAxis' op "short_quant" quant 1x3x1x3 must hold 3 values (multiplier, -rshift, zero point) for each of the 4 channels along rq_axis 1, last dim 3
func.func @main(%x: tensor<1x4x2x2xi32>) {
  %q = "top.Weight"() : () -> tensor<1x3x1x3xi32> loc("q")
  %0 = "tpu.RequantIntAxis"(%x, %q) {quant_mode = #tpu<rq_mode MultiplierShift>} : (tensor<1x4x2x2xi32>, tensor<1x3x1x3xi32>) -> tensor<1x4x2x2x!quant.uniform<i8:f32, 0.5>> loc("short_quant")
  func.return
}

// -----

// CHECK: requant_int_axis.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'tpu.RequantIntAxis' op "float_in" input must be an integer or quantized tensor, got tensor<1x4x2x2xf32>
func.func @main(%x: tensor<1x4x2x2xf32>) {
  %q = "top.Weight"() : () -> tensor<1x4x1x3xi32> loc("q")
  %0 = "tpu.RequantIntAxis"(%x, %q) {quant_mode = #tpu<rq_mode MultiplierShift>} : (tensor<1x4x2x2xf32>, tensor<1x4x1x3xi32>) -> tensor<1x4x2x2x!quant.uniform<i8:f32, 0.5>> loc("float_in")
  func.return
}

// -----

// CHECK: requant_int_axis.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'tpu.RequantIntAxis' op "i8_quant" quant must be an i32 tensor, got tensor<1x4x1x3xi8>
func.func @main(%x: tensor<1x4x2x2xi32>) {
  %q = "top.Weight"() : () -> tensor<1x4x1x3xi8> loc("q")
  %0 = "tpu.RequantIntAxis"(%x, %q) {quant_mode = #tpu<rq_mode MultiplierShift>} : (tensor<1x4x2x2xi32>, tensor<1x4x1x3xi8>) -> tensor<1x4x2x2x!quant.uniform<i8:f32, 0.5>> loc("i8_quant")
  func.return
}

// -----

// CHECK: requant_int_axis.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'tpu.RequantIntAxis' op "per_axis_out" result has a per-axis type: the per-channel parameters are the quant operand
func.func @main(%x: tensor<1x2x2x2xi32>) {
  %q = "top.Weight"() : () -> tensor<1x2x1x3xi32> loc("q")
  %0 = "tpu.RequantIntAxis"(%x, %q) {quant_mode = #tpu<rq_mode MultiplierShift>} : (tensor<1x2x2x2xi32>, tensor<1x2x1x3xi32>) -> tensor<1x2x2x2x!quant.uniform<i8:f32:1, {0.5, 0.25}>> loc("per_axis_out")
  func.return
}

// -----

// CHECK: requant_int_axis.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'tpu.RequantIntAxis' op "bad_round" attribute 'round_mode' should be tpu.round_mode, got #tpu<round_mode Nearest>
func.func @main(%x: tensor<1x4x2x2xi32>) {
  %q = "top.Weight"() : () -> tensor<1x4x1x3xi32> loc("q")
  %0 = "tpu.RequantIntAxis"(%x, %q) {quant_mode = #tpu<rq_mode MultiplierShift>, round_mode = #tpu<round_mode Nearest>} : (tensor<1x4x2x2xi32>, tensor<1x4x1x3xi32>) -> tensor<1x4x2x2x!quant.uniform<i8:f32, 0.5>> loc("bad_round")
  func.return
}

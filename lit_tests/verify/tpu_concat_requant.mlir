// RUN: not tpuc-opt %s --split-input-file 2>&1 | filecheck %s
// tpu.Concat's per-input requantization (TPU-MLIR's multipliers/rshifts, CV18xx's INT8 Concat) is
// not modelled: the Tpu kernel and the cmodel copy the int8 values, so any value is an error
// rather than a requantization silently skipped. tpudsl's INT8 lowering requantizes an input
// through its own tpu.RequantInt instead (docs/quantization.md); its Concats, without these
// attributes, pass (lit_tests/verify/moves_element_type_ok.mlir, lowering/).

// CHECK: tpu_concat_requant.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'tpu.Concat' op "c" attribute 'multipliers' is not supported
func.func @main(%a: tensor<1x2x4x4x!quant.uniform<i8:f32, 0.5>>, %b: tensor<1x2x4x4x!quant.uniform<i8:f32, 0.5>>) {
  %0 = "tpu.Concat"(%a, %b) {axis = 1 : i64, multipliers = [3, 1], rshifts = [1, 0]} : (tensor<1x2x4x4x!quant.uniform<i8:f32, 0.5>>, tensor<1x2x4x4x!quant.uniform<i8:f32, 0.5>>) -> tensor<1x4x4x4x!quant.uniform<i8:f32, 0.5>> loc("c")
  func.return
}

// -----

// CHECK: tpu_concat_requant.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'tpu.Concat' op "r" attribute 'rshifts' is not supported
func.func @main(%a: tensor<1x2x4x4x!quant.uniform<i8:f32, 0.5>>, %b: tensor<1x2x4x4x!quant.uniform<i8:f32, 0.5>>) {
  %0 = "tpu.Concat"(%a, %b) {axis = 1 : i64, rshifts = [0, 0]} : (tensor<1x2x4x4x!quant.uniform<i8:f32, 0.5>>, tensor<1x2x4x4x!quant.uniform<i8:f32, 0.5>>) -> tensor<1x4x4x4x!quant.uniform<i8:f32, 0.5>> loc("r")
  func.return
}


// Quant types are verified when parsed: each bad one is one error line at its position (the
// offending token, or the start of the type for checks of the whole type), exit 1.
// RUN: not tpuc-opt %s --split-input-file 2>&1 | filecheck %s

// CHECK: quant_type_errors.mlir:[[# @LINE + 1]]:61: error: scale -0.5 out of expressed type range
%0 = "top.Weight"() : () -> tensor<2x!quant.uniform<i8:f32, -0.5>>

// -----
// Zero points must lie in the storage range (upstream MLIR does not check this).
// CHECK: quant_type_errors.mlir:[[# @LINE + 1]]:29: error: quant: zero point -128 outside the storage range [-127, 127]
%0 = "top.Weight"() : () -> tensor<2x!quant.uniform<i8<-127:127>:f32, 0.5:-128>>

// -----
// CHECK: quant_type_errors.mlir:[[# @LINE + 1]]:58: error: illegal storage type maximum: 256
%0 = "top.Weight"() : () -> tensor<2x!quant.uniform<u8<0:256>:f32, 0.5>>

// -----
// CHECK: quant_type_errors.mlir:[[# @LINE + 1]]:29: error: quant: illegal min and max: (3.0:-1.0)
%0 = "top.Weight"() : () -> tensor<2x!quant.calibrated<f32<3.0:-1.0>>>

// -----
// CHECK: quant_type_errors.mlir:[[# @LINE + 1]]:60: error: sub-channel quantization (block sizes) is not modelled
%0 = "top.Weight"() : () -> tensor<2x!quant.uniform<i8:f32:{0:1}, {{2.0}}>>

// INT8 forms of AddConst, SubConst (also reversed) and Gather with constant indices, and where
// Gather must not fire (indices that are not a weight: F32 fallback). Constants: docs/quantization.md.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; np.savez('%t/m_weight.npz', gi=np.array([1.0], np.float32))"
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%S/Inputs/int8_consts_cali_table asymmetric=false" --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu --mlir-print-debuginfo -o %t/out.mlir
// RUN: filecheck %s < %t/out.mlir
// Every output close to Top's (the Tpu interpreter runs the integer kernels).
// RUN: python -c "import numpy as np; np.savez('%t/in.npz', x=(np.sin(np.arange(32, dtype=np.float32)) * 0.99).reshape(1, 2, 4, 4), idx=np.array([1.0], np.float32))"
// RUN: model_runner --input %t/in.npz --model %t/m.mlir --output %t/top.npz
// RUN: model_runner --input %t/in.npz --model %t/out.mlir --output %t/int8.npz
// RUN: npz_tool compare %t/int8.npz %t/top.npz --tolerance 0.999,0.97 | filecheck %s --check-prefix=SAME
// SAME: npz compare PASSED.

// CHECK: %[[X:[0-9]+]] = "tpu.Cast"(%0) : {{.*}} -> tensor<1x2x4x4x!quant.uniform<i8:f32, 0.0078740157480314959>>
// g2's input requantized to its threshold 2.0 first: scale_and_shift(1.0 / 2.0) = (1, 1).
// CHECK: %[[R:[0-9]+]] = "tpu.RequantInt"(%[[X]]) {multiplier = [1], {{.*}}rshift = [1]} : {{.*}} -> tensor<1x2x4x4x!quant.uniform<i8:f32, 0.015748031496062992>>
// x + 0.5: scale_and_shift(1 / 1.5) = (11184811, 24); C = round(0.5 * 127 / 1.5 * 2^24) = 710235477 (0x41C52AAAAA800000).
// CHECK: "tpu.AddConst"(%[[X]]) {const_val = 0x41C52AAAAA800000 : f64, multiplier = 11184811 : i64, rshift = 24 : i64} : {{.*}} -> tensor<1x2x4x4x!quant.uniform<i8:f32, 0.011811023622047244>>
// x - 0.25: scale_and_shift(1 / 1.25) = (13421773, 24); C = round(0.25 * 127 / 1.25 * 2^24) = 426141286 (0x41B9666666000000).
// CHECK: "tpu.SubConst"(%[[X]]) {const_val = 0x41B9666666000000 : f64, multiplier = 13421773 : i64, rshift = 24 : i64}
// 1 - x: scale_and_shift(1 / 2) = (1, 1), the first shift without error; C = round(1 * 127 / 2 * 2) = 127.
// CHECK: "tpu.SubConst"(%[[X]]) {const_val = 1.270000e+02 : f64, is_reverse = true, multiplier = 1 : i64, rshift = 1 : i64} : {{.*}} -> tensor<1x2x4x4x!quant.uniform<i8:f32, 0.015748031496062992>>
// Gather with constant indices: the int8 values keep their type when the output's threshold is the input's,
// CHECK: "tpu.Gather"(%[[X]], %[[GI:[0-9]+]], %{{[0-9]+}}) {{.*}} -> tensor<1x1x4x4x!quant.uniform<i8:f32, 0.0078740157480314959>>
// and come requantized when it is not.
// CHECK: "tpu.Gather"(%[[R]], %[[GI]], %{{[0-9]+}}) {{.*}} -> tensor<1x1x4x4x!quant.uniform<i8:f32, 0.015748031496062992>>
// Must not: indices that are not a weight stay F32.
// CHECK: "tpu.Gather"(%0, %{{[0-9]+}}, %{{[0-9]+}}) {{.*}} -> tensor<1x1x4x4xf32>
// CHECK-DAG: loc("ac_int8")
// CHECK-DAG: loc("sc_int8")
// CHECK-DAG: loc("rc_int8")
// CHECK-DAG: loc("g_int8")
// CHECK-DAG: loc("g2_int8")
// CHECK-DAG: loc("gx")
module attributes {module.name = "m", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x2x4x4xf32>, %arg1: tensor<1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) {
    %0 = "top.Input"(%arg0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("x")
    %1 = "top.Input"(%arg1) : (tensor<1xf32>) -> tensor<1xf32> loc("idx")
    %2 = "top.Weight"() : () -> tensor<1xf32> loc("gi")
    %3 = "top.AddConst"(%0) {const_val = 5.000000e-01 : f64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("ac")
    %4 = "top.SubConst"(%0) {const_val = 2.500000e-01 : f64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("sc")
    %5 = "top.SubConst"(%0) {const_val = 1.000000e+00 : f64, is_reverse = true} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("rc")
    %6 = "top.Gather"(%0, %2) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32> loc("g")
    %7 = "top.Gather"(%0, %2) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32> loc("g2")
    %8 = "top.Gather"(%0, %1) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1xf32>) -> tensor<1x1x4x4xf32> loc("gx")
    return %3, %4, %5, %6, %7, %8 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
  }
}

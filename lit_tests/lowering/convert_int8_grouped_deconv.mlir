// A grouped INT8 Deconv (docs/quantization.md, "INT8 lowering"): the filter per output channel
// (group, column) as plain i8, the Deconv summing into int32 (`<name>_int32`, multipliers 1, shifts
// 0), a tpu.RequantIntAxis along C with quant rows (m, -rshift, zp). Must not fire: a fused relu
// with a limit (no int32 form; F32), a group-1 Deconv (per-axis filter type, no RequantIntAxis).
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; np.savez('%t/m_weight.npz', wg=np.array([0.5, -1.0, 0.25, 0.125, 1.0, -0.5, 0.75, 0.25, 0.2, 0.1, -0.05, 0.4], np.float32).reshape(3, 1, 2, 2), wd=np.array([1.0, -2.0, 0.5, 0.25] * 3, np.float32).reshape(3, 1, 2, 2), b=np.array([0.5, -0.25, 0.125], np.float32))"
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%S/Inputs/int8_grouped_deconv_cali_table asymmetric=false" --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu --mlir-print-debuginfo -o %t/out.mlir
// RUN: filecheck %s < %t/out.mlir
// The filter per channel at max|w_c| / 127 (1, 1, 0.4): round_half_away(w / s_w), the division in float64
// (0.2 / (0.4 / 127) = 63.4999...: 63); the bias at s_w s_in;
// quant rows of scale_and_shift(s_w s_in / s_out): s_in = 1/127, s_out = 2/127.
// RUN: python -c "import numpy as np; w = np.load('%t/out_weight.npz'); print('FILTER', w['wg_int8'].ravel().tolist()); print('BIAS', w['b_int32'].ravel().tolist()); print('QUANT', w['decg_quant'].reshape(-1, 3).tolist())" | filecheck %s --check-prefix=W
// W: FILTER [64, -127, 32, 16, 127, -64, 95, 32, 63, 32, -16, 127]
// W: BIAS [8065, -4032, 5040]
// W: QUANT {{\[}}[2113665, -29, 0], [2113665, -29, 0], [422733, -28, 0]]
// The Tpu interpreter's result is close to Top's.
// RUN: python -c "import numpy as np; np.savez('%t/in.npz', x=(np.sin(np.arange(48, dtype=np.float32)) * 0.99).reshape(1, 3, 4, 4))"
// RUN: model_runner --input %t/in.npz --model %t/m.mlir --output %t/top.npz
// RUN: model_runner --input %t/in.npz --model %t/out.mlir --output %t/int8.npz
// RUN: npz_tool compare %t/int8.npz %t/top.npz --tolerance 0.99,0.9 | filecheck %s --check-prefix=SAME
// SAME: npz compare PASSED.

// CHECK: %[[X:[0-9]+]] = "tpu.Cast"(%0) : {{.*}} -> tensor<1x3x4x4x!quant.uniform<i8:f32, 0.0078740157480314959>>
// CHECK: %[[WG:[0-9]+]] = "top.Weight"() : () -> tensor<3x1x2x2xi8>
// CHECK: %[[ACC:[0-9]+]] = "tpu.Deconv"(%[[X]], %[[WG]], %{{[0-9]+}}) {group = 3 : i64, kernel_shape = [2, 2], multiplier = [1, 1, 1], pads = [0, 0, 0, 0], quant_mode = #tpu<rq_mode MultiplierShift>, rshift = [0, 0, 0], strides = [2, 2], with_bias = true} : {{.*}} -> tensor<1x3x8x8xi32> loc(#[[LACC:loc[0-9]+]])
// CHECK: %[[Q:[0-9]+]] = "top.Weight"() : () -> tensor<1x3x1x3xi32>
// CHECK: "tpu.RequantIntAxis"(%[[ACC]], %[[Q]]) {quant_mode = #tpu<rq_mode MultiplierShift>, round_mode = #tpu<round_mode HalfUp>, rq_axis = 1 : i64} : (tensor<1x3x8x8xi32>, tensor<1x3x1x3xi32>) -> tensor<1x3x8x8x!quant.uniform<i8:f32, 0.015748031496062992>> loc(#[[LRQ:loc[0-9]+]])
// Must not: with relu_limit the grouped Deconv stays F32.
// CHECK: "tpu.Deconv"(%0, %{{[0-9]+}}, %{{[0-9]+}}) {do_relu = true, group = 3 : i64, {{.*}}relu_limit = 6.000000e+00 : f64{{.*}} -> tensor<1x3x8x8xf32>
// CHECK-NOT: RequantIntAxis
// CHECK-DAG: #[[LACC]] = loc("decg_int32")
// CHECK-DAG: #[[LRQ]] = loc("decg_int8")
module attributes {module.name = "m", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x3x4x4xf32>) -> (tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>) {
    %0 = "top.Input"(%arg0) : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> loc("x")
    %1 = "top.Weight"() : () -> tensor<3x1x2x2xf32> loc("wg")
    %2 = "top.Weight"() : () -> tensor<3x1x2x2xf32> loc("wd")
    %3 = "top.Weight"() : () -> tensor<3xf32> loc("b")
    %4 = "top.None"() : () -> none loc("none")
    %5 = "top.Deconv"(%0, %1, %3) {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0], group = 3 : i64} : (tensor<1x3x4x4xf32>, tensor<3x1x2x2xf32>, tensor<3xf32>) -> tensor<1x3x8x8xf32> loc("decg")
    %6 = "top.Deconv"(%0, %2, %4) {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0], group = 3 : i64, do_relu = true, relu_limit = 6.0 : f64} : (tensor<1x3x4x4xf32>, tensor<3x1x2x2xf32>, none) -> tensor<1x3x8x8xf32> loc("decr")
    return %5, %6 : tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>
  }
}

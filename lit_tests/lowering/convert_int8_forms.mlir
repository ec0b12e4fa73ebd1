// INT8 forms of Sub, MulConst, AvgPool without counted pads, Deconv, Softmax and MatMul (per tensor, and per
// column with matmul_perchannel=true), and where each must not fire (Sub with coeff, AvgPool with
// ceil_mode counting explicit pads next to its overhang: F32 fallback; a grouped Deconv: int32 sums + RequantIntAxis, convert_int8_grouped_deconv.mlir).
// Multipliers: docs/quantization.md's formulas.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; np.savez('%t/m_weight.npz', wc=np.array([0.5, -0.25, 0.75, 1.0], np.float32).reshape(2, 2, 1, 1), wd=(np.arange(16, dtype=np.float32).reshape(2, 2, 2, 2) - 7.5) / 8, wg=np.array([0.5, -1.0, 0.25, 0.125, 1.0, -0.5, 0.75, 0.25], np.float32).reshape(2, 1, 2, 2), wm=np.array([[1.0, 0.01, -0.5], [-1.0, 0.02, 0.25], [0.5, -0.03, 0.1], [0.25, 0.04, -0.2]], np.float32))"
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%S/Inputs/int8_forms_cali_table asymmetric=false" --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu -o %t/out.mlir
// RUN: filecheck %s < %t/out.mlir
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%S/Inputs/int8_forms_cali_table asymmetric=false" --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu="matmul_perchannel=true" -o %t/pc.mlir
// RUN: filecheck %s --check-prefix=PC < %t/pc.mlir
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%S/Inputs/int8_forms_cali_table asymmetric=false" --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu --mlir-print-debuginfo -o %t/loc.mlir
// RUN: filecheck %s --check-prefix=LOC < %t/loc.mlir
// Every output close to Top's (the Tpu interpreter runs the integer kernels).
// RUN: python -c "import numpy as np; np.savez('%t/in.npz', x=(np.sin(np.arange(32, dtype=np.float32)) * 0.99).reshape(1, 2, 4, 4))"
// RUN: model_runner --input %t/in.npz --model %t/m.mlir --output %t/top.npz
// RUN: model_runner --input %t/in.npz --model %t/out.mlir --output %t/int8.npz
// RUN: model_runner --input %t/in.npz --model %t/pc.mlir --output %t/pc.npz
// RUN: npz_tool compare %t/int8.npz %t/top.npz --tolerance 0.999,0.97 | filecheck %s --check-prefix=SAME
// RUN: npz_tool compare %t/pc.npz %t/top.npz --tolerance 0.999,0.97 | filecheck %s --check-prefix=SAME
// SAME: npz compare PASSED.

// CHECK: %[[X:[0-9]+]] = "tpu.Cast"(%0) : {{.*}} -> tensor<1x2x4x4x!quant.uniform<i8:f32, 0.0078740157480314959>>
// CHECK: %[[C:[0-9]+]] = "tpu.Conv2D"(%[[X]]
// Sub: Add's constants, r = (1/127)/(0.75/127) = 4/3 and 1 with one shift 30.
// CHECK: "tpu.Sub"(%[[X]], %[[C]]) {multipliers = [1431655808, 1073741824], rshifts = [30, 30]} : {{.*}} -> tensor<1x2x4x4x!quant.uniform<i8:f32, 0.005905511811023622>>
// Must not: Sub with a coefficient stays F32.
// CHECK: "tpu.Sub"(%0, %{{[0-9]+}}) {coeff = [1.000000e+00, 2.000000e+00]} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// AvgPool with pads not counted: the full window's multiplier/rshift of 1 / (0.37 * 9) and scale = float32(1 / 0.37).
// CHECK: "tpu.Pool2D"(%[[X]]) {count_include_pad = false, kernel_shape = [3, 3], multiplier = 5038203 : i64, pads = [1, 1, 1, 1], pool_mode = #tpu<pool_mode Avg>, rshift = 24 : i64, scale = 2.7027027606964111 : f64, strides = [1, 1]} : {{.*}} -> tensor<1x2x4x4x!quant.uniform<i8:f32, 0.0029133858267716534>>
// AvgPool with ceil_mode (rows and columns 4 - 3 = 1 rounded up to 2 windows, the last reaching one
// past the end): the end pads grown by it, never counted, so the same per-position form as "avg".
// CHECK: "tpu.Pool2D"(%[[X]]) {kernel_shape = [3, 3], multiplier = 5038203 : i64, pads = [0, 0, 1, 1], pool_mode = #tpu<pool_mode Avg>, rshift = 24 : i64, scale = 2.7027027606964111 : f64, strides = [2, 2]} : {{.*}} -> tensor<1x2x2x2x!quant.uniform<i8:f32, 0.0029133858267716534>>
// Must not: an AvgPool counting explicit pads next to an overhang (ceil_overhang) stays F32.
// CHECK: "tpu.Pool2D"(%0) {ceil_overhang = [1, 1], count_include_pad = true, {{.*}} -> tensor<1x2x3x3xf32>
// Deconv: the [ic, oc, kh, kw] filter per output channel (axis 1), max|w| = 0.9375.
// CHECK: %[[WD:[0-9]+]] = "top.Weight"() : () -> tensor<2x2x2x2x!quant.uniform<i8<-127:127>:f32:1, {0.0073818897637795275,0.0073818897637795275}>>
// CHECK: "tpu.Deconv"(%[[X]], %[[WD]], %{{[0-9]+}}) {kernel_shape = [2, 2], multiplier = [1981561, 1981561], {{.*}}rshift = [28, 28]{{.*}} -> tensor<1x2x8x8x!quant.uniform<i8:f32, 0.0078740157480314959>>
// A grouped Deconv sums into int32, then a RequantIntAxis per output channel.
// CHECK: %[[DG:[0-9]+]] = "tpu.Deconv"(%[[X]], %{{[0-9]+}}, %{{[0-9]+}}) {group = 2 : i64, {{.*}} -> tensor<1x2x8x8xi32>
// CHECK: "tpu.RequantIntAxis"(%[[DG]], %{{[0-9]+}}) {{.*}} -> tensor<1x2x8x8x!quant.uniform<i8:f32, 0.0078740157480314959>>
// Softmax: an int32 exp table on the int8 differences from the max.
// CHECK: %[[T:[0-9]+]] = "top.Weight"() : () -> tensor<256xi32>
// CHECK: "tpu.Softmax"(%[[X]], %[[T]], {{.*}} -> tensor<1x2x4x4x!quant.uniform<i8:f32, 0.0078740157480314959>>
// MatMul per tensor by default: one multiplier, the weight at max|w|/127 = 1/127.
// CHECK: "tpu.MatMul"(%[[X]], %{{[0-9]+}}, {{.*}}multipliers = [6039043], {{.*}}rshifts = [28]} : (tensor<1x2x4x4x!quant.uniform<i8:f32, 0.0078740157480314959>>, tensor<4x3x!quant.uniform<i8:f32, 0.0078740157480314959>>
// MulConst: one multiplier of s_in c / s_out = (1/127) (-1.5) / (1.5/127) = -1 exactly: (-1, 0), the first shift without error.
// CHECK: "tpu.MulConst"(%[[X]]) {const_val = -1.500000e+00 : f64, multiplier = -1 : i64, rshift = 0 : i64} : {{.*}} -> tensor<1x2x4x4x!quant.uniform<i8:f32, 0.011811023622047244>>
// PC: "tpu.MatMul"({{.*}}multipliers = [6039043, 966247, 6039043], {{.*}}rshifts = [28, 30, 29]} : ({{.*}}, tensor<4x3x!quant.uniform<i8<-127:127>:f32:1, {0.0078740157480314959,3.1496062288134116E-4,0.003937007874015748}>>
// LOC-DAG: loc("sub_int8")
// LOC-DAG: loc("avg_int8")
// LOC-DAG: loc("dec_int8")
// LOC-DAG: loc("soft_int8")
// LOC-DAG: loc("soft_table")
// LOC-DAG: loc("wd_int8")
// LOC-DAG: loc("subc")
// LOC-DAG: loc("decg")
module attributes {module.name = "m", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x2x2xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x3xf32>, tensor<1x2x4x4xf32>, tensor<1x2x3x3xf32>) {
    %0 = "top.Input"(%arg0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("x")
    %1 = "top.Weight"() : () -> tensor<2x2x1x1xf32> loc("wc")
    %2 = "top.Weight"() : () -> tensor<2x2x2x2xf32> loc("wd")
    %3 = "top.Weight"() : () -> tensor<2x1x2x2xf32> loc("wg")
    %4 = "top.Weight"() : () -> tensor<4x3xf32> loc("wm")
    %5 = "top.None"() : () -> none loc("none")
    %6 = "top.Conv"(%0, %1, %5) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0]} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x4x4xf32> loc("c")
    %7 = "top.Sub"(%0, %6) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("sub")
    %8 = "top.Sub"(%0, %6) {coeff = [1.000000e+00, 2.000000e+00]} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("subc")
    %9 = "top.AvgPool"(%0) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], count_include_pad = false} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("avg")
    %10 = "top.AvgPool"(%0) {kernel_shape = [3, 3], strides = [2, 2], pads = [0, 0, 0, 0], ceil_mode = true} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> loc("avgc")
    %16 = "top.AvgPool"(%0) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], ceil_mode = true, count_include_pad = true} : (tensor<1x2x4x4xf32>) -> tensor<1x2x3x3xf32> loc("avgcp")
    %11 = "top.Deconv"(%0, %2, %5) {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0]} : (tensor<1x2x4x4xf32>, tensor<2x2x2x2xf32>, none) -> tensor<1x2x8x8xf32> loc("dec")
    %12 = "top.Deconv"(%0, %3, %5) {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0], group = 2 : i64} : (tensor<1x2x4x4xf32>, tensor<2x1x2x2xf32>, none) -> tensor<1x2x8x8xf32> loc("decg")
    %13 = "top.Softmax"(%0) {axis = 1 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("soft")
    %14 = "top.MatMul"(%0, %4, %5) : (tensor<1x2x4x4xf32>, tensor<4x3xf32>, none) -> tensor<1x2x4x3xf32> loc("mm")
    %15 = "top.MulConst"(%0) {const_val = -1.500000e+00 : f64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("mc")
    return %7, %8, %9, %10, %11, %12, %13, %14, %15, %16 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x2x2xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x3xf32>, tensor<1x2x4x4xf32>, tensor<1x2x3x3xf32>
  }
}

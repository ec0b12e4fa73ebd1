// --convert-top-to-tpu in INT8 after --import-calibration-table (symmetric): scale = threshold / 127.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; np.savez('%t/m_weight.npz', w=np.array([0.5, -1.27, 0.3], np.float32).reshape(3, 1, 1, 1), b=np.array([0.1, -0.2, 0.0], np.float32))"
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%S/Inputs/int8_cali_table asymmetric=false" --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu -o %t/out.mlir
// RUN: filecheck %s < %t/out.mlir
// RUN: filecheck %s --check-prefix=WEIGHTS < %t/out.mlir
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%S/Inputs/int8_cali_table asymmetric=false" --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu --mlir-print-debuginfo -o %t/loc.mlir
// RUN: filecheck %s --check-prefix=LOC < %t/loc.mlir
// The Tpu interpreter takes Top's f32 input and writes f32 outputs under the Top names, close to Top's.
// RUN: python -c "import numpy as np; np.savez('%t/in.npz', x=np.array([0.5, -1.0, 1.2, 0.01], np.float32).reshape(1, 1, 2, 2))"
// RUN: model_runner --input %t/in.npz --model %t/m.mlir --output %t/top.npz
// RUN: model_runner --input %t/in.npz --model %t/out.mlir --output %t/int8.npz
// RUN: npz_tool compare %t/int8.npz %t/top.npz --tolerance 0.99,0.9 | filecheck %s --check-prefix=SAME
// SAME: npz compare PASSED.

// The input is cast to int8 at 1.27 / 127 = 0.01.
// CHECK: %[[X:[0-9]+]] = "tpu.Cast"(%0) : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2x!quant.uniform<i8:f32, 1.000000e-02>>
// Per-channel int8 filter (s_w = max|w_c| / 127), int32 bias round(b / (s_w s_in)):
// 0.1 / (0.5/127 * 0.01) = 2540, -0.2 / (1.27/127 * 0.01) = -2000, 0 / ... = 0.
// Multipliers and shifts: tests/test_requant.py's Fraction reference ref_scale_and_shift of
// s_w s_in / s_out = 0.5/254, 1.27/254, 0.3/254 (s_out = 2.54 / 127): n = 30, the last candidate.
// CHECK: %[[C:[0-9]+]] = "tpu.Conv2D"(%[[X]], %{{[0-9]+}}, %{{[0-9]+}}) {{{.*}}multiplier = [2113665, 5368709, 1268199], {{.*}}quant_mode = #tpu<rq_mode MultiplierShift>, {{.*}}rshift = [30, 30, 30]{{.*}} : (tensor<1x1x2x2x!quant.uniform<i8:f32, 1.000000e-02>>, tensor<3x1x1x1x!quant.uniform<i8<-127:127>:f32:0, {{.*}}>>, tensor<3xi32>) -> tensor<1x3x2x2x!quant.uniform<i8:f32, 2.000000e-02>>
// Must not: Softmax with log = true has no INT8 form, it stays F32 after a Cast to f32 (named <producer>_f32).
// CHECK-NEXT: %[[CF:[0-9]+]] = "tpu.Cast"(%[[C]]) : (tensor<1x3x2x2x!quant.uniform<i8:f32, 2.000000e-02>>) -> tensor<1x3x2x2xf32>
// MaxPool's output scale (2.0 / 127) differs from its input's: a RequantInt first, no arithmetic in the pool.
// (2.54/127) / (2.0/127) = 1.27: the reference gives (2663383, 21).
// CHECK: %[[R:[0-9]+]] = "tpu.RequantInt"(%[[C]]) {multiplier = [2663383], quant_mode = #tpu<rq_mode MultiplierShift>, rshift = [21]} : {{.*}} -> tensor<1x3x2x2x!quant.uniform<i8:f32, 0.015748031496062992>>
// CHECK: %[[P:[0-9]+]] = "tpu.Pool2D"(%[[R]]) {{.*}}pool_mode = #tpu<pool_mode Max>{{.*}} -> tensor<1x3x1x1x!quant.uniform<i8:f32, 0.015748031496062992>>
// Sigmoid is a 256-entry table.
// CHECK: %[[S:[0-9]+]] = "tpu.Lut"(%[[P]], %{{[0-9]+}}) : (tensor<1x3x1x1x!quant.uniform<i8:f32, 0.015748031496062992>>, tensor<256xi8>) -> tensor<1x3x1x1x!quant.uniform<i8:f32, 0.0078740157480314959>>
// CHECK: "tpu.Softmax"(%[[CF]]{{.*}} -> tensor<1x3x2x2xf32>
// The int8 output is cast back to f32 under its Top name.
// CHECK: %[[OUT:[0-9]+]] = "tpu.Cast"(%[[S]]) : (tensor<1x3x1x1x!quant.uniform<i8:f32, 0.0078740157480314959>>) -> tensor<1x3x1x1xf32>
// CHECK: return %[[OUT]], %{{[0-9]+}} : tensor<1x3x1x1xf32>, tensor<1x3x2x2xf32>
// The f32 weights the int8/int32 ones replaced are gone.
// WEIGHTS-NOT: tensor<3xf32>
// LOC-DAG: loc("x_int8")
// LOC-DAG: loc("conv_f32")
// LOC-DAG: loc("conv_requant")
// LOC-DAG: loc("sig_int8")
// LOC-DAG: loc("sig")
// LOC-DAG: loc("w_int8")
// LOC-DAG: loc("b_int32")
// LOC-DAG: loc("sig_table")
module attributes {module.name = "m", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x1x2x2xf32>) -> (tensor<1x3x1x1xf32>, tensor<1x3x2x2xf32>) {
    %0 = "top.Input"(%arg0) : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32> loc("x")
    %1 = "top.Weight"() : () -> tensor<3x1x1x1xf32> loc("w")
    %2 = "top.Weight"() : () -> tensor<3xf32> loc("b")
    %3 = "top.Conv"(%0, %1, %2) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0]} : (tensor<1x1x2x2xf32>, tensor<3x1x1x1xf32>, tensor<3xf32>) -> tensor<1x3x2x2xf32> loc("conv")
    %4 = "top.MaxPool"(%3) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x3x2x2xf32>) -> tensor<1x3x1x1xf32> loc("pool")
    %5 = "top.Sigmoid"(%4) : (tensor<1x3x1x1xf32>) -> tensor<1x3x1x1xf32> loc("sig")
    %6 = "top.Softmax"(%3) {axis = 1 : i64, log = true} : (tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32> loc("soft")
    return %5, %6 : tensor<1x3x1x1xf32>, tensor<1x3x2x2xf32>
  }
}

// --convert-top-to-tpu in INT8: a clamp (Clip, Relu) whose input and result share one scale and zero
// point clamps stored integers (docs/quantization.md, "QDQ models"). Every tensor at threshold 127
// (scale 1) but `rescaled` (63.5: scale 0.5) and `sum` (254).
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir && python -c "import numpy as np; np.savez('%t/m_weight.npz')"
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%S/Inputs/int8_clamp_cali_table asymmetric=false" --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu --mlir-print-debuginfo -o %t/int8.mlir
// RUN: filecheck %s < %t/int8.mlir
// RUN: filecheck %s --check-prefix=GONE < %t/int8.mlir
// Fires, the identity: m_dq's bounds +-1000 cover [-128, 127]; the op goes, MulConst takes its name.
// CHECK: %[[M:[0-9]+]] = "tpu.MulConst"(%{{[0-9]+}}) {{.*}} loc(#[[MDQ:loc[0-9]+]])
// Fires, a clamp inside the range: [-2.5, 3.5] at scale 1 rounded half away from zero: [-3, 4].
// CHECK-NEXT: %[[CUT:[0-9]+]] = "tpu.Clip"(%[[M]]) {max = 4.000000e+00 : f64, min = -3.000000e+00 : f64} : (tensor<1x4x!quant.uniform<i8:f32, 1.000000e+00>>) -> tensor<1x4x!quant.uniform<i8:f32, 1.000000e+00>>
// Must not fire, different scales (1 in, 0.5 out): a Lut.
// CHECK: "tpu.Lut"(%[[CUT]], {{.*}} -> tensor<1x4x!quant.uniform<i8:f32, 5.000000e-01>> loc(#[[RESCALED:loc[0-9]+]])
// A Relu on one scale: the clamp [0, +inf) in stored units, [0, 127].
// CHECK-NEXT: "tpu.Clip"(%[[CUT]]) {max = 1.270000e+02 : f64, min = 0.000000e+00 : f64}
// Must not drop, the identity whose input another op reads too (m2 feeds the Add): an int8 Clip
// over the whole range keeps both names.
// CHECK: %[[M2:[0-9]+]] = "tpu.MulConst"({{.*}} loc(#[[M2LOC:loc[0-9]+]])
// CHECK-NEXT: "tpu.Clip"(%[[M2]]) {max = 1.270000e+02 : f64, min = -1.280000e+02 : f64} {{.*}} loc(#[[M2DQ:loc[0-9]+]])
// The identity on a float input: the Cast to int8 takes the clamp's name (y_dq), no Clip.
// CHECK-NOT: "tpu.Clip"
// CHECK-DAG: #[[MDQ]] = loc("m_dq")
// CHECK-DAG: #[[RESCALED]] = loc("rescaled_int8")
// CHECK-DAG: #[[M2LOC]] = loc("m2")
// CHECK-DAG: #[[M2DQ]] = loc("m2_dq")
// CHECK-DAG: loc("y_dq_int8")
// The names that went with the dropped clamps (MulConst's m, the Cast's derived y_int8):
// GONE-NOT: loc("m")
// GONE-NOT: loc("y_int8")
// The Tpu interpreter: x = [-4, -2, 1, 30], m = 2x, cut's integers clamp m to [-3, 4] (Top's floats
// to [-2.5, 3.5]), relu = max(cut, 0), rescaled = cut clamped again at scale 0.5 (Top's values: the
// Lut's entries come back to [-2.5, 3.5]), y_dq = y saturated to [-128, 127] by the Cast.
// RUN: python -c "import numpy as np; np.savez('%t/in.npz', x=np.array([[-4, -2, 1, 30]], np.float32), y=np.array([[-200, -3, 5, 126]], np.float32))"
// RUN: model_runner --input %t/in.npz --model %t/m.mlir --output %t/top.npz
// RUN: model_runner --input %t/in.npz --model %t/int8.mlir --output %t/int8.npz
// RUN: python -c "import numpy as np; t, i = np.load('%t/top.npz'), np.load('%t/int8.npz'); print(i['relu'].tolist(), i['rescaled'].tolist(), t['rescaled'].tolist(), i['y_dq'].tolist())" | filecheck %s --check-prefix=VALUES
// VALUES: {{\[\[}}0.0, 0.0, 2.0, 4.0]] {{\[\[}}-2.5, -2.5, 2.0, 3.5]] {{\[\[}}-2.5, -2.5, 2.0, 3.5]] {{\[\[}}-128.0, -3.0, 5.0, 126.0]]
module attributes {module.name = "m", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x4xf32>, %arg1: tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) {
    %0 = "top.Input"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("x")
    %1 = "top.Input"(%arg1) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("y")
    %2 = "top.MulConst"(%0) {const_val = 2.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("m")
    %3 = "top.Clip"(%2) {min = -1000.0 : f64, max = 1000.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("m_dq")
    %4 = "top.Clip"(%3) {min = -2.5 : f64, max = 3.5 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("cut")
    %5 = "top.Clip"(%4) {min = -2.5 : f64, max = 3.5 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("rescaled")
    %6 = "top.Relu"(%4) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("relu")
    %7 = "top.MulConst"(%0) {const_val = 0.5 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("m2")
    %8 = "top.Clip"(%7) {min = -1000.0 : f64, max = 1000.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("m2_dq")
    %9 = "top.Add"(%7, %8) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32> loc("sum")
    %10 = "top.Clip"(%1) {min = -1000.0 : f64, max = 1000.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("y_dq")
    return %5, %6, %9, %10 : tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>
  }
}

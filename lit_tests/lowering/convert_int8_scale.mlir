// --convert-top-to-tpu in INT8: a BatchNorm (constant statistics, fused relu) and a Scale become
// depthwise 1x1 INT8 Conv2Ds (group C, per-channel int8 filter, int32 bias, per-channel
// multiplier/rshift), symmetric and asymmetric; a BatchNorm a qtable line keeps in F32 stays tpu.Scale.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; np.savez('%t/m_weight.npz', mean=np.array([0.1, -0.2], np.float32), var=np.array([0.25, 1.0], np.float32), gamma=np.array([0.5, -1.5], np.float32), beta=np.array([0.2, 0.1], np.float32), a=np.array([2.0, 0.5], np.float32).reshape(1, 2, 1, 1), b=np.array([0.0, 0.3], np.float32).reshape(1, 2, 1, 1))"
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%S/Inputs/int8_scale_cali_table asymmetric=false" --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu="qtable=%S/Inputs/bn_f32.qtable" --mlir-print-debuginfo -o %t/out.mlir
// RUN: filecheck %s < %t/out.mlir
// RUN: python -c "import numpy as np; w = np.load('%t/out_weight.npz'); print(*(f'{k} {w[k].dtype} {w[k].shape} {w[k].ravel().tolist()}' for k in sorted(w)), sep='\n')" | filecheck %s --check-prefix=W
// Must not without the qtable line either: every BatchNorm is INT8 then.
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%S/Inputs/int8_scale_cali_table asymmetric=false" --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu -o %t/all8.mlir
// RUN: filecheck %s --check-prefix=ALL8 < %t/all8.mlir
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%S/Inputs/int8_scale_cali_table asymmetric=true" --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu="asymmetric=true" -o %t/asym.mlir
// RUN: filecheck %s --check-prefix=ASYM < %t/asym.mlir
// The Tpu interpreter runs the integer kernels: close to Top.
// RUN: python -c "import numpy as np; np.savez('%t/in.npz', x=(np.sin(np.arange(8, dtype=np.float32)) * 1.2).reshape(1, 2, 2, 2))"
// RUN: model_runner --input %t/in.npz --model %t/m.mlir --output %t/top.npz
// RUN: model_runner --input %t/in.npz --model %t/out.mlir --output %t/int8.npz
// RUN: npz_tool compare %t/int8.npz %t/top.npz --tolerance 0.999,0.98 | filecheck %s --check-prefix=SAME
// SAME: npz compare PASSED.

// BatchNorm, epsilon 0: a = gamma / sqrt(var) = [1, -1.5], b = beta - mean a = [0.1, -0.2]; s_in = 1.27 / 127,
// s_out = 2.54 / 127. s_w = [1, 1.5] / 127, so the filter is [127, -127]; bias round(b / (s_w s_in)) =
// [1270, -1693]; multipliers: tests/test_requant.py's ref_scale_and_shift of s_w s_in / s_out = [1, 1.5] / 254.
// CHECK: %[[X:[0-9]+]] = "tpu.Cast"(%0) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2x!quant.uniform<i8:f32, 1.000000e-02>>
// CHECK: %[[BN:[0-9]+]] = "tpu.Conv2D"(%[[X]], %{{[0-9]+}}, %{{[0-9]+}}) {do_relu = true, group = 2 : i64, kernel_shape = [1, 1], multiplier = [2113665, 6340995], pads = [0, 0, 0, 0], quant_mode = #tpu<rq_mode MultiplierShift>, rshift = [29, 30], strides = [1, 1], with_bias = true} : ({{.*}}, tensor<2x1x1x1x!quant.uniform<i8<-127:127>:f32:0, {0.0078740157480314959,0.011811023622047244}>>, tensor<2xi32>) -> tensor<1x2x2x2x!quant.uniform<i8:f32, 2.000000e-02>> loc(#[[LBN:loc[0-9]+]])
// Scale [2, 0.5], bias [0, 0.3], s_out = 3 / 127: multipliers of [2, 0.5] / 127 * 2.54 / 3.
// CHECK: %[[SC:[0-9]+]] = "tpu.Conv2D"(%[[BN]], %{{[0-9]+}}, %{{[0-9]+}}) {group = 2 : i64, kernel_shape = [1, 1], multiplier = [7158279, 894785], {{.*}}rshift = [29, 28], {{.*}} -> tensor<1x2x2x2x!quant.uniform<i8:f32, 0.023622047244094488>> loc(#[[LSC:loc[0-9]+]])
// Must not: the BatchNorm the qtable names F32 is the float lowering's tpu.Scale.
// CHECK: "tpu.Scale"(%0, {{.*}} -> tensor<1x2x2x2xf32> loc(#[[LBNF:loc[0-9]+]])
// CHECK: "tpu.Cast"(%[[SC]]) {{.*}} loc(#[[LOUT:loc[0-9]+]])
// CHECK-DAG: #[[LBN]] = loc("bn")
// CHECK-DAG: #[[LSC]] = loc("sc_int8")
// CHECK-DAG: #[[LBNF]] = loc("bnf")
// CHECK-DAG: #[[LOUT]] = loc("sc")
// The weights: derived names, int8 filters and int32 biases; the float statistics are gone.
// W: a_int8 int8 (2, 1, 1, 1) [127, 127]
// W-NEXT: b_int32 int32 (2,) [0, 3810]
// W-NEXT: bn_bias_int32 int32 (2,) [1270, -1693]
// W-NEXT: bn_scale_int8 int8 (2, 1, 1, 1) [127, -127]
// W-NEXT: bnf_bias float32 (2,)
// W-NEXT: bnf_scale float32 (2,)
// W-NOT: mean

// ALL8-NOT: tpu.Scale
// ALL8-COUNT-3: "tpu.Conv2D"
// ALL8-NOT: tpu.Scale

// Asymmetric: the relu's output [0, 2.54] is uint8 (zero point 0, the fused relu clamps at 0); Scale's [-3, 2]
// int8 at 5 / 255 with zero point -128 + round(3 / (5 / 255)) = 25.
// ASYM: "tpu.Conv2D"({{.*}}do_relu = true, group = 2 : i64{{.*}} -> tensor<1x2x2x2x!quant.uniform<u8:f32, 0.0099607843137254903>>
// ASYM: "tpu.Conv2D"({{.*}}group = 2 : i64{{.*}} -> tensor<1x2x2x2x!quant.uniform<i8:f32, 0.019607843137254902:25>>
// ASYM-NOT: tpu.Scale
module attributes {module.name = "m", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x2x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
    %0 = "top.Input"(%arg0) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> loc("x")
    %1 = "top.Weight"() : () -> tensor<2xf32> loc("mean")
    %2 = "top.Weight"() : () -> tensor<2xf32> loc("var")
    %3 = "top.Weight"() : () -> tensor<2xf32> loc("gamma")
    %4 = "top.Weight"() : () -> tensor<2xf32> loc("beta")
    %5 = "top.Weight"() : () -> tensor<1x2x1x1xf32> loc("a")
    %6 = "top.Weight"() : () -> tensor<1x2x1x1xf32> loc("b")
    %7 = "top.BatchNorm"(%0, %1, %2, %3, %4) {epsilon = 0.000000e+00 : f64, do_relu = true} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32> loc("bn")
    %8 = "top.Scale"(%7, %5, %6) : (tensor<1x2x2x2xf32>, tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x2x2xf32> loc("sc")
    %9 = "top.BatchNorm"(%0, %1, %2, %3, %4) {epsilon = 0.000000e+00 : f64} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32> loc("bnf")
    return %8, %9 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
  }
}

// Asymmetric INT8 (--convert-top-to-tpu="asymmetric=true" after an asymmetric table): per tensor
// TPU-MLIR's getScaleAndZeroPoint on [min(lo, 0), max(hi, 0)]: uint8 (zero point 0) for lo >= 0,
// int8 with zero point round(-128 - lo / scale) otherwise, scale = (hi - lo) / 255.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; np.savez('%t/m_weight.npz', w=np.array([0.5, -0.25, 0.75, 1.0], np.float32).reshape(2, 2, 1, 1))"
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%S/Inputs/int8_asym_cali_table asymmetric=true" --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu="asymmetric=true" -o %t/out.mlir
// RUN: filecheck %s < %t/out.mlir
// Must not: without asymmetric=true the same module is symmetric int8 (no zero point, no uint8).
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%S/Inputs/int8_asym_cali_table asymmetric=false" --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu -o %t/sym.mlir
// RUN: filecheck %s --check-prefix=SYM < %t/sym.mlir
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%S/Inputs/int8_asym_cali_table asymmetric=true" --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu="asymmetric=true" --mlir-print-debuginfo -o %t/loc.mlir
// RUN: filecheck %s --check-prefix=LOC < %t/loc.mlir
// The Tpu interpreter's results are close to Top's.
// RUN: python -c "import numpy as np; np.savez('%t/in.npz', x=(np.sin(np.arange(32, dtype=np.float32)) * 0.98).reshape(1, 2, 4, 4))"
// RUN: model_runner --input %t/in.npz --model %t/m.mlir --output %t/top.npz
// RUN: model_runner --input %t/in.npz --model %t/out.mlir --output %t/q.npz
// RUN: npz_tool compare %t/q.npz %t/top.npz --tolerance 0.999,0.97 | filecheck %s --check-prefix=SAME
// SAME: npz compare PASSED.

// CHECK: module attributes {module.asymmetric = true,
// x in [-0.98, 0.99]: scale 1.97 / 255, zero point round(-128 + 0.98 / scale) = round(-1.15) = -1.
// CHECK: %[[X:[0-9]+]] = "tpu.Cast"(%0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4x!quant.uniform<i8:f32, 0.0077254901960784311:-1>>
// conv + relu in [0, 1.45]: uint8 at 1.45 / 255, zero point 0.
// CHECK: %[[C:[0-9]+]] = "tpu.Conv2D"(%[[X]], {{.*}} -> tensor<1x2x4x4x!quant.uniform<u8:f32, 0.0056862745098039211>>
// add in [-0.9, 1.9]: scale 2.8 / 255, zero point round(-128 + 0.9 / scale) = round(-46.04) = -46.
// CHECK: %[[A:[0-9]+]] = "tpu.Add"(%[[X]], %[[C]]) {{.*}} -> tensor<1x2x4x4x!quant.uniform<i8:f32, 0.010980392156862744:-46>>
// Must not: LayerNorm has no INT8 form: add is cast to f32 (its zero point is the Cast's business).
// CHECK: %[[AF:[0-9]+]] = "tpu.Cast"(%[[A]]) : (tensor<1x2x4x4x!quant.uniform<i8:f32, 0.010980392156862744:-46>>) -> tensor<1x2x4x4xf32>
// MaxPool's output type (pool in [-0.5, 1.9]: 2.4 / 255, zero point round(-128 + 0.5 / scale) = -75) differs: RequantInt first.
// CHECK: %[[R:[0-9]+]] = "tpu.RequantInt"(%[[A]]) {{.*}} -> tensor<1x2x4x4x!quant.uniform<i8:f32, 0.0094117647058823521:-75>>
// CHECK: %[[P:[0-9]+]] = "tpu.Pool2D"(%[[R]]) {{.*}}pool_mode = #tpu<pool_mode Max>{{.*}} -> tensor<1x2x2x2x!quant.uniform<i8:f32, 0.0094117647058823521:-75>>
// Sigmoid: [0, 1] (the import's rule), uint8 at 1 / 255; the table has the output's storage type.
// CHECK: %[[T:[0-9]+]] = "top.Weight"() : () -> tensor<256xui8>
// CHECK: "tpu.Lut"(%[[P]], %[[T]]) : {{.*}} -> tensor<1x2x2x2x!quant.uniform<u8:f32, 0.0039215686274509803>>
// CHECK: "tpu.Pool2D"(%[[C]]) {count_include_pad = true, {{.*}}pool_mode = #tpu<pool_mode Avg>{{.*}} -> tensor<1x2x4x4x!quant.uniform<u8:f32, 0.0031372549019607846>>
// CHECK: "tpu.LayerNorm"(%[[AF]], {{.*}} -> tensor<1x2x4x4xf32>
// SYM-NOT: module.asymmetric
// SYM-NOT: u8:f32
// SYM: "tpu.Add"({{.*}} -> tensor<1x2x4x4x!quant.uniform<i8:f32, 0.015748031496062992>>
// SYM-NOT: u8:f32
// LOC-DAG: loc("x_int8")
// LOC-DAG: loc("add_requant")
// LOC-DAG: loc("add_f32")
// LOC-DAG: loc("sig_table")
// LOC-DAG: loc("sig_int8")
module attributes {module.name = "m", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
    %0 = "top.Input"(%arg0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("x")
    %1 = "top.Weight"() : () -> tensor<2x2x1x1xf32> loc("w")
    %2 = "top.None"() : () -> none loc("none")
    %3 = "top.Conv"(%0, %1, %2) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], do_relu = true} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x4x4xf32> loc("conv")
    %4 = "top.Add"(%0, %3) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("add")
    %5 = "top.MaxPool"(%4) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> loc("pool")
    %6 = "top.Sigmoid"(%5) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> loc("sig")
    %8 = "top.AvgPool"(%3) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], count_include_pad = true} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("avg")
    %9 = "top.LayerNorm"(%4, %2, %2) {axis = 1 : i64, eps = 1.000000e-05 : f64} : (tensor<1x2x4x4xf32>, none, none) -> tensor<1x2x4x4xf32> loc("ln")
    return %6, %8, %9 : tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
  }
}

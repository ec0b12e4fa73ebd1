// --convert-top-to-tpu in INT8 with a qtable: the op it names (pool F16) is lowered in F16, with
// Casts at its boundaries; the ops it does not name (act, sig) stay int8 Luts.
// RUN: tpuc-opt %s --import-calibration-table="file=%S/Inputs/qtable_int8_cali_table asymmetric=false" --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu="qtable=%S/Inputs/pool_f16.qtable" --mlir-print-debuginfo | filecheck %s
// Without the qtable the pool is int8 (same scale in and out: no RequantInt, no Cast).
// RUN: tpuc-opt %s --import-calibration-table="file=%S/Inputs/qtable_int8_cali_table asymmetric=false" --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu | filecheck %s --check-prefix=ALL8

// CHECK: %[[A:[0-9]+]] = "tpu.Lut"({{.*}} -> tensor<1x3x2x2x!quant.uniform<i8:f32, 0.0078740157480314959>> loc(#[[LACT:loc[0-9]+]])
// The int8 value goes to f32 (its own scale) and then to the qtable's F16.
// CHECK-NEXT: %[[AF:[0-9]+]] = "tpu.Cast"(%[[A]]) : ({{.*}}) -> tensor<1x3x2x2xf32> loc(#[[LAF32:loc[0-9]+]])
// CHECK-NEXT: %[[AH:[0-9]+]] = "tpu.Cast"(%[[AF]]) : (tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf16>
// CHECK-NEXT: %[[P:[0-9]+]] = "tpu.Pool2D"(%[[AH]]) {{.*}}pool_mode = #tpu<pool_mode Max>{{.*}} : (tensor<1x3x2x2xf16>) -> tensor<1x3x1x1xf16> loc(#[[LPOOL:loc[0-9]+]])
// The F16 result is quantized at pool's calibrated scale (1.0 / 127) for the int8 Lut.
// CHECK-NEXT: %[[PQ:[0-9]+]] = "tpu.Cast"(%[[P]]) : (tensor<1x3x1x1xf16>) -> tensor<1x3x1x1x!quant.uniform<i8:f32, 0.0078740157480314959>> loc(#[[LPQ:loc[0-9]+]])
// CHECK: "tpu.Lut"(%[[PQ]], %{{[0-9]+}}) : {{.*}} -> tensor<1x3x1x1x!quant.uniform<i8:f32, 0.0078740157480314959>>
// CHECK-DAG: #[[LACT]] = loc("act")
// CHECK-DAG: #[[LAF32]] = loc("act_f32")
// CHECK-DAG: #[[LPOOL]] = loc("pool")
// CHECK-DAG: #[[LPQ]] = loc("pool_int8")

// ALL8-NOT: xf16>
// ALL8: "tpu.Pool2D"({{.*}} : (tensor<1x3x2x2x!quant.uniform<i8:f32, 0.0078740157480314959>>) -> tensor<1x3x1x1x!quant.uniform<i8:f32, 0.0078740157480314959>>
// ALL8-NOT: xf16>
module attributes {module.name = "m", module.state = "TOP_F32"} {
  func.func @main(%arg0: tensor<1x3x2x2xf32>) -> tensor<1x3x1x1xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32> loc("x")
    %1 = "top.Sigmoid"(%0) : (tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32> loc("act")
    %2 = "top.MaxPool"(%1) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x3x2x2xf32>) -> tensor<1x3x1x1xf32> loc("pool")
    %3 = "top.Sigmoid"(%2) : (tensor<1x3x1x1xf32>) -> tensor<1x3x1x1xf32> loc("sig")
    return %3 : tensor<1x3x1x1xf32>
  }
}

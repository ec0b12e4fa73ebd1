// INT8 lookup tables need the function at every byte the input's type holds. x is calibrated to
// [0.5, 4]: symmetric int8 holds [-4, 4], where Sqrt is NaN on the negative half, so Sqrt has no
// table and stays in F32 between casts (as an op without an INT8 form); Exp is defined everywhere
// and becomes a Lut. Asymmetric, x is uint8 ([0, 4]) and Sqrt gets its table too.
// RUN: tpuc-opt %s --import-calibration-table="file=%S/Inputs/int8_lut_domain_cali_table asymmetric=false" --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu | filecheck %s
// RUN: tpuc-opt %s --import-calibration-table="file=%S/Inputs/int8_lut_domain_cali_table asymmetric=true" --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu="asymmetric=true" | filecheck %s --check-prefix=ASYM
// CHECK: %[[X:[0-9]+]] = "tpu.Cast"(%0) : (tensor<1x4xf32>) -> tensor<1x4x!quant.uniform<i8:f32,
// CHECK-NOT: "tpu.Lut"
// CHECK: "tpu.Active"(%0) {mode = #tpu<active_mode SQRT>} : (tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK: "tpu.Lut"(%[[X]], {{.*}} -> tensor<1x4x!quant.uniform<i8:f32,
// ASYM: %[[X:[0-9]+]] = "tpu.Cast"(%0) : (tensor<1x4xf32>) -> tensor<1x4x!quant.uniform<u8:f32,
// ASYM-NOT: active_mode SQRT
// ASYM: "tpu.Lut"(%[[X]], {{.*}} -> tensor<1x4x!quant.uniform<u8:f32,
// ASYM: "tpu.Lut"(%[[X]], {{.*}} -> tensor<1x4x!quant.uniform<u8:f32,
module attributes {module.name = "m", module.state = "TOP_F32"} {
  func.func @main(%arg0: tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>) {
    %0 = "top.Input"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("x")
    %1 = "top.Sqrt"(%0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("sq")
    %2 = "top.Exp"(%0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("ex")
    return %1, %2 : tensor<1x4xf32>, tensor<1x4xf32>
  }
}

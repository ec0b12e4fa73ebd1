// --convert-top-to-tpu keeps the ops that compute or read attention-mask fill values (|x| >= 1e30,
// finfo(float32).min: beyond f16 and bf16, and no int8 scale keeps them with the scores) in F32:
// F16/BF16 find them from the module's constants (a weight or a constant attribute holding a fill,
// carried by Add/MulConst/... and the ops that move elements), INT8 from the calibrated ranges.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; np.savez('%t/m_weight.npz', causal_mask=np.tril(np.ones((1, 1, 4, 4), np.float32)), mask_value=np.array(np.finfo(np.float32).min, np.float32), bias=np.full((1, 1, 1, 4), 1000.0, np.float32))"
// RUN: tpuc-opt %t/m.mlir --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu -o %t/out1.mlir && filecheck %s --check-prefix=F16 < %t/out1.mlir
// RUN: tpuc-opt %t/m.mlir --processor-assign="chip=bm1684x mode=BF16" --convert-top-to-tpu -o %t/out2.mlir && filecheck %s --check-prefix=BF16 < %t/out2.mlir
// RUN: tpuc-opt %t/m.mlir --processor-assign="chip=bm1684x mode=W8F16" --convert-top-to-tpu -o %t/out3.mlir && filecheck %s --check-prefix=F16 < %t/out3.mlir
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%S/Inputs/mask_fills_cali_table asymmetric=false" --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu -o %t/out4.mlir && filecheck %s --check-prefix=INT8 < %t/out4.mlir
// A qtable line naming one of them wins:
// RUN: tpuc-opt %t/m.mlir --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu="qtable=%S/Inputs/softmax_f16.qtable" -o %t/out5.mlir && filecheck %s --check-prefix=QTABLE < %t/out5.mlir
// In F32 nothing changes, and a module whose mask fill is moderate (-10000, TPU-MLIR's) keeps every op in the mode:
// RUN: sed 's/-3.4028234663852886E+38/-1.000000e+04/' %s > %t/moderate.mlir
// RUN: python -c "import numpy as np; np.savez('%t/m_weight.npz', causal_mask=np.tril(np.ones((1, 1, 4, 4), np.float32)), mask_value=np.array(-10000.0, np.float32), bias=np.full((1, 1, 1, 4), 1000.0, np.float32))"
// RUN: cp %t/m_weight.npz %t/moderate_weight.npz && sed -i 's/m_weight.npz/moderate_weight.npz/' %t/moderate.mlir
// RUN: tpuc-opt %t/moderate.mlir --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu -o %t/out6.mlir && filecheck %s --check-prefix=NONE < %t/out6.mlir

// F16 (and W8F16's activations): the mask's Reshape and 1 - mask hold 0 and 1 and stay F16; the
// MulConst by finfo.min computes the fills, the causal Where reads the fill weight, the Add carries
// them, Softmax reads them: F32. Softmax's result is F16 again, and the ordinary Add of moderate
// values (1000) is F16.
// F16: "tpu.Reshape"({{.*}} -> tensor<1x1x1x4xf16>
// F16-NEXT: "tpu.SubConst"({{.*}} -> tensor<1x1x1x4xf16>
// F16-NEXT: "tpu.Cast"
// F16-NEXT: "tpu.MulConst"({{.*}} : (tensor<1x1x1x4xf32>) -> tensor<1x1x1x4xf32> loc(#[[MASK:loc[0-9]*]])
// F16: "tpu.Where"({{.*}} -> tensor<1x2x4x4xf32> loc(#[[CAUSAL:loc[0-9]*]])
// F16-NEXT: "tpu.Add"({{.*}} : (tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x4xf32> loc(#[[MASKED:loc[0-9]*]])
// F16-NEXT: "tpu.Softmax"({{.*}} : (tensor<1x2x4x4xf32>{{.*}}) -> tensor<1x2x4x4xf32> loc(#[[SOFTMAX:loc[0-9]*]])
// F16-NEXT: "tpu.Cast"({{.*}} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf16>
// F16: "tpu.Add"({{.*}} : (tensor<1x2x4x4xf16>, tensor<1x1x1x4xf16>) -> tensor<1x2x4x4xf16> loc(#[[BIASED:loc[0-9]*]])
// F16-DAG: #[[MASK]] = loc("mask")
// F16-DAG: #[[CAUSAL]] = loc("causal")
// F16-DAG: #[[MASKED]] = loc("masked")
// F16-DAG: #[[SOFTMAX]] = loc("softmax")
// F16-DAG: #[[BIASED]] = loc("biased_f16")

// BF16 (largest 3.39e38, finfo.min's magnitude is 3.40e38): the same ops.
// BF16: "tpu.SubConst"({{.*}} -> tensor<1x1x1x4xbf16>
// BF16: "tpu.MulConst"({{.*}} -> tensor<1x1x1x4xf32>
// BF16: "tpu.Where"({{.*}} -> tensor<1x2x4x4xf32>
// BF16-NEXT: "tpu.Add"({{.*}} -> tensor<1x2x4x4xf32>
// BF16-NEXT: "tpu.Softmax"({{.*}} -> tensor<1x2x4x4xf32>
// BF16: "tpu.Add"({{.*}} -> tensor<1x2x4x4xbf16>

// INT8 from the ranges: also the chain from the mask input (its int8 1 reads back as the
// threshold 1.0005, which times finfo.min overflows to -inf); the scores and the ordinary Add are int8.
// INT8: "tpu.Reshape"({{.*}} -> tensor<1x1x1x4xf32>
// INT8-NEXT: "tpu.SubConst"({{.*}} -> tensor<1x1x1x4xf32>
// INT8-NEXT: "tpu.MulConst"({{.*}} -> tensor<1x1x1x4xf32>
// INT8: "tpu.Where"({{.*}} -> tensor<1x2x4x4xf32>
// INT8-NEXT: "tpu.Add"({{.*}} -> tensor<1x2x4x4xf32>
// INT8-NEXT: "tpu.Softmax"({{.*}} -> tensor<1x2x4x4xf32>
// INT8: "tpu.Add"({{.*}} -> tensor<1x2x4x4x!quant.uniform<i8

// QTABLE: "tpu.Add"({{.*}} -> tensor<1x2x4x4xf32>
// QTABLE-NEXT: "tpu.Cast"
// QTABLE-NEXT: "tpu.Softmax"({{.*}} : (tensor<1x2x4x4xf16>{{.*}}) -> tensor<1x2x4x4xf16>

// NONE: "tpu.MulConst"({{.*}} : (tensor<1x1x1x4xf16>) -> tensor<1x1x1x4xf16>
// NONE: "tpu.Where"({{.*}} -> tensor<1x2x4x4xf16>
// NONE-NEXT: "tpu.Add"({{.*}} : (tensor<1x2x4x4xf16>, tensor<1x1x1x4xf16>) -> tensor<1x2x4x4xf16>
// NONE-NEXT: "tpu.Softmax"({{.*}} : (tensor<1x2x4x4xf16>{{.*}}) -> tensor<1x2x4x4xf16>
module attributes {module.name = "m", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x2x4x4xf32>, %arg1: tensor<1x4xf32>) -> tensor<1x2x4x4xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("scores")
    %1 = "top.Input"(%arg1) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("attention_mask")
    %2 = "top.Reshape"(%1) {shape = [1, 1, 1, 4]} : (tensor<1x4xf32>) -> tensor<1x1x1x4xf32> loc("mask.unsqueeze")
    %3 = "top.SubConst"(%2) {const_val = 1.000000e+00 : f64, is_reverse = true} : (tensor<1x1x1x4xf32>) -> tensor<1x1x1x4xf32> loc("mask.inverted")
    %4 = "top.MulConst"(%3) {const_val = -3.4028234663852886E+38 : f64} : (tensor<1x1x1x4xf32>) -> tensor<1x1x1x4xf32> loc("mask")
    %5 = "top.Weight"() : () -> tensor<1x1x4x4xf32> loc("causal_mask")
    %6 = "top.Weight"() : () -> tensor<f32> loc("mask_value")
    %7 = "top.Where"(%5, %0, %6) : (tensor<1x1x4x4xf32>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32> loc("causal")
    %8 = "top.Add"(%7, %4) : (tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x4xf32> loc("masked")
    %9 = "top.Softmax"(%8) {axis = 3 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("softmax")
    %10 = "top.Weight"() : () -> tensor<1x1x1x4xf32> loc("bias")
    %11 = "top.Add"(%9, %10) : (tensor<1x2x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x2x4x4xf32> loc("biased")
    return %11 : tensor<1x2x4x4xf32>
  }
}

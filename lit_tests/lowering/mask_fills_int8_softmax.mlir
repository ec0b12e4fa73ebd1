// INT8 also keeps in F32 the ops computing or reading a Softmax's input whose calibrated |x|
// reaches 127 (overflow.INT8_SOFTMAX_FILL): LLM-TPU's additive masks of -10000 (-1000 in its
// Llama3 export), where one int8 step of the masked scores is 79 and every score would read 0.
// A Softmax input within 127, and a tensor of 10000 no Softmax reads, stay int8.
// RUN: tpuc-opt %s --import-calibration-table="file=%S/Inputs/mask_fills_softmax_cali_table asymmetric=false" --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu | filecheck %s

// CHECK: "tpu.Add"({{.*}} : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> loc(#[[MASKED:loc[0-9]*]])
// CHECK: "tpu.Softmax"({{.*}} : (tensor<1x2x4x4xf32>{{.*}}) -> tensor<1x2x4x4xf32> loc(#[[SOFTMAX:loc[0-9]*]])
// CHECK: "tpu.MulConst"({{.*}} -> tensor<1x2x4x4x!quant.uniform<i8{{.*}} loc(#[[SMALL:loc[0-9]*]])
// CHECK: "tpu.Softmax"({{.*}} -> tensor<1x2x4x4x!quant.uniform<i8{{.*}} loc(#[[SMALL_SOFTMAX:loc[0-9]*]])
// CHECK: "tpu.Add"({{.*}} -> tensor<1x2x4x4x!quant.uniform<i8{{.*}} loc(#[[LARGE:loc[0-9]*]])
// CHECK-DAG: #[[MASKED]] = loc("masked")
// CHECK-DAG: #[[SOFTMAX]] = loc("softmax")
// CHECK-DAG: #[[SMALL]] = loc("small_scores")
// CHECK-DAG: #[[SMALL_SOFTMAX]] = loc("small_softmax_int8")
// CHECK-DAG: #[[LARGE]] = loc("large")
module attributes {module.name = "m", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x2x4x4xf32>, %arg1: tensor<1x1x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
    %0 = "top.Input"(%arg0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("scores")
    %1 = "top.Input"(%arg1) : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> loc("attention_mask")
    %2 = "top.Add"(%0, %1) : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> loc("masked")
    %3 = "top.Softmax"(%2) {axis = 3 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("softmax")
    %4 = "top.MulConst"(%0) {const_val = 1.200000e+01 : f64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("small_scores")
    %5 = "top.Softmax"(%4) {axis = 3 : i64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("small_softmax")
    %6 = "top.Add"(%0, %1) : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> loc("large")
    %7 = "top.AddConst"(%6) {const_val = 5.000000e-01 : f64} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("large_biased")
    return %3, %5, %7 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
  }
}

// RUN: tpuc-opt %s --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu | filecheck %s

// Functions with parameters become tpu.Active with the parameters as coeffs; Round is an Active mode.
// CHECK: "tpu.Active"(%1) {coeffs = [0.69999999999999996], mode = #tpu<active_mode ELU>} : (tensor<2x300xf16>) -> tensor<2x300xf16>
// CHECK: "tpu.Active"(%1) {coeffs = [3.000000e-01, 5.000000e-01], mode = #tpu<active_mode HSIGMOID>}
// CHECK: "tpu.Active"(%1) {coeffs = [1.500000e+00], mode = #tpu<active_mode SWISH>}
// CHECK: "tpu.Active"(%1) {mode = #tpu<active_mode ROUND>}
// TopK's indices stay f32 (an index in f16/bf16 may be another index), only its values are cast back.
// CHECK: %[[TOPK:[0-9]+]]:2 = "tpu.TopK"(%1) {K = 3 : i64, axis = 1 : i64} : (tensor<2x300xf16>) -> (tensor<2x3xf16>, tensor<2x3xf32>) loc(#[[TOPKLOC:loc[0-9]*]])
// CHECK: "tpu.CumSum"(%1) {axis = 1 : i64} : (tensor<2x300xf16>) -> tensor<2x300xf16>
// CHECK: "tpu.Expand"(%3) {shape = [2, 3, 4]} : (tensor<3x1xf16>) -> tensor<2x3x4xf16>
// CHECK: %[[V:[0-9]+]] = "tpu.Cast"(%[[TOPK]]#0) : (tensor<2x3xf16>) -> tensor<2x3xf32> loc(#[[VLOC:loc[0-9]*]])
// CHECK: return {{.*}}, %[[V]], %[[TOPK]]#1,
// The cast values carries the Top name "v", the f16 values the derived "v_f16", the indices keep "i".
// CHECK-DAG: #[[VLOC]] = loc("v")
// CHECK-DAG: #[[TOPKLOC]] = loc(fused[#[[V16:loc[0-9]*]], #[[I:loc[0-9]*]]])
// CHECK-DAG: #[[V16]] = loc("v_f16")
// CHECK-DAG: #[[I]] = loc("i")
module attributes {module.name = "m", module.state = "TOP_F32"} {
  func.func @main(%arg0: tensor<2x300xf32>, %arg1: tensor<3x1xf32>) -> (tensor<2x300xf32>, tensor<2x300xf32>, tensor<2x300xf32>, tensor<2x300xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x300xf32>, tensor<2x3x4xf32>) {
    %0 = "top.Input"(%arg0) : (tensor<2x300xf32>) -> tensor<2x300xf32> loc("x")
    %1 = "top.Input"(%arg1) : (tensor<3x1xf32>) -> tensor<3x1xf32> loc("e")
    %2 = "top.Elu"(%0) {alpha = 7.000000e-01 : f64} : (tensor<2x300xf32>) -> tensor<2x300xf32> loc("elu")
    %3 = "top.HardSigmoid"(%0) {alpha = 3.000000e-01 : f64} : (tensor<2x300xf32>) -> tensor<2x300xf32> loc("hsig")
    %4 = "top.Swish"(%0) {beta = 1.500000e+00 : f64} : (tensor<2x300xf32>) -> tensor<2x300xf32> loc("swish")
    %5 = "top.Round"(%0) : (tensor<2x300xf32>) -> tensor<2x300xf32> loc("round")
    %6:2 = "top.TopK"(%0) {axis = 1 : i64, K = 3 : i64} : (tensor<2x300xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) loc(fused["v", "i"])
    %7 = "top.CumSum"(%0) {axis = 1 : i64} : (tensor<2x300xf32>) -> tensor<2x300xf32> loc("cumsum")
    %8 = "top.Expand"(%1) {shape = [2, 3, 4]} : (tensor<3x1xf32>) -> tensor<2x3x4xf32> loc("expand")
    return %2, %3, %4, %5, %6#0, %6#1, %7, %8 : tensor<2x300xf32>, tensor<2x300xf32>, tensor<2x300xf32>, tensor<2x300xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x300xf32>, tensor<2x3x4xf32>
  }
}

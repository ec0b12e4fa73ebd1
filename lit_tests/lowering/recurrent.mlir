// RUN: tpuc-opt %s --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu --mlir-print-debuginfo | filecheck %s
// LSTM and GRU lower to tpu.LSTM / tpu.GRU in F32 whatever the mode (their record computes in f32,
// docs/lowering.md): the f16 Tanh before is cast to f32 (a derived name), the weights stay f32 under
// their names, the results are f32 and keep their names (the Tanh keeps "t", its f32 cast is "t_f32"); `none` operands and results stay none.
// The Tanh itself is f16: the fallback is the recurrent op's only. In INT8 (no INT8 form) they fall
// back to F32 the same way: the int8 Lut's result is cast to f32.
// RUN: tpuc-opt %s --import-calibration-table="file=%S/Inputs/recurrent_cali_table asymmetric=false" --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu | filecheck %s --check-prefix=INT8

// INT8:      %[[T:[0-9]+]] = "tpu.Lut"({{.*}}) -> tensor<5x3x4x!quant.uniform<i8:f32, {{.*}}>>
// INT8-NEXT: %[[T32:[0-9]+]] = "tpu.Cast"(%[[T]]) : (tensor<5x3x4x!quant.uniform<i8:f32, {{.*}}>>) -> tensor<5x3x4xf32>
// INT8:      "tpu.LSTM"(%[[T32]], {{.*}}) {bidirectional = false, hidden_size = 6 : i64} : (tensor<5x3x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>, tensor<1x48xf32>, none, none, none) -> (tensor<5x1x3x6xf32>, none, tensor<1x3x6xf32>)
// INT8-NEXT: "tpu.GRU"({{.*}}) -> (tensor<3x5x2x6xf32>, tensor<3x2x6xf32>)

// CHECK:      %[[T:[0-9]+]] = "tpu.Active"({{.*}}) {mode = #tpu<active_mode TANH>} : (tensor<5x3x4xf16>) -> tensor<5x3x4xf16> loc(#[[LT:loc[0-9]+]])
// CHECK-NEXT: %[[T32:[0-9]+]] = "tpu.Cast"(%[[T]]) : (tensor<5x3x4xf16>) -> tensor<5x3x4xf32> loc(#[[LT32:loc[0-9]+]])
// CHECK:      %[[L:[0-9]+]]:3 = "tpu.LSTM"(%[[T32]], %[[W:[0-9]+]], %[[R:[0-9]+]], %[[B:[0-9]+]], %[[N:[0-9]+]], %[[N]], %[[N]]) {bidirectional = false, hidden_size = 6 : i64} : (tensor<5x3x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>, tensor<1x48xf32>, none, none, none) -> (tensor<5x1x3x6xf32>, none, tensor<1x3x6xf32>) loc(#[[LL:loc[0-9]+]])
// CHECK-NEXT: %[[G:[0-9]+]]:2 = "tpu.GRU"(%[[X:[0-9]+]], {{.*}}) {batch_first = true, bidirectional = true, hidden_size = 6 : i64, linear_before_reset = false} : (tensor<3x5x4xf32>, tensor<2x18x4xf32>, tensor<2x18x6xf32>, none, tensor<3x2x6xf32>) -> (tensor<3x5x2x6xf32>, tensor<3x2x6xf32>) loc(#[[LG:loc[0-9]+]])
// CHECK-NEXT: return %[[L]]#0, %[[L]]#2, %[[G]]#0, %[[G]]#1 : tensor<5x1x3x6xf32>, tensor<1x3x6xf32>, tensor<3x5x2x6xf32>, tensor<3x2x6xf32>
// CHECK-DAG:  #[[LT]] = loc("t")
// CHECK-DAG:  #[[LT32]] = loc("t_f32")
// CHECK-DAG:  #[[Y:loc[0-9]+]] = loc("y")
// CHECK-DAG:  #[[YH:loc[0-9]+]] = loc("y_h")
// CHECK-DAG:  #[[YC:loc[0-9]+]] = loc("y_c")
// CHECK-DAG:  #[[GY:loc[0-9]+]] = loc("g")
// CHECK-DAG:  #[[GH:loc[0-9]+]] = loc("g_h")
// CHECK-DAG:  #[[LL]] = loc(fused[#[[Y]], #[[YH]], #[[YC]]])
// CHECK-DAG:  #[[LG]] = loc(fused[#[[GY]], #[[GH]]])
module attributes {module.name = "m", module.state = "TOP_F32"} {
  func.func @main(%arg0: tensor<5x3x4xf32>, %arg1: tensor<3x5x4xf32>, %arg2: tensor<3x2x6xf32>) -> (tensor<5x1x3x6xf32>, tensor<1x3x6xf32>, tensor<3x5x2x6xf32>, tensor<3x2x6xf32>) {
    %none = "top.None"() : () -> none loc("none")
    %x = "top.Input"(%arg0) : (tensor<5x3x4xf32>) -> tensor<5x3x4xf32> loc("x")
    %xb = "top.Input"(%arg1) : (tensor<3x5x4xf32>) -> tensor<3x5x4xf32> loc("xb")
    %h0 = "top.Input"(%arg2) : (tensor<3x2x6xf32>) -> tensor<3x2x6xf32> loc("h0")
    %t = "top.Tanh"(%x) : (tensor<5x3x4xf32>) -> tensor<5x3x4xf32> loc("t")
    %w = "top.Weight"() : () -> tensor<1x24x4xf32> loc("w")
    %r = "top.Weight"() : () -> tensor<1x24x6xf32> loc("r")
    %b = "top.Weight"() : () -> tensor<1x48xf32> loc("b")
    %gw = "top.Weight"() : () -> tensor<2x18x4xf32> loc("gw")
    %gr = "top.Weight"() : () -> tensor<2x18x6xf32> loc("gr")
    %0:3 = "top.LSTM"(%t, %w, %r, %b, %none, %none, %none) {hidden_size = 6 : i64, bidirectional = false} : (tensor<5x3x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>, tensor<1x48xf32>, none, none, none) -> (tensor<5x1x3x6xf32>, none, tensor<1x3x6xf32>) loc(fused["y", "y_h", "y_c"])
    %1:2 = "top.GRU"(%xb, %gw, %gr, %none, %h0) {hidden_size = 6 : i64, bidirectional = true, batch_first = true, linear_before_reset = false} : (tensor<3x5x4xf32>, tensor<2x18x4xf32>, tensor<2x18x6xf32>, none, tensor<3x2x6xf32>) -> (tensor<3x5x2x6xf32>, tensor<3x2x6xf32>) loc(fused["g", "g_h"])
    return %0#0, %0#2, %1#0, %1#1 : tensor<5x1x3x6xf32>, tensor<1x3x6xf32>, tensor<3x5x2x6xf32>, tensor<3x2x6xf32>
  }
}

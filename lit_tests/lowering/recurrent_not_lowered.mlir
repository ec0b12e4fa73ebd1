// RUN: not tpuc-opt %s --processor-assign="chip=bm1684x mode=F32" --convert-top-to-tpu 2>&1 | filecheck %s
// LSTM and GRU have no Tpu op or cmodel record yet: the lowering names the op, never passes it through.

// CHECK: error: convert-top-to-tpu: 'top.LSTM' op {{.*}}no Tpu lowering for top.LSTM yet
module attributes {module.name = "m", module.state = "TOP_F32"} {
  func.func @main(%arg0: tensor<5x3x4xf32>) -> tensor<5x1x3x6xf32> {
    %none = "top.None"() : () -> none loc("none")
    %x = "top.Input"(%arg0) : (tensor<5x3x4xf32>) -> tensor<5x3x4xf32> loc("x")
    %w = "top.Weight"() : () -> tensor<1x24x4xf32> loc("w")
    %r = "top.Weight"() : () -> tensor<1x24x6xf32> loc("r")
    %0:3 = "top.LSTM"(%x, %w, %r, %none, %none, %none, %none) {hidden_size = 6 : i64, bidirectional = false} : (tensor<5x3x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>, none, none, none, none) -> (tensor<5x1x3x6xf32>, none, none) loc(fused["y", "y_h", "y_c"])
    return %0#0 : tensor<5x1x3x6xf32>
  }
}

// RUN: tpuc-opt %s --shape-infer | filecheck %s
// LSTM and GRU (ONNX layouts): Y [seq, dirs, batch, H] and the final states [dirs, batch, H];
// batch_first: Y [batch, seq, dirs, H], states [batch, dirs, H]. A `none` result stays none.

// CHECK: "top.LSTM"{{.*}} -> (tensor<5x1x3x6xf32>, tensor<1x3x6xf32>, tensor<1x3x6xf32>)
// CHECK: "top.LSTM"{{.*}} -> (tensor<3x5x2x6xf32>, tensor<3x2x6xf32>, none)
// CHECK: "top.GRU"{{.*}} -> (tensor<5x2x3x6xf32>, tensor<2x3x6xf32>)
// CHECK: "top.GRU"{{.*}} -> (none, tensor<3x1x6xf32>)
func.func @main(%x: tensor<5x3x4xf32>, %xb: tensor<3x5x4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %w1 = "top.Weight"() : () -> tensor<1x24x4xf32> loc("w1")
  %r1 = "top.Weight"() : () -> tensor<1x24x6xf32> loc("r1")
  %b1 = "top.Weight"() : () -> tensor<1x48xf32> loc("b1")
  %w2 = "top.Weight"() : () -> tensor<2x24x4xf32> loc("w2")
  %r2 = "top.Weight"() : () -> tensor<2x24x6xf32> loc("r2")
  %gw2 = "top.Weight"() : () -> tensor<2x18x4xf32> loc("gw2")
  %gr2 = "top.Weight"() : () -> tensor<2x18x6xf32> loc("gr2")
  %gw1 = "top.Weight"() : () -> tensor<1x18x4xf32> loc("gw1")
  %gr1 = "top.Weight"() : () -> tensor<1x18x6xf32> loc("gr1")
  %0:3 = "top.LSTM"(%x, %w1, %r1, %b1, %none, %none, %none) {hidden_size = 6 : i64, bidirectional = false} : (tensor<5x3x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>, tensor<1x48xf32>, none, none, none) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) loc(fused["y", "y_h", "y_c"])
  %1:3 = "top.LSTM"(%xb, %w2, %r2, %none, %none, %none, %none) {hidden_size = 6 : i64, bidirectional = true, batch_first = true} : (tensor<3x5x4xf32>, tensor<2x24x4xf32>, tensor<2x24x6xf32>, none, none, none, none) -> (tensor<*xf32>, tensor<*xf32>, none) loc(fused["yb", "yb_h", "yb_c"])
  %2:2 = "top.GRU"(%x, %gw2, %gr2, %none, %none) {hidden_size = 6 : i64, bidirectional = true} : (tensor<5x3x4xf32>, tensor<2x18x4xf32>, tensor<2x18x6xf32>, none, none) -> (tensor<*xf32>, tensor<*xf32>) loc(fused["g", "g_h"])
  %3:2 = "top.GRU"(%xb, %gw1, %gr1, %none, %none) {hidden_size = 6 : i64, bidirectional = false, batch_first = true, linear_before_reset = false} : (tensor<3x5x4xf32>, tensor<1x18x4xf32>, tensor<1x18x6xf32>, none, none) -> (none, tensor<*xf32>) loc(fused["gb", "gb_h"])
  func.return %0#0, %0#1, %0#2, %1#0, %1#1, %2#0, %3#1 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

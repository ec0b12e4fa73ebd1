// RUN: tpuc-opt %s --shape-infer | filecheck %s
// A result keeps its own element type (Cast to f16); a `none` result takes the first tensor
// operand's element type.

// CHECK: "top.Cast"{{.*}} -> tensor<2x3xf16>
// CHECK: "top.Relu"{{.*}} -> tensor<2x3xf16>
// CHECK: "top.Sigmoid"{{.*}} -> tensor<2x3xf32>
// CHECK: "top.Cast"{{.*}} -> tensor<2x3xf8E4M3FN>
// CHECK: "top.Cast"{{.*}} -> tensor<2x3xbf16>
// CHECK: "top.Cast"{{.*}} -> tensor<2x3xi4>
func.func @main(%x: tensor<2x3xf32>) -> (tensor<*xf16>, none, none, tensor<*xf8E4M3FN>, tensor<*xbf16>, tensor<*xi4>) {
  %0 = "top.Cast"(%x) : (tensor<2x3xf32>) -> tensor<*xf16> loc("to_f16")
  %1 = "top.Relu"(%0) : (tensor<*xf16>) -> none loc("relu_f16")
  %2 = "top.Sigmoid"(%x) : (tensor<2x3xf32>) -> none loc("sigmoid")
  %3 = "top.Cast"(%x) {saturate = false} : (tensor<2x3xf32>) -> tensor<*xf8E4M3FN> loc("to_f8")
  %4 = "top.Cast"(%x) : (tensor<2x3xf32>) -> tensor<*xbf16> loc("to_bf16")
  %5 = "top.Cast"(%x) {round_mode = "HalfToEven"} : (tensor<2x3xf32>) -> tensor<*xi4> loc("to_i4")
  func.return %0, %1, %2, %3, %4, %5 : tensor<*xf16>, none, none, tensor<*xf8E4M3FN>, tensor<*xbf16>, tensor<*xi4>
}

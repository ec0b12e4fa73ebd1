// RUN: tpuc-opt %s --shape-infer | filecheck %s
// A result keeps its own element type (Cast to f16); a `none` result takes the first tensor
// operand's element type.

// CHECK: "top.Cast"{{.*}} -> tensor<2x3xf16>
// CHECK: "top.Relu"{{.*}} -> tensor<2x3xf16>
// CHECK: "top.Sigmoid"{{.*}} -> tensor<2x3xf32>
func.func @main(%x: tensor<2x3xf32>) -> (tensor<*xf16>, none, none) {
  %0 = "top.Cast"(%x) : (tensor<2x3xf32>) -> tensor<*xf16> loc("to_f16")
  %1 = "top.Relu"(%0) : (tensor<*xf16>) -> none loc("relu_f16")
  %2 = "top.Sigmoid"(%x) : (tensor<2x3xf32>) -> none loc("sigmoid")
  func.return %0, %1, %2 : tensor<*xf16>, none, none
}

// RUN: tpuc-opt %s --shape-infer | filecheck %s
// The inverse trigonometric and hyperbolic ops ONNX's Asin, Asinh and Acosh become keep the shape.

// CHECK: "top.Arcsin"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Arcsinh"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Arccosh"{{.*}} -> tensor<2x3x4xf32>
func.func @main(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
  %0 = "top.Arcsin"(%x) : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("arcsin")
  %1 = "top.Arcsinh"(%0) : (tensor<*xf32>) -> tensor<*xf32> loc("arcsinh")
  %2 = "top.Arccosh"(%1) : (tensor<*xf32>) -> tensor<*xf32> loc("arccosh")
  func.return %2 : tensor<*xf32>
}

// RUN: tpuc-opt %s --shape-infer | filecheck %s
// BatchNorm, Scale and PRelu take per-channel parameters and keep the input's shape.

// CHECK: "top.BatchNorm"{{.*}} -> tensor<1x3x4x4xf32>
// CHECK: "top.BatchNorm"{{.*}} -> tensor<1x3x4x4xf32>
// CHECK: "top.Scale"{{.*}} -> tensor<1x3x4x4xf32>
// CHECK: "top.PRelu"{{.*}} -> tensor<1x3x4x4xf32>
// CHECK: "top.PRelu"{{.*}} -> tensor<1x3x4x4xf32>
func.func @main(%x: tensor<1x3x4x4xf32>) -> tensor<*xf32> {
  %none = "top.None"() : () -> none loc("none")
  %mean = "top.Weight"() : () -> tensor<3xf32> loc("bn_mean")
  %var = "top.Weight"() : () -> tensor<3xf32> loc("bn_var")
  %s = "top.Weight"() : () -> tensor<1x3x1x1xf32> loc("scale_s")
  %b = "top.Weight"() : () -> tensor<1x3x1x1xf32> loc("scale_b")
  %one = "top.Weight"() : () -> tensor<1xf32> loc("slope1")
  %0 = "top.BatchNorm"(%x, %mean, %var, %none, %none) {epsilon = 1.000000e-05 : f64} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, none, none) -> tensor<*xf32> loc("bn")
  %1 = "top.BatchNorm"(%0, %mean, %var, %mean, %var) : (tensor<*xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<*xf32> loc("bn_affine")
  %2 = "top.Scale"(%1, %s, %b) : (tensor<*xf32>, tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32>) -> tensor<*xf32> loc("scale")
  %3 = "top.PRelu"(%2, %s) : (tensor<*xf32>, tensor<1x3x1x1xf32>) -> tensor<*xf32> loc("prelu_channel")
  %4 = "top.PRelu"(%3, %one) : (tensor<*xf32>, tensor<1xf32>) -> tensor<*xf32> loc("prelu_shared")
  func.return %4 : tensor<*xf32>
}

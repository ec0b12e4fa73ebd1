// RUN: tpuc-opt %s --shape-infer | filecheck %s
// Unary element-wise ops: the result has the input's shape; each consumes the previous one.

// CHECK: "top.Exp"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Log"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Sqrt"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Rsqrt"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Abs"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Erf"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.SiLU"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Floor"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Ceil"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Round"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Sign"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Softsign"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Softplus"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Sin"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Cos"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Sinh"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Cosh"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Tan"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Arctanh"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Arccos"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Mish"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.HardSwish"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Relu"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Tanh"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Sigmoid"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.LeakyRelu"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Elu"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.HardSigmoid"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.GELU"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Swish"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Pow"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Clip"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Reciprocal"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.CompareConst"{{.*}} -> tensor<2x3x4xf32>
func.func @main(%x: tensor<2x3x4xf32>) -> tensor<*xf32> {
  %0 = "top.Exp"(%x) : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("exp")
  %1 = "top.Log"(%0) : (tensor<*xf32>) -> tensor<*xf32> loc("log")
  %2 = "top.Sqrt"(%1) : (tensor<*xf32>) -> tensor<*xf32> loc("sqrt")
  %3 = "top.Rsqrt"(%2) : (tensor<*xf32>) -> tensor<*xf32> loc("rsqrt")
  %4 = "top.Abs"(%3) : (tensor<*xf32>) -> tensor<*xf32> loc("abs")
  %5 = "top.Erf"(%4) : (tensor<*xf32>) -> tensor<*xf32> loc("erf")
  %6 = "top.SiLU"(%5) : (tensor<*xf32>) -> tensor<*xf32> loc("silu")
  %7 = "top.Floor"(%6) : (tensor<*xf32>) -> tensor<*xf32> loc("floor")
  %8 = "top.Ceil"(%7) : (tensor<*xf32>) -> tensor<*xf32> loc("ceil")
  %9 = "top.Round"(%8) : (tensor<*xf32>) -> tensor<*xf32> loc("round")
  %10 = "top.Sign"(%9) : (tensor<*xf32>) -> tensor<*xf32> loc("sign")
  %11 = "top.Softsign"(%10) : (tensor<*xf32>) -> tensor<*xf32> loc("softsign")
  %12 = "top.Softplus"(%11) : (tensor<*xf32>) -> tensor<*xf32> loc("softplus")
  %13 = "top.Sin"(%12) : (tensor<*xf32>) -> tensor<*xf32> loc("sin")
  %14 = "top.Cos"(%13) : (tensor<*xf32>) -> tensor<*xf32> loc("cos")
  %15 = "top.Sinh"(%14) : (tensor<*xf32>) -> tensor<*xf32> loc("sinh")
  %16 = "top.Cosh"(%15) : (tensor<*xf32>) -> tensor<*xf32> loc("cosh")
  %17 = "top.Tan"(%16) : (tensor<*xf32>) -> tensor<*xf32> loc("tan")
  %18 = "top.Arctanh"(%17) : (tensor<*xf32>) -> tensor<*xf32> loc("arctanh")
  %19 = "top.Arccos"(%18) : (tensor<*xf32>) -> tensor<*xf32> loc("arccos")
  %20 = "top.Mish"(%19) : (tensor<*xf32>) -> tensor<*xf32> loc("mish")
  %21 = "top.HardSwish"(%20) : (tensor<*xf32>) -> tensor<*xf32> loc("hardswish")
  %22 = "top.Relu"(%21) {relu_limit = 6.000000e+00 : f64} : (tensor<*xf32>) -> tensor<*xf32> loc("relu")
  %23 = "top.Tanh"(%22) : (tensor<*xf32>) -> tensor<*xf32> loc("tanh")
  %24 = "top.Sigmoid"(%23) {log = true} : (tensor<*xf32>) -> tensor<*xf32> loc("sigmoid")
  %25 = "top.LeakyRelu"(%24) {alpha = 1.000000e-01 : f64} : (tensor<*xf32>) -> tensor<*xf32> loc("leakyrelu")
  %26 = "top.Elu"(%25) {alpha = 1.000000e+00 : f64} : (tensor<*xf32>) -> tensor<*xf32> loc("elu")
  %27 = "top.HardSigmoid"(%26) : (tensor<*xf32>) -> tensor<*xf32> loc("hardsigmoid")
  %28 = "top.GELU"(%27) {approx_mode = "tanh"} : (tensor<*xf32>) -> tensor<*xf32> loc("gelu")
  %29 = "top.Swish"(%28) {beta = 1.000000e+00 : f64} : (tensor<*xf32>) -> tensor<*xf32> loc("swish")
  %30 = "top.Pow"(%29) {exponent = 2.000000e+00 : f64} : (tensor<*xf32>) -> tensor<*xf32> loc("pow")
  %31 = "top.Clip"(%30) {min = 0.000000e+00 : f64, max = 6.000000e+00 : f64} : (tensor<*xf32>) -> tensor<*xf32> loc("clip")
  %32 = "top.Reciprocal"(%31) : (tensor<*xf32>) -> tensor<*xf32> loc("reciprocal")
  %33 = "top.CompareConst"(%32) {mode = "Greater", const_val = 0.000000e+00 : f64} : (tensor<*xf32>) -> tensor<*xf32> loc("compareconst")
  func.return %33 : tensor<*xf32>
}

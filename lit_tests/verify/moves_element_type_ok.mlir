// RUN: tpuc-opt %s --split-input-file | filecheck %s
// What the data-movement rule (moves_element_type.mlir) must let through: another calibrated
// range of the same expressed type (each tensor has its own, import-calibration-table writes
// them so), a plain float weight moved into a calibrated tensor, index operands and index
// results of other types, `none` branches, the same !quant.uniform type on both sides (the
// strip-io-quant form: an int8 input behind its view), and the ops that convert (Cast,
// RequantInt), which the rule does not cover.

// CHECK-LABEL: func.func @calibrated
// CHECK: "top.Reshape"(%{{.*}}) {{.*}} -> tensor<4x!quant.calibrated<f32<-2.000000e+00:2.000000e+00>>>
// CHECK: "top.Concat"(%{{.*}}, %{{.*}}) {{.*}} -> tensor<8x!quant.calibrated<f32<-3.000000e+00:3.000000e+00>>>
func.func @calibrated(%x: tensor<1x4x!quant.calibrated<f32<-1.0:1.0>>>) {
  %w = "top.Weight"() : () -> tensor<4xf32> loc("w")
  %0 = "top.Reshape"(%x) {shape = [4]} : (tensor<1x4x!quant.calibrated<f32<-1.0:1.0>>>) -> tensor<4x!quant.calibrated<f32<-2.0:2.0>>> loc("r")
  %1 = "top.Concat"(%0, %w) {axis = 0 : i64} : (tensor<4x!quant.calibrated<f32<-2.0:2.0>>>, tensor<4xf32>) -> tensor<8x!quant.calibrated<f32<-3.0:3.0>>> loc("cat")
  func.return
}

// -----

// CHECK-LABEL: func.func @indices
// CHECK: "top.Gather"{{.*}} -> tensor<2x4xf16>
// CHECK: "top.TopK"{{.*}} -> (tensor<1x2xf16>, tensor<1x2xi64>)
// CHECK: "top.Arg"{{.*}} -> (tensor<5x1xi64>, tensor<5x1xf16>)
// CHECK: "top.MaxPoolWithMask"{{.*}} -> (tensor<1x1x2x2xf16>, tensor<1x1x2x2xi32>)
// CHECK: "top.Reshape"{{.*}} : (tensor<5x4xf16>, tensor<2xi64>) -> tensor<4x5xf16>
func.func @indices(%x: tensor<5x4xf16>, %y: tensor<1x6xf16>, %z: tensor<1x1x4x4xf16>) {
  %i = "top.Weight"() : () -> tensor<2xi32> loc("idx")
  %s = "top.Weight"() : () -> tensor<2xi64> loc("shape")
  %0 = "top.Gather"(%x, %i) {axis = 0 : i64} : (tensor<5x4xf16>, tensor<2xi32>) -> tensor<2x4xf16> loc("g")
  %1:2 = "top.TopK"(%y) {axis = 1 : i64, K = 2 : i64} : (tensor<1x6xf16>) -> (tensor<1x2xf16>, tensor<1x2xi64>) loc("tk")
  %2:2 = "top.Arg"(%x) {axis = 1 : i64, keepdims = true, mode = "ArgMax"} : (tensor<5x4xf16>) -> (tensor<5x1xi64>, tensor<5x1xf16>) loc("arg")
  %3:2 = "top.MaxPoolWithMask"(%z) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x1x4x4xf16>) -> (tensor<1x1x2x2xf16>, tensor<1x1x2x2xi32>) loc("mpm")
  %4 = "top.Reshape"(%x, %s) : (tensor<5x4xf16>, tensor<2xi64>) -> tensor<4x5xf16> loc("rs")
  func.return
}

// -----

// The condition is not moved; a constant branch is `none`.
// CHECK-LABEL: func.func @where
// CHECK: "top.Where"(%{{.*}}, %{{.*}}, %{{.*}}) {{.*}} -> tensor<4xf16>
// CHECK: "top.Where"(%{{.*}}, %{{.*}}, %{{.*}}) {{.*}} -> tensor<4xbf16>
func.func @where(%c: tensor<4xf32>, %t: tensor<4xf16>, %b: tensor<4xbf16>) {
  %none = "top.None"() : () -> none loc("none")
  %0 = "top.Where"(%c, %t, %t) : (tensor<4xf32>, tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16> loc("w")
  %1 = "top.Where"(%c, %none, %b) {x_is_const = true, x_const_val = 1.0 : f64} : (tensor<4xf32>, none, tensor<4xbf16>) -> tensor<4xbf16> loc("w_const")
  func.return
}

// -----

// CHECK-LABEL: func.func @conversions
// CHECK: "top.Cast"{{.*}} : (tensor<1x4xf16>) -> tensor<1x4xf32>
// CHECK: "tpu.Cast"{{.*}} : (tensor<1x4xf32>) -> tensor<1x4x!quant.uniform<i8:f32, 5.000000e-01>>
// CHECK: "tpu.RequantInt"{{.*}} : (tensor<1x4x!quant.uniform<i8:f32, 5.000000e-01>>) -> tensor<1x4x!quant.uniform<i8:f32, 2.500000e-01>>
func.func @conversions(%x: tensor<1x4xf16>) {
  %0 = "top.Cast"(%x) : (tensor<1x4xf16>) -> tensor<1x4xf32> loc("c")
  %1 = "tpu.Cast"(%0) : (tensor<1x4xf32>) -> tensor<1x4x!quant.uniform<i8:f32, 0.5>> loc("q")
  %2 = "tpu.RequantInt"(%1) {multiplier = [1], rshift = [1], quant_mode = #tpu<rq_mode MultiplierShift>} : (tensor<1x4x!quant.uniform<i8:f32, 0.5>>) -> tensor<1x4x!quant.uniform<i8:f32, 0.25>> loc("rq")
  func.return
}

// -----

// strip-io-quant's form: the input and its view carry the stripped cast's int8 type, the
// function argument stays f32 (top.Input is not a data-movement op here).
// CHECK-LABEL: func.func @main
// CHECK: "top.Input"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4x!quant.uniform<i8:f32, 5.000000e-01:-3>>
// CHECK: "tpu.Reshape"{{.*}} -> tensor<4x!quant.uniform<i8:f32, 5.000000e-01:-3>>
// CHECK: "tpu.Concat"{{.*}} -> tensor<8x!quant.uniform<i8:f32, 5.000000e-01:-3>>
func.func @main(%arg0: tensor<1x4xf32>) -> tensor<8x!quant.uniform<i8:f32, 0.5:-3>> {
  %x = "top.Input"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4x!quant.uniform<i8:f32, 0.5:-3>> loc("x")
  %0 = "tpu.Reshape"(%x) {shape = [4]} : (tensor<1x4x!quant.uniform<i8:f32, 0.5:-3>>) -> tensor<4x!quant.uniform<i8:f32, 0.5:-3>> loc("x_reshape")
  %1 = "tpu.Concat"(%0, %0) {axis = 0 : i64} : (tensor<4x!quant.uniform<i8:f32, 0.5:-3>>, tensor<4x!quant.uniform<i8:f32, 0.5:-3>>) -> tensor<8x!quant.uniform<i8:f32, 0.5:-3>> loc("cat")
  return %1 : tensor<8x!quant.uniform<i8:f32, 0.5:-3>>
}

// -----

// tpu.Pool2D's Avg converts (a window mean, requantized by multiplier/rshift): the rule is Max's only.
// CHECK-LABEL: func.func @avg
// CHECK: "tpu.Pool2D"{{.*}} -> tensor<1x2x2x2x!quant.uniform<i8:f32, 2.500000e-01>>
func.func @avg(%x: tensor<1x2x4x4x!quant.uniform<i8:f32, 0.5>>) {
  %0 = "tpu.Pool2D"(%x) {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0], pool_mode = #tpu<pool_mode Avg>, multiplier = 1 : i64, rshift = 0 : i64} : (tensor<1x2x4x4x!quant.uniform<i8:f32, 0.5>>) -> tensor<1x2x2x2x!quant.uniform<i8:f32, 0.25>> loc("pavg")
  func.return
}

// RUN: not tpuc-opt %s --split-input-file 2>&1 | filecheck %s
// An op that moves or selects elements (Reshape, Permute, Concat, Gather's data, MaxPool, ...)
// does not convert them: its result has its input's element type (a calibrated type counts as
// its expressed type; a !quant.uniform type must be the same, scale and zero point included).
// Each case below is refused, naming the op and both types (docs/dialect.md "Element types");
// moves_element_type_ok.mlir holds the forms that must pass.

// CHECK: moves_element_type.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.Reshape' op "r" result element type f32 differs from input element type f16: it moves elements without converting them
func.func @main(%x: tensor<1x4xf16>) {
  %0 = "top.Reshape"(%x) {shape = [4]} : (tensor<1x4xf16>) -> tensor<4xf32> loc("r")
  func.return
}

// -----

// CHECK: moves_element_type.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.Permute' op "p" result element type bf16 differs from input element type f32
func.func @main(%x: tensor<1x2x3xf32>) {
  %0 = "top.Permute"(%x) {order = [0, 2, 1]} : (tensor<1x2x3xf32>) -> tensor<1x3x2xbf16> loc("p")
  func.return
}

// -----

// The result's shape is unknown (unranked): the element types are still compared.
// CHECK: moves_element_type.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.Squeeze' op "sq" result element type f16 differs from input element type f32
func.func @main(%x: tensor<1x4xf32>) {
  %0 = "top.Squeeze"(%x) {axes = [0]} : (tensor<1x4xf32>) -> tensor<*xf16> loc("sq")
  func.return
}

// -----

// CHECK: moves_element_type.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.Concat' op "cat" inputs #1 element type f32 differs from inputs #0 element type f16
func.func @main(%a: tensor<1x4xf16>, %b: tensor<1x4xf32>) {
  %0 = "top.Concat"(%a, %b) {axis = 1 : i64} : (tensor<1x4xf16>, tensor<1x4xf32>) -> tensor<1x8xf16> loc("cat")
  func.return
}

// -----

// CHECK: moves_element_type.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.Split' op "sp" outputs #1 element type f16 differs from input element type f32
func.func @main(%x: tensor<1x4xf32>) {
  %0:2 = "top.Split"(%x) {axis = 1 : i64, num = 2 : i64} : (tensor<1x4xf32>) -> (tensor<1x2xf32>, tensor<1x2xf16>) loc("sp")
  func.return
}

// -----

// CHECK: moves_element_type.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'top.Gather' op "g" result element type f32 differs from input element type f16
func.func @main(%x: tensor<5x4xf16>) {
  %i = "top.Weight"() : () -> tensor<2xi32> loc("idx")
  %0 = "top.Gather"(%x, %i) {axis = 0 : i64} : (tensor<5x4xf16>, tensor<2xi32>) -> tensor<2x4xf32> loc("g")
  func.return
}

// -----

// CHECK: moves_element_type.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.MaxPool' op "mp" result element type f32 differs from input element type f16
func.func @main(%x: tensor<1x1x4x4xf16>) {
  %0 = "top.MaxPool"(%x) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x1x4x4xf16>) -> tensor<1x1x2x2xf32> loc("mp")
  func.return
}

// -----

// TopK's values are picked from the input (its indices are not).
// CHECK: moves_element_type.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.TopK' op "tk" values element type f32 differs from input element type f16
func.func @main(%x: tensor<1x6xf16>) {
  %0:2 = "top.TopK"(%x) {axis = 1 : i64, K = 2 : i64} : (tensor<1x6xf16>) -> (tensor<1x2xf32>, tensor<1x2xi64>) loc("tk")
  func.return
}

// -----

// CHECK: moves_element_type.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.Where' op "w" fbrn element type f32 differs from tbrn element type f16
func.func @main(%c: tensor<4xf32>, %t: tensor<4xf16>, %f: tensor<4xf32>) {
  %0 = "top.Where"(%c, %t, %f) : (tensor<4xf32>, tensor<4xf16>, tensor<4xf32>) -> tensor<4xf16> loc("w")
  func.return
}

// -----

// CHECK: moves_element_type.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: 'top.ScatterND' op "sc" updates element type f32 differs from input_data element type f16
func.func @main(%x: tensor<4x2xf16>, %u: tensor<1x2xf32>) {
  %i = "top.Weight"() : () -> tensor<1x1xi32> loc("idx")
  %0 = "top.ScatterND"(%x, %i, %u) : (tensor<4x2xf16>, tensor<1x1xi32>, tensor<1x2xf32>) -> tensor<4x2xf16> loc("sc")
  func.return
}

// -----

// Calibrated types with other expressed types: a conversion, not another range.
// CHECK: moves_element_type.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.Flatten' op "fl" result element type !quant.calibrated<f16<-1.0:1.0>> differs from input element type !quant.calibrated<f32<-1.0:1.0>>
func.func @main(%x: tensor<1x2x3x!quant.calibrated<f32<-1.0:1.0>>>) {
  %0 = "top.Flatten"(%x) : (tensor<1x2x3x!quant.calibrated<f32<-1.0:1.0>>>) -> tensor<6x!quant.calibrated<f16<-1.0:1.0>>> loc("fl")
  func.return
}

// -----

// INT8: another scale needs a tpu.RequantInt first (the Reshape only copies the stored integers,
// which would then mean other values).
// CHECK: moves_element_type.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'tpu.Reshape' op "r8" result element type !quant.uniform<i8:f32, 0.25> differs from input element type !quant.uniform<i8:f32, 0.5>
func.func @main(%x: tensor<1x4x!quant.uniform<i8:f32, 0.5>>) {
  %0 = "tpu.Reshape"(%x) {shape = [4]} : (tensor<1x4x!quant.uniform<i8:f32, 0.5>>) -> tensor<4x!quant.uniform<i8:f32, 0.25>> loc("r8")
  func.return
}

// -----

// CHECK: moves_element_type.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'tpu.Concat' op "cat8" inputs #1 element type !quant.uniform<u8:f32, 0.5:3> differs from inputs #0 element type !quant.uniform<u8:f32, 0.5:2>
func.func @main(%a: tensor<1x4x!quant.uniform<u8:f32, 0.5:2>>, %b: tensor<1x4x!quant.uniform<u8:f32, 0.5:3>>) {
  %0 = "tpu.Concat"(%a, %b) {axis = 1 : i64} : (tensor<1x4x!quant.uniform<u8:f32, 0.5:2>>, tensor<1x4x!quant.uniform<u8:f32, 0.5:3>>) -> tensor<1x8x!quant.uniform<u8:f32, 0.5:2>> loc("cat8")
  func.return
}

// -----

// A Tpu op that takes its Top op's row (tpu.TopK) takes its rule too.
// CHECK: moves_element_type.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'tpu.TopK' op "tk" values element type f16 differs from input element type f32
func.func @main(%x: tensor<1x6xf32>) {
  %0:2 = "tpu.TopK"(%x) {axis = 1 : i64, K = 2 : i64} : (tensor<1x6xf32>) -> (tensor<1x2xf16>, tensor<1x2xi64>) loc("tk")
  func.return
}

// -----

// CHECK: moves_element_type.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: 'tpu.Load' op "load_x" result element type f16 differs from input element type f32
func.func @main(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf16> {
  %x = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("x")
  %g = "tpu.Group"(%x) ({
    %l = "tpu.Load"(%x) {ginfo = #tpu.lg<id = 0>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf16> loc("load_x")
    %r = "tpu.Relu"(%l) {ginfo = #tpu.lg<id = 1>} : (tensor<1x4x8x8xf16>) -> tensor<1x4x8x8xf16> loc("r")
    %s = "tpu.Store"(%r) {ginfo = #tpu.lg<id = 2>} : (tensor<1x4x8x8xf16>) -> tensor<1x4x8x8xf16> loc("r")
    "tpu.Yield"(%s) : (tensor<1x4x8x8xf16>) -> () loc("r")
  }) {nsecs = 1 : i64, hsecs = 1 : i64, flow = [-1, 0, 1, 2], lmem_bytes = 0 : i64} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf16> loc("r")
  return %g : tensor<1x4x8x8xf16>
}

// -----

// tpu.Pool2D moves elements where its pool_mode is Max (Moves.when): another scale is refused.
// CHECK: moves_element_type.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'tpu.Pool2D' op "pmax" result element type !quant.uniform<i8:f32, 0.25> differs from input element type !quant.uniform<i8:f32, 0.5>
func.func @main(%x: tensor<1x2x4x4x!quant.uniform<i8:f32, 0.5>>) {
  %0 = "tpu.Pool2D"(%x) {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0], pool_mode = #tpu<pool_mode Max>} : (tensor<1x2x4x4x!quant.uniform<i8:f32, 0.5>>) -> tensor<1x2x2x2x!quant.uniform<i8:f32, 0.25>> loc("pmax")
  func.return
}

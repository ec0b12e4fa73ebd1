// RUN: tpuc-opt %s --split-input-file --canonicalize | filecheck %s

// A tpu.Cast pair F32 -> F16 -> F32 between two F32 ops goes: it only loses precision and range.
// CHECK-LABEL: func.func @round_trip
// CHECK: %[[A:[0-9]+]] = "tpu.Relu"(%0)
// CHECK-NEXT: %[[B:[0-9]+]] = "tpu.Relu"(%[[A]])
// CHECK-NEXT: return %[[B]]
module attributes {module.name = "m", module.state = "TPU_LOWERED"} {
  func.func @round_trip(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("x")
    %1 = "tpu.Relu"(%0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("a")
    %2 = "tpu.Cast"(%1) : (tensor<1x4xf32>) -> tensor<1x4xf16> loc("a_f16")
    %3 = "tpu.Cast"(%2) : (tensor<1x4xf16>) -> tensor<1x4xf32> loc("a_f16_f32")
    %4 = "tpu.Relu"(%3) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("b")
    return %4 : tensor<1x4xf32>
  }
}

// -----

// The f16 value is also read by an F16 op: the pair's second cast goes, the first stays.
// CHECK-LABEL: func.func @shared
// CHECK: %[[A:[0-9]+]] = "tpu.Relu"(%0)
// CHECK-NEXT: %[[H:[0-9]+]] = "tpu.Cast"(%[[A]]) : (tensor<1x4xf32>) -> tensor<1x4xf16>
// CHECK-NEXT: %[[B:[0-9]+]] = "tpu.Relu"(%[[A]]) : (tensor<1x4xf32>)
// CHECK-NEXT: %[[C:[0-9]+]] = "tpu.Relu"(%[[H]]) : (tensor<1x4xf16>)
module attributes {module.name = "m", module.state = "TPU_LOWERED"} {
  func.func @shared(%arg0: tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf16>) {
    %0 = "top.Input"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("x")
    %1 = "tpu.Relu"(%0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("a")
    %2 = "tpu.Cast"(%1) : (tensor<1x4xf32>) -> tensor<1x4xf16> loc("a_f16")
    %3 = "tpu.Cast"(%2) : (tensor<1x4xf16>) -> tensor<1x4xf32> loc("a_f16_f32")
    %4 = "tpu.Relu"(%3) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("b")
    %5 = "tpu.Relu"(%2) : (tensor<1x4xf16>) -> tensor<1x4xf16> loc("c")
    return %4, %5 : tensor<1x4xf32>, tensor<1x4xf16>
  }
}

// -----

// Must not fire: a Top cast pair is the model's own rounding, and an F16 -> F32 -> F16 tpu pair
// that is returned under its own name keeps that name's op.
// CHECK-LABEL: func.func @must_not
// CHECK: "top.Cast"(%0) : (tensor<1x4xf32>) -> tensor<1x4xf16>
// CHECK-NEXT: "top.Cast"(%{{[0-9]+}}) : (tensor<1x4xf16>) -> tensor<1x4xf32>
// CHECK: "tpu.Cast"({{.*}}) : (tensor<1x4xf32>) -> tensor<1x4xf16>
// CHECK-NEXT: "tpu.Cast"({{.*}}) : (tensor<1x4xf16>) -> tensor<1x4xf32> loc(#[[OUT:loc[0-9]*]])
// CHECK: #[[OUT]] = loc("out")
module attributes {module.name = "m", module.state = "TPU_LOWERED"} {
  func.func @must_not(%arg0: tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>) {
    %0 = "top.Input"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("x")
    %1 = "top.Cast"(%0) : (tensor<1x4xf32>) -> tensor<1x4xf16> loc("t16")
    %2 = "top.Cast"(%1) : (tensor<1x4xf16>) -> tensor<1x4xf32> loc("t32")
    %3 = "tpu.Cast"(%0) : (tensor<1x4xf32>) -> tensor<1x4xf16> loc("x_f16")
    %4 = "tpu.Cast"(%3) : (tensor<1x4xf16>) -> tensor<1x4xf32> loc("out")
    return %2, %4 : tensor<1x4xf32>, tensor<1x4xf32>
  }
}

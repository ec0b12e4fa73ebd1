// Cast cleanup: a Cast to its own type goes; a round trip through a type that holds every value
// of the source goes; a round trip through a narrower type stays (it rounds).
// RUN: tpuc-opt %s --split-input-file --cast-cleanup | filecheck %s
// RUN: tpuc-opt %s --split-input-file --canonicalize | filecheck %s
// Run twice with locations: names decide whether a returned op may go, so they must survive.
// RUN: tpuc-opt %s --split-input-file --cast-cleanup --mlir-print-debuginfo > %t.once
// RUN: tpuc-opt %t.once --split-input-file --cast-cleanup --mlir-print-debuginfo > %t.twice
// RUN: diff %t.once %t.twice

// CHECK-LABEL: func.func @same_type
// CHECK:       %[[X:.*]] = "top.Input"
// CHECK-NEXT:  %[[R:.*]] = "top.Relu"(%[[X]])
// CHECK-NEXT:  return %[[R]] : tensor<2x3xf32>
func.func @same_type(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %1 = "top.Cast"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("noop")
  %2 = "top.Relu"(%1) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("y")
  return %2 : tensor<2x3xf32>
}

// -----
// f16 -> f32 -> f16 and bf16 -> f32 -> bf16 give the input back: both casts go.
// CHECK-LABEL: func.func @widening_round_trip
// CHECK-NOT:   top.Cast
// CHECK:       return %[[A:.*]], %[[B:.*]] : tensor<4xf16>, tensor<4xbf16>
func.func @widening_round_trip(%arg0: tensor<4xf16>, %arg1: tensor<4xbf16>) -> (tensor<4xf16>, tensor<4xbf16>) {
  %0 = "top.Input"(%arg0) : (tensor<4xf16>) -> tensor<4xf16> loc("h")
  %1 = "top.Cast"(%0) : (tensor<4xf16>) -> tensor<4xf32> loc("h_f32")
  %2 = "top.Cast"(%1) : (tensor<4xf32>) -> tensor<4xf16> loc("h_back")
  %3 = "top.Input"(%arg1) : (tensor<4xbf16>) -> tensor<4xbf16> loc("b")
  %4 = "top.Cast"(%3) : (tensor<4xbf16>) -> tensor<4xf32> loc("b_f32")
  %5 = "top.Cast"(%4) : (tensor<4xf32>) -> tensor<4xbf16> loc("b_back")
  %6 = "top.Relu"(%2) : (tensor<4xf16>) -> tensor<4xf16> loc("h_out")
  %7 = "top.Relu"(%5) : (tensor<4xbf16>) -> tensor<4xbf16> loc("b_out")
  return %6, %7 : tensor<4xf16>, tensor<4xbf16>
}

// -----
// The inner cast has another user: only the outer one goes.
// CHECK-LABEL: func.func @inner_cast_shared
// CHECK:       %[[X:.*]] = "top.Input"
// CHECK-NEXT:  %[[W:.*]] = "top.Cast"(%[[X]]) : (tensor<4xf16>) -> tensor<4xf32>
// CHECK-NEXT:  %[[R:.*]] = "top.Relu"(%[[X]])
// CHECK-NEXT:  return %[[R]], %[[W]]
func.func @inner_cast_shared(%arg0: tensor<4xf16>) -> (tensor<4xf16>, tensor<4xf32>) {
  %0 = "top.Input"(%arg0) : (tensor<4xf16>) -> tensor<4xf16> loc("h")
  %1 = "top.Cast"(%0) : (tensor<4xf16>) -> tensor<4xf32> loc("h_f32")
  %2 = "top.Cast"(%1) : (tensor<4xf32>) -> tensor<4xf16> loc("h_back")
  %3 = "top.Relu"(%2) : (tensor<4xf16>) -> tensor<4xf16> loc("y")
  return %3, %1 : tensor<4xf16>, tensor<4xf32>
}

// -----
// Must not fire: a returned cast would hand its output name ("noop", "h_back") to its input.
// CHECK-LABEL: func.func @returned_casts
// CHECK:       "top.Cast"({{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:       "top.Cast"({{.*}}) : (tensor<4xf16>) -> tensor<4xf32>
// CHECK-NEXT:  "top.Cast"({{.*}}) : (tensor<4xf32>) -> tensor<4xf16>
func.func @returned_casts(%arg0: tensor<4xf32>, %arg1: tensor<4xf16>) -> (tensor<4xf32>, tensor<4xf16>) {
  %0 = "top.Input"(%arg0) : (tensor<4xf32>) -> tensor<4xf32> loc("x")
  %1 = "top.Cast"(%0) : (tensor<4xf32>) -> tensor<4xf32> loc("noop")
  %2 = "top.Input"(%arg1) : (tensor<4xf16>) -> tensor<4xf16> loc("h")
  %3 = "top.Cast"(%2) : (tensor<4xf16>) -> tensor<4xf32> loc("h_f32")
  %4 = "top.Cast"(%3) : (tensor<4xf32>) -> tensor<4xf16> loc("h_back")
  return %1, %4 : tensor<4xf32>, tensor<4xf16>
}

// -----
// Must not fire: f32 -> f16 -> f32 rounds and overflows; f16 -> bf16 -> f16 loses mantissa bits;
// bf16 -> f16 -> bf16 loses range; a chain that does not return to its source type.
// CHECK-LABEL: func.func @lossy_round_trips
// CHECK:       "top.Cast"({{.*}}) : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-NEXT:  "top.Cast"({{.*}}) : (tensor<4xf16>) -> tensor<4xf32>
// CHECK:       "top.Cast"({{.*}}) : (tensor<4xf16>) -> tensor<4xbf16>
// CHECK-NEXT:  "top.Cast"({{.*}}) : (tensor<4xbf16>) -> tensor<4xf16>
// CHECK:       "top.Cast"({{.*}}) : (tensor<4xbf16>) -> tensor<4xf16>
// CHECK-NEXT:  "top.Cast"({{.*}}) : (tensor<4xf16>) -> tensor<4xbf16>
// CHECK-NEXT:  "top.Cast"({{.*}}) : (tensor<4xf16>) -> tensor<4xf32>
// CHECK-NEXT:  "top.Cast"({{.*}}) : (tensor<4xf32>) -> tensor<4xbf16>
func.func @lossy_round_trips(%arg0: tensor<4xf32>, %arg1: tensor<4xf16>, %arg2: tensor<4xbf16>) -> (tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xbf16>) {
  %0 = "top.Input"(%arg0) : (tensor<4xf32>) -> tensor<4xf32> loc("f")
  %1 = "top.Cast"(%0) : (tensor<4xf32>) -> tensor<4xf16> loc("f_h")
  %2 = "top.Cast"(%1) : (tensor<4xf16>) -> tensor<4xf32> loc("f_back")
  %3 = "top.Input"(%arg1) : (tensor<4xf16>) -> tensor<4xf16> loc("h")
  %4 = "top.Cast"(%3) : (tensor<4xf16>) -> tensor<4xbf16> loc("h_b")
  %5 = "top.Cast"(%4) : (tensor<4xbf16>) -> tensor<4xf16> loc("h_back")
  %6 = "top.Input"(%arg2) : (tensor<4xbf16>) -> tensor<4xbf16> loc("b")
  %7 = "top.Cast"(%6) : (tensor<4xbf16>) -> tensor<4xf16> loc("b_h")
  %8 = "top.Cast"(%7) : (tensor<4xf16>) -> tensor<4xbf16> loc("b_back")
  %9 = "top.Cast"(%3) : (tensor<4xf16>) -> tensor<4xf32> loc("h_f")
  %10 = "top.Cast"(%9) : (tensor<4xf32>) -> tensor<4xbf16> loc("h_f_b")
  return %2, %5, %8, %10 : tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>, tensor<4xbf16>
}

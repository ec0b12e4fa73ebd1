// Each `// -----` chunk is parsed, run and printed on its own; outputs are joined by the marker.
// RUN: tpuc-opt %s --split-input-file --shape-infer | filecheck %s
// Without --split-input-file the chunks are one module (the marker is just a comment).
// RUN: tpuc-opt %s | filecheck %s --check-prefix=WHOLE

// CHECK:      func.func @first
// CHECK:      "top.Relu"({{.*}}) : (tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK:      {{^// -----$}}
// CHECK:      {{^}}module {
// CHECK-NEXT: func.func @second
// CHECK:      "top.Abs"({{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK:      {{^// -----$}}
// CHECK:      {{^}}module {
// CHECK-NEXT: func.func @third
// CHECK:      "top.Exp"({{.*}}) : (tensor<5xf32>) -> tensor<5xf32>
// CHECK-NOT:  // -----

// WHOLE:      module {
// WHOLE-NOT:  module {
// WHOLE-NOT:  // -----
// WHOLE:      "top.Relu"
// WHOLE:      "top.Abs"
// WHOLE:      "top.Exp"

func.func @first(%arg0: tensor<1x4xf32>) -> tensor<*xf32> {
  %0 = "top.Relu"(%arg0) : (tensor<1x4xf32>) -> tensor<*xf32> loc("first")
  return %0 : tensor<*xf32>
}

// -----

func.func @second(%arg0: tensor<2x3xf32>) -> tensor<*xf32> {
  %0 = "top.Abs"(%arg0) : (tensor<2x3xf32>) -> tensor<*xf32> loc("second")
  return %0 : tensor<*xf32>
}

// -----

func.func @third(%arg0: tensor<5xf32>) -> tensor<*xf32> {
  %0 = "top.Exp"(%arg0) : (tensor<5xf32>) -> tensor<*xf32> loc("third")
  return %0 : tensor<*xf32>
}

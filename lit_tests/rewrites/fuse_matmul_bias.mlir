// MatMul + Add(bias weight) -> MatMul with the bias operand, named like the Add. A 1-D bias needs
// no weight data, so this fires in tpuc-opt too.
// RUN: tpuc-opt %s --split-input-file --fuse-matmul-bias | filecheck %s
// RUN: tpuc-opt %s --split-input-file --fuse-matmul-bias --mlir-print-debuginfo | filecheck %s --check-prefix=LOC
// RUN: tpuc-opt %s --split-input-file --fuse-matmul-bias > %t.once
// RUN: tpuc-opt %t.once --split-input-file --fuse-matmul-bias > %t.twice
// RUN: diff %t.once %t.twice

// CHECK-LABEL: func.func @bias
// CHECK:       %[[B:.*]] = "top.Weight"() : () -> tensor<4xf32>
// CHECK:       %[[M:.*]] = "top.MatMul"(%{{.*}}, %{{.*}}, %[[B]]) {do_relu = true, relu_limit = -1.000000e+00 : f64} : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NOT:   top.Add
// CHECK:       return %[[M]]
// LOC-LABEL:   func.func @bias
// LOC:         "top.MatMul"{{.*}} loc([[L:#loc[0-9]*]])
// LOC:         [[L]] = loc("fc")
func.func @bias(%arg0: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %n = "top.None"() : () -> none loc("none")
  %0 = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %w = "top.Weight"() : () -> tensor<3x4xf32> loc("w")
  %b = "top.Weight"() : () -> tensor<4xf32> loc("b")
  %1 = "top.MatMul"(%0, %w, %n) : (tensor<2x3xf32>, tensor<3x4xf32>, none) -> tensor<2x4xf32> loc("mm")
  %2 = "top.Add"(%b, %1) {do_relu = true} : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32> loc("fc")
  return %2 : tensor<2x4xf32>
}

// -----
// Must not fire: the bias broadcasts along rows (shape [2, 1]), the MatMul already has a bias,
// the MatMul has another user, the Add is of two activations; a [1, 4] bias would need its data.
// CHECK-LABEL: func.func @no_fire
// CHECK-COUNT-5: "top.Add"
func.func @no_fire(%arg0: tensor<2x3xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %n = "top.None"() : () -> none loc("none")
  %0 = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %w = "top.Weight"() : () -> tensor<3x4xf32> loc("w")
  %rows = "top.Weight"() : () -> tensor<2x1xf32> loc("rows")
  %b = "top.Weight"() : () -> tensor<4xf32> loc("b")
  %b2 = "top.Weight"() : () -> tensor<1x4xf32> loc("b2")
  %1 = "top.MatMul"(%0, %w, %n) : (tensor<2x3xf32>, tensor<3x4xf32>, none) -> tensor<2x4xf32> loc("mm1")
  %2 = "top.Add"(%1, %rows) : (tensor<2x4xf32>, tensor<2x1xf32>) -> tensor<2x4xf32> loc("add_rows")
  %3 = "top.MatMul"(%0, %w, %b) : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc("mm2")
  %4 = "top.Add"(%3, %b) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc("add_biased")
  %5 = "top.MatMul"(%0, %w, %n) : (tensor<2x3xf32>, tensor<3x4xf32>, none) -> tensor<2x4xf32> loc("mm3")
  %6 = "top.Add"(%5, %b) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc("add_shared")
  %7 = "top.Add"(%5, %5) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32> loc("add_acts")
  %8 = "top.MatMul"(%0, %w, %n) : (tensor<2x3xf32>, tensor<3x4xf32>, none) -> tensor<2x4xf32> loc("mm4")
  %9 = "top.Add"(%8, %b2) : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32> loc("add_2d")
  return %2, %4, %6, %7, %5, %9 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

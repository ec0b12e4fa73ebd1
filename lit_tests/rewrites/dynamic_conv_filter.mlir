// A Conv whose filter is computed keeps its [oc, ic/g, kh, kw] layout; it is only marked
// weight_is_coeff = 0 (part of --reorder-dyn-weight and --canonicalize). The flag follows the
// filter: a top.Weight filter wrongly marked 0 becomes 1; a correct flag is left alone.
// RUN: tpuc-opt %s --reorder-dyn-weight | filecheck %s
// RUN: tpuc-opt %s --canonicalize | filecheck %s
// RUN: tpuc-opt %s --reorder-dyn-weight > %t.once
// RUN: tpuc-opt %t.once --reorder-dyn-weight > %t.twice
// RUN: diff %t.once %t.twice

// CHECK-NOT:  top.Permute
// CHECK:      "top.Conv"({{.*}}) {kernel_shape = [1, 1], weight_is_coeff = 0 : i64} : (tensor<1x2x3x3xf32>, tensor<4x2x1x1xf32>, none)
// CHECK:      "top.Conv"({{.*}}) {kernel_shape = [1, 1]} :
// CHECK:      "top.Conv"({{.*}}) {kernel_shape = [1, 1], weight_is_coeff = 1 : i64} :
// CHECK-NOT:  top.Permute
func.func @main(%arg0: tensor<1x2x3x3xf32>, %arg1: tensor<4x2x1x1xf32>) -> (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) {
  %n = "top.None"() : () -> none loc("none")
  %0 = "top.Input"(%arg0) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> loc("x")
  %1 = "top.Input"(%arg1) : (tensor<4x2x1x1xf32>) -> tensor<4x2x1x1xf32> loc("filter")
  %2 = "top.Conv"(%0, %1, %n) {kernel_shape = [1, 1]} : (tensor<1x2x3x3xf32>, tensor<4x2x1x1xf32>, none) -> tensor<1x4x3x3xf32> loc("dynamic")
  %w = "top.Weight"() : () -> tensor<4x2x1x1xf32> loc("w")
  %3 = "top.Conv"(%0, %w, %n) {kernel_shape = [1, 1]} : (tensor<1x2x3x3xf32>, tensor<4x2x1x1xf32>, none) -> tensor<1x4x3x3xf32> loc("static")
  %4 = "top.Conv"(%0, %w, %n) {kernel_shape = [1, 1], weight_is_coeff = 0 : i64} : (tensor<1x2x3x3xf32>, tensor<4x2x1x1xf32>, none) -> tensor<1x4x3x3xf32> loc("mislabelled")
  return %2, %3, %4 : tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>
}

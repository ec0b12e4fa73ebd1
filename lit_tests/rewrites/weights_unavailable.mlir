// Without weight data (the module names no weight file) the patterns that need it (folding,
// Conv+BatchNorm, Conv+Scale, scalar weights to *Const) must not fire, and that is no error; the
// rest of --canonicalize still runs. A weight file that is named but cannot be read is an error
// instead (lit_tests/driver/weight_file_unreadable.mlir). Their positive cases, with a weight npz:
// fuse_conv_bn.mlir, scalar_to_const.mlir, fold_constants.mlir, tests/test_rewrites_weights.py.
// RUN: tpuc-opt %s --fuse-conv-bn | filecheck %s --check-prefix=SAME
// RUN: tpuc-opt %s --scalar-to-const | filecheck %s --check-prefix=SAME
// RUN: tpuc-opt %s --fold-constants | filecheck %s --check-prefix=FOLD
// RUN: tpuc-opt %s --canonicalize | filecheck %s --check-prefix=CANON

// SAME:       "top.Conv"
// SAME-NEXT:  "top.BatchNorm"
// SAME:       "top.Conv"
// SAME-NEXT:  "top.Scale"
// SAME:       "top.Mul"
// SAME:       "top.Permute"
// SAME-NOT:   Const
// Dead ops go even without weights; the Permute of a weight is not folded.
// FOLD-NOT:   loc("dead")
// FOLD:       "top.BatchNorm"
// FOLD:       "top.Permute"
// CANON:      "top.Conv"
// CANON-NEXT: "top.BatchNorm"
// CANON:      "top.Conv"
// CANON-NEXT: "top.Scale"
// CANON:      "top.Mul"
// CANON:      "top.Permute"
func.func @main(%arg0: tensor<1x2x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<3x3xf32>) {
  %n = "top.None"() : () -> none loc("none")
  %0 = "top.Input"(%arg0) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> loc("x")
  %w = "top.Weight"() : () -> tensor<2x2x1x1xf32> loc("w")
  %m = "top.Weight"() : () -> tensor<2xf32> loc("mean")
  %v = "top.Weight"() : () -> tensor<2xf32> loc("var")
  %1 = "top.Conv"(%0, %w, %n) {kernel_shape = [1, 1]} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x3x3xf32> loc("conv")
  %2 = "top.BatchNorm"(%1, %m, %v, %n, %n) : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, none, none) -> tensor<1x2x3x3xf32> loc("bn")
  %s = "top.Weight"() : () -> tensor<1x2x1x1xf32> loc("s")
  %t = "top.Weight"() : () -> tensor<1x2x1x1xf32> loc("t")
  %3 = "top.Conv"(%0, %w, %n) {kernel_shape = [1, 1]} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x3x3xf32> loc("conv2")
  %4 = "top.Scale"(%3, %s, %t) : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x3x3xf32> loc("scale")
  %c = "top.Weight"() : () -> tensor<1xf32> loc("c")
  %5 = "top.Mul"(%0, %c) : (tensor<1x2x3x3xf32>, tensor<1xf32>) -> tensor<1x2x3x3xf32> loc("mul")
  %k = "top.Weight"() : () -> tensor<3x3xf32> loc("k")
  %6 = "top.Permute"(%k) {order = [1, 0]} : (tensor<3x3xf32>) -> tensor<3x3xf32> loc("k_T")
  %7 = "top.Relu"(%0) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> loc("dead")
  return %2, %4, %5, %6 : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<3x3xf32>
}


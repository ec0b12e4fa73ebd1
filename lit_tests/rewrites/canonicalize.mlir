// --canonicalize runs every family's patterns to a fixed point; --debug-only=pattern-application
// names each pattern that fired and where (loc name), then a count per pattern.
// RUN: tpuc-opt %s --canonicalize | filecheck %s
// RUN: tpuc-opt %s --canonicalize --debug-only=pattern-application 2>&1 >/dev/null | filecheck %s --check-prefix=LOG
// RUN: tpuc-opt %s --canonicalize > %t.once
// RUN: tpuc-opt %t.once --canonicalize > %t.twice
// RUN: diff %t.once %t.twice

// Squeeze -> Reshape, merged with the Reshape after it; the Cast pair and the identity Permute go;
// Conv + Relu fuse; the dead Relu goes but the unused input stays.
// CHECK-LABEL: func.func @main
// CHECK-NEXT:  "top.None"
// CHECK-NEXT:  "top.Input"(%arg0)
// CHECK-NEXT:  "top.Input"(%arg1)
// CHECK-NEXT:  "top.Cast"({{.*}}) : (tensor<1x2x2x2xf16>) -> tensor<1x2x2x2xf32>
// CHECK-NEXT:  "top.Weight"
// CHECK-NEXT:  "top.Conv"({{.*}}) {do_relu = true, kernel_shape = [1, 1], relu_limit = -1.000000e+00 : f64}
// CHECK-NEXT:  "top.Reshape"({{.*}}) {shape = [4, 4]} : (tensor<1x4x2x2xf32>) -> tensor<4x4xf32>
// CHECK-NEXT:  return
// LOG-DAG:     pattern FuseRelu applied at "relu"
// LOG-DAG:     pattern ShapeOpToReshape applied at "flat"
// LOG-DAG:     pattern MergeReshapes applied at "mat"
// LOG-DAG:     pattern RemoveRoundTripCast applied at "back"
// LOG-DAG:     pattern RemoveIdentityPermute applied at "same"
// LOG-DAG:     pattern EraseDeadOp applied at "dead"
// LOG:         pattern-application: 6 applied (EraseDeadOp x1, FuseRelu x1, MergeReshapes x1, RemoveIdentityPermute x1, RemoveRoundTripCast x1, ShapeOpToReshape x1)
func.func @main(%arg0: tensor<1x2x2x2xf16>, %arg1: tensor<3xf32>) -> tensor<4x4xf32> {
  %n = "top.None"() : () -> none loc("none")
  %0 = "top.Input"(%arg0) : (tensor<1x2x2x2xf16>) -> tensor<1x2x2x2xf16> loc("x")
  %unused = "top.Input"(%arg1) : (tensor<3xf32>) -> tensor<3xf32> loc("unused")
  %1 = "top.Cast"(%0) : (tensor<1x2x2x2xf16>) -> tensor<1x2x2x2xf32> loc("wide")
  %2 = "top.Cast"(%1) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf16> loc("back")
  %3 = "top.Cast"(%2) : (tensor<1x2x2x2xf16>) -> tensor<1x2x2x2xf32> loc("in_f32")
  %4 = "top.Permute"(%3) {order = [0, 1, 2, 3]} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> loc("same")
  %w = "top.Weight"() : () -> tensor<4x2x1x1xf32> loc("w")
  %5 = "top.Conv"(%4, %w, %n) {kernel_shape = [1, 1]} : (tensor<1x2x2x2xf32>, tensor<4x2x1x1xf32>, none) -> tensor<1x4x2x2xf32> loc("conv")
  %6 = "top.Relu"(%5) : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> loc("relu")
  %7 = "top.Flatten"(%6) {start_dim = 0 : i64} : (tensor<1x4x2x2xf32>) -> tensor<16xf32> loc("flat")
  %8 = "top.Reshape"(%7) {shape = [4, 4]} : (tensor<16xf32>) -> tensor<4x4xf32> loc("mat")
  %9 = "top.Relu"(%3) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> loc("dead")
  return %8 : tensor<4x4xf32>
}

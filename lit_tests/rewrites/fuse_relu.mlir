// Conv/MatMul/Add/BatchNorm + Relu (or Clip(0, m)) -> the producer with do_relu = true, named like the Relu.
// RUN: tpuc-opt %s --split-input-file --fuse-relu | filecheck %s
// RUN: tpuc-opt %s --split-input-file --fuse-relu --mlir-print-debuginfo | filecheck %s --check-prefix=LOC
// RUN: tpuc-opt %s --split-input-file --fuse-relu > %t.once
// RUN: tpuc-opt %t.once --split-input-file --fuse-relu > %t.twice
// RUN: diff %t.once %t.twice

// CHECK-LABEL: func.func @conv_relu
// CHECK:       %[[C:.*]] = "top.Conv"({{.*}}) {do_relu = true, kernel_shape = [1, 1], relu_limit = -1.000000e+00 : f64}
// CHECK-NOT:   top.Relu
// CHECK:       return %[[C]]
// LOC-LABEL:   func.func @conv_relu
// LOC:         "top.Conv"{{.*}} loc([[L:#loc[0-9]*]])
// LOC:         [[L]] = loc("relu")
func.func @conv_relu(%arg0: tensor<1x2x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %n = "top.None"() : () -> none loc("none")
  %0 = "top.Input"(%arg0) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> loc("x")
  %w = "top.Weight"() : () -> tensor<4x2x1x1xf32> loc("w")
  %1 = "top.Conv"(%0, %w, %n) {kernel_shape = [1, 1]} : (tensor<1x2x3x3xf32>, tensor<4x2x1x1xf32>, none) -> tensor<1x4x3x3xf32> loc("conv")
  %2 = "top.Relu"(%1) : (tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32> loc("relu")
  return %2 : tensor<1x4x3x3xf32>
}

// -----
// Clip(0, 6) is Relu6: relu_limit = 6. MatMul and Add fuse too.
// CHECK-LABEL: func.func @relu6_matmul_add
// CHECK:       "top.MatMul"({{.*}}) {do_relu = true, relu_limit = 6.000000e+00 : f64}
// CHECK:       "top.Add"({{.*}}) {do_relu = true, relu_limit = 2.500000e+00 : f64}
// CHECK-NOT:   top.Clip
// CHECK-NOT:   top.Relu
func.func @relu6_matmul_add(%arg0: tensor<2x3xf32>) -> (tensor<2x4xf32>, tensor<2x3xf32>) {
  %n = "top.None"() : () -> none loc("none")
  %0 = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %w = "top.Weight"() : () -> tensor<3x4xf32> loc("w")
  %1 = "top.MatMul"(%0, %w, %n) : (tensor<2x3xf32>, tensor<3x4xf32>, none) -> tensor<2x4xf32> loc("mm")
  %2 = "top.Clip"(%1) {min = 0.0 : f64, max = 6.0 : f64} : (tensor<2x4xf32>) -> tensor<2x4xf32> loc("relu6")
  %3 = "top.Add"(%0, %0) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("add")
  %4 = "top.Relu"(%3) {relu_limit = 2.5 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("relu")
  return %2, %4 : tensor<2x4xf32>, tensor<2x3xf32>
}

// -----
// Must not fire: the producer has another user, already has an activation, is not fusable
// (Mul), or the Clip is not Relu-like (min != 0).
// CHECK-LABEL: func.func @no_fire
// CHECK-COUNT-4: "top.Relu"
// CHECK:       "top.Clip"
func.func @no_fire(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %1 = "top.Add"(%0, %0) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("shared")
  %2 = "top.Relu"(%1) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("r1")
  %3 = "top.Add"(%0, %0) {do_relu = true} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("fused")
  %4 = "top.Relu"(%3) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("r2")
  %5 = "top.Mul"(%0, %0) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("mul")
  %6 = "top.Relu"(%5) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("r3")
  %7 = "top.Relu"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("r4")
  %8 = "top.Add"(%0, %0) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("add")
  %9 = "top.Clip"(%8) {min = -1.0 : f64, max = 6.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("clip")
  return %1, %2, %4, %6, %7, %9 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----
// BatchNorm has TPU-MLIR's SupportFuseRelu trait: BatchNorm + Relu fuses and the BatchNorm takes
// the Relu's name; a Clip(0, 6) after it gives relu_limit = 6; a BatchNorm read twice keeps its Relu.
// CHECK-LABEL: func.func @batch_norm
// CHECK:       %[[B:.*]] = "top.BatchNorm"({{.*}}) {do_relu = true, relu_limit = -1.000000e+00 : f64}
// CHECK:       %[[B6:.*]] = "top.BatchNorm"({{.*}}) {do_relu = true, relu_limit = 6.000000e+00 : f64}
// CHECK-NOT:   top.Clip
// CHECK:       %[[S:.*]] = "top.BatchNorm"(%{{[^)]*}}) : (
// CHECK-NEXT:  %[[R:.*]] = "top.Relu"(%[[S]])
// CHECK-NEXT:  return %[[B]], %[[B6]], %[[S]], %[[R]]
// LOC-LABEL:   func.func @batch_norm
// LOC:         "top.BatchNorm"{{.*}} loc([[L1:#loc[0-9]*]])
// LOC:         "top.BatchNorm"{{.*}} loc([[L2:#loc[0-9]*]])
// LOC:         "top.BatchNorm"{{.*}} loc([[L3:#loc[0-9]*]])
// LOC-DAG:     [[L1]] = loc("bn_relu")
// LOC-DAG:     [[L2]] = loc("bn_relu6")
// LOC-DAG:     [[L3]] = loc("bn_shared")
func.func @batch_norm(%arg0: tensor<1x2x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %n = "top.None"() : () -> none loc("none")
  %0 = "top.Input"(%arg0) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> loc("x")
  %m = "top.Weight"() : () -> tensor<2xf32> loc("mean")
  %v = "top.Weight"() : () -> tensor<2xf32> loc("var")
  %1 = "top.BatchNorm"(%0, %m, %v, %n, %n) : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, none, none) -> tensor<1x2x3x3xf32> loc("bn")
  %2 = "top.Relu"(%1) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> loc("bn_relu")
  %3 = "top.BatchNorm"(%0, %m, %v, %n, %n) : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, none, none) -> tensor<1x2x3x3xf32> loc("bn6")
  %4 = "top.Clip"(%3) {min = 0.0 : f64, max = 6.0 : f64} : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> loc("bn_relu6")
  %5 = "top.BatchNorm"(%0, %m, %v, %n, %n) : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, none, none) -> tensor<1x2x3x3xf32> loc("bn_shared")
  %6 = "top.Relu"(%5) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> loc("shared_relu")
  return %2, %4, %5, %6 : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}

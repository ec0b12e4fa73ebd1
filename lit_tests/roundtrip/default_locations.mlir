// An op, func, argument or return written without loc(...) gets MLIR's default location, the
// "FILE":line:col of its name (TPU-MLIR's hand-written lit inputs leave most locations out);
// top-level ops without a module get the module MLIR wraps around them, at "FILE":0:0.
// RUN: tpuc-opt %s --mlir-print-debuginfo | filecheck %s
// RUN: tpuc-opt %s --mlir-print-debuginfo | tpuc-opt - --mlir-print-debuginfo | filecheck %s --check-prefix=AGAIN

// CHECK:      #[[ARG:loc[0-9]*]] = loc("{{.*}}default_locations.mlir":24:17)
// CHECK:      func.func @main(%arg0: tensor<1x8xf32> loc("{{.*}}default_locations.mlir":24:17)) -> tensor<1x8xf32> {
// CHECK-NEXT:   %0 = "top.Relu"(%arg0) : (tensor<1x8xf32>) -> tensor<1x8xf32> loc(#[[RELU:loc[0-9]*]])
// CHECK-NEXT:   %1 = "top.Sigmoid"(%0) : (tensor<1x8xf32>) -> tensor<1x8xf32> loc(#[[SIG:loc[0-9]*]])
// CHECK-NEXT:   return %1 : tensor<1x8xf32> loc(#[[RET:loc[0-9]*]])
// CHECK-NEXT: } loc(#[[FUNC:loc[0-9]*]])
// CHECK-NEXT: } loc(#[[MOD:loc[0-9]*]])
// CHECK-DAG:  #[[MOD]] = loc("{{.*}}default_locations.mlir":0:0)
// CHECK-DAG:  #[[FUNC]] = loc("{{.*}}default_locations.mlir":24:1)
// CHECK-DAG:  #[[RELU]] = loc("{{.*}}default_locations.mlir":25:8)
// CHECK-DAG:  #[[SIG]] = loc("{{.*}}default_locations.mlir":26:8)
// CHECK-DAG:  #[[RET]] = loc("{{.*}}default_locations.mlir":27:3)

// Printed locations are kept when the output is read again.
// AGAIN: "top.Sigmoid"(%0) : (tensor<1x8xf32>) -> tensor<1x8xf32> loc(#[[SIG:loc[0-9]*]])
// AGAIN-DAG: #[[SIG]] = loc("{{.*}}default_locations.mlir":26:8)

func.func @main(%arg0: tensor<1x8xf32>) -> tensor<1x8xf32> {
  %0 = "top.Relu"(%arg0) : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %1 = "top.Sigmoid"(%0) : (tensor<1x8xf32>) -> tensor<1x8xf32>
  return %1 : tensor<1x8xf32>
}

// With --split-input-file MLIR parses each chunk as its own buffer named
// `within split at FILE:N offset ` (N: the line of the split marker before it, 1 for the first
// chunk) and counts lines from there: default locations carry that name and those lines.
// RUN: tpuc-opt %s --split-input-file --mlir-print-debuginfo | filecheck %s

// CHECK-LABEL: module @First
// CHECK:       "top.Relu"(%arg0) : (tensor<2xf32>) -> tensor<2xf32> loc(#[[RELU:loc[0-9]*]])
// CHECK:       #[[RELU]] = loc("within split at {{.*}}split_locations.mlir:1 offset ":18:10)
// CHECK:       {{^// [-]{5}$}}
// CHECK-LABEL: module @Second
// CHECK:       "top.Sigmoid"(%arg0) : (tensor<3xf32>) -> tensor<3xf32> loc(#[[SIG:loc[0-9]*]])
// CHECK:       return {{.*}} loc(#[[KEPT:loc[0-9]*]])
// CHECK-DAG:   #[[SIG]] = loc("within split at {{.*}}split_locations.mlir:23 offset ":5:10)
// CHECK-DAG:   #[[KEPT]] = loc("kept")

module @First {
  func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = "top.Relu"(%arg0) : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}

// -----

module @Second {
  func.func @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %0 = "top.Sigmoid"(%arg0) : (tensor<3xf32>) -> tensor<3xf32>
    return %0 : tensor<3xf32> loc("kept")
  }
}

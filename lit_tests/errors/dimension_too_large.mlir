// A tensor dimension must fit in int64, as in upstream MLIR, which reports `invalid dimension` at
// the dimension (checked with the iree bindings); 2^63 - 1 itself is accepted.
// RUN: not tpuc-opt %s --split-input-file 2>&1 | filecheck %s -DFILE=%s
// RUN: not tpuc-opt %s --split-input-file 2>/dev/null | filecheck %s --check-prefix=NONE --allow-empty

// CHECK-NOT: Traceback
// CHECK:     [[FILE]]:18:31: error: invalid dimension
// CHECK-NEXT: [[FILE]]:24:61: error: invalid dimension
// CHECK-NOT: error
// Nothing is printed when a chunk failed.
// NONE-NOT: {{.}}

func.func @main(%arg0: tensor<9223372036854775807xf32>) -> tensor<9223372036854775807xf32> {
  return %arg0 : tensor<9223372036854775807xf32>
}

// -----
func.func @main(%arg0: tensor<9223372036854775808xf32>) -> tensor<9223372036854775808xf32> {
  return %arg0 : tensor<9223372036854775808xf32>
}

// -----
func.func @main(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = "top.Reshape"(%arg0) : (tensor<1x4xf32>) -> tensor<2x99999999999999999999xf32>
  return %0 : tensor<1x4xf32>
}

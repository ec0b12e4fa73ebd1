// With --split-input-file every failing chunk is reported at its line in the whole file; exit 1, no output.
// RUN: not tpuc-opt %s --split-input-file 2>&1 | filecheck %s -DFILE=%s

// CHECK-NOT: Traceback
// CHECK:     [[FILE]]:20:8: error: 'top.Relu' op "second"
// CHECK-NEXT: [[FILE]]:27:45: error:{{.*}}
// CHECK-NOT: {{.}}

func.func @first(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = "top.Relu"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("first")
  return %0 : tensor<1x4xf32>
}

// -----

// The result shape contradicts the input's.


func.func @second(%arg0: tensor<1x4xf32>) -> tensor<1x5xf32> {
  %0 = "top.Relu"(%arg0) : (tensor<1x4xf32>) -> tensor<1x5xf32> loc("second")
  return %0 : tensor<1x5xf32>
}

// -----

func.func @third(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = "top.Relu"(%arg0) : (tensor<1x4xf32> -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

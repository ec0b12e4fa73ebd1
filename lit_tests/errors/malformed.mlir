// Malformed text: one line `FILE:LINE:COL: error: ...` at the bad token, exit 1, no traceback.
// RUN: not tpuc-opt %s 2>&1 | filecheck %s -DFILE=%s

// CHECK-NOT: Traceback
// CHECK:     [[FILE]]:9:45: error: {{.*}}')'{{.*}}
// CHECK-NOT: {{.}}

func.func @main(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = "top.Relu"(%arg0) : (tensor<1x4xf32> -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// A result type that contradicts the op's shape rule is a verifier error naming the op and both shapes.
// RUN: not tpuc-opt %s 2>&1 | filecheck %s -DFILE=%s
// The check happens before any pass runs, too.
// RUN: not tpuc-opt %s --shape-infer 2>&1 | filecheck %s -DFILE=%s

// CHECK-NOT: Traceback
// CHECK:     [[FILE]]:12:8: error: 'top.Add' op "sum" {{.*}}tensor<1x5xf32>{{.*}}1x4{{.*}}
// CHECK-NOT: {{.}}

func.func @main(%arg0: tensor<1x4xf32>) -> tensor<1x5xf32> {
  %0 = "top.Relu"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("relu")
  %1 = "top.Add"(%0, %arg0) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x5xf32> loc("sum")
  return %1 : tensor<1x5xf32>
}

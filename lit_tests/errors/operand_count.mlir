// Wrong operand count is a verifier error at the op's position (MLIR: its name token).
// RUN: not tpuc-opt %s 2>&1 | filecheck %s -DFILE=%s

// CHECK-NOT: Traceback
// CHECK:     [[FILE]]:9:8: error: 'top.Relu' op {{.*}}1 operand{{.*}}2{{.*}}
// CHECK-NOT: {{.}}

func.func @main(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = "top.Relu"(%arg0, %arg0) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32> loc("relu2")
  return %0 : tensor<1x4xf32>
}

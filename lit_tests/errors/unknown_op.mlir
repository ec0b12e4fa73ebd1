// An op no dialect defines is an error naming the op at its position (unless --allow-unregistered-dialect).
// RUN: not tpuc-opt %s 2>&1 | filecheck %s -DFILE=%s

// CHECK-NOT: Traceback
// CHECK:     [[FILE]]:9:{{[0-9]+}}: error: {{.*}}top.Frobnicate{{.*}}
// CHECK-NOT: {{.}}

func.func @main(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = "top.Frobnicate"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("f")
  return %0 : tensor<1x4xf32>
}

// --debug-only=pattern-application logs each applied pattern at the matched op's name and ends
// with a count on stderr; stdout stays the IR. Other debug types are accepted and ignored.
// RUN: tpuc-opt %s --fuse-relu --debug-only=greedy-rewriter,pattern-application 2>&1 >/dev/null | filecheck %s
// RUN: tpuc-opt %s --fuse-relu --debug-only=pattern-application 2>/dev/null | filecheck %s --check-prefix=IR
// Without the flag nothing is logged.
// RUN: tpuc-opt %s --fuse-relu 2>&1 >/dev/null | filecheck %s --check-prefix=QUIET --allow-empty

// CHECK:      pattern FuseRelu applied at "relu"
// CHECK-NEXT: pattern-application: 1 applied (FuseRelu x1)
// IR:         "top.Add"({{.*}}) {do_relu = true{{.*}}}
// IR-NOT:     "top.Relu"
// QUIET-NOT:  pattern

func.func @main(%arg0: tensor<1x4xf32>, %arg1: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = "top.Add"(%arg0, %arg1) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32> loc("add")
  %1 = "top.Relu"(%0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("relu")
  return %1 : tensor<1x4xf32>
}

// --debug-only=pattern-application ends with a count of applied patterns on stderr; stdout stays the IR.
// RUN: tpuc-opt %s --canonicalize --debug-only=greedy-rewriter,pattern-application 2>&1 >/dev/null | filecheck %s
// RUN: tpuc-opt %s --canonicalize --debug-only=pattern-application 2>/dev/null | filecheck %s --check-prefix=IR
// Without the flag nothing is logged.
// RUN: tpuc-opt %s --canonicalize 2>&1 >/dev/null | filecheck %s --check-prefix=QUIET --allow-empty

// CHECK:     pattern-application: {{[0-9]+}} applied
// IR:        "top.Relu"
// QUIET-NOT: pattern

func.func @main(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = "top.Relu"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("r")
  return %0 : tensor<1x4xf32>
}

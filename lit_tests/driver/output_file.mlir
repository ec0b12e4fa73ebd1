// -o FILE writes the result there (replacing an old file) and nothing to stdout.
// RUN: echo old > %t
// RUN: tpuc-opt %s --shape-infer -o %t > %t.stdout
// RUN: filecheck %s < %t
// RUN: filecheck %s --check-prefix=EMPTY --allow-empty < %t.stdout
// -o - is stdout; -o /dev/null discards (TPU-MLIR's codegen runs use it).
// RUN: tpuc-opt %s --shape-infer -o - | filecheck %s
// RUN: tpuc-opt %s --shape-infer -o /dev/null | filecheck %s --check-prefix=EMPTY --allow-empty

// CHECK-NOT: old
// CHECK:     "top.Relu"({{.*}}) : (tensor<1x4xf32>) -> tensor<1x4xf32>
// EMPTY-NOT: {{.}}

func.func @main(%arg0: tensor<1x4xf32>) -> tensor<*xf32> {
  %0 = "top.Relu"(%arg0) : (tensor<1x4xf32>) -> tensor<*xf32> loc("r")
  return %0 : tensor<*xf32>
}

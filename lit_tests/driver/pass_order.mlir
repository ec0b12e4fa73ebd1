// Passes run in the order given on the command line; --mlir-print-ir-after-all shows each step.
// RUN: tpuc-opt %s --shape-infer --dce --mlir-print-ir-after-all -o /dev/null 2>&1 | filecheck %s
// RUN: tpuc-opt %s -p 'dce,shape-infer' --mlir-print-ir-after-all -o /dev/null 2>&1 | filecheck %s --check-prefix=REV

// CHECK-LABEL: IR Dump After ShapeInferPass (shape-infer)
// CHECK:       "top.Relu"({{.*}}) : (tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK:       "top.Abs"({{.*}}) : (tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-LABEL: IR Dump After DeadCodeElimination (dce)
// CHECK-NOT:   top.Abs
// CHECK:       "top.Relu"({{.*}}) : (tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NOT:   top.Abs

// REV-LABEL: IR Dump After DeadCodeElimination (dce)
// REV-NOT:   top.Abs
// REV:       "top.Relu"({{.*}}) : (tensor<1x4xf32>) -> tensor<*xf32>
// REV-NOT:   top.Abs
// REV-LABEL: IR Dump After ShapeInferPass (shape-infer)
// REV:       "top.Relu"({{.*}}) : (tensor<1x4xf32>) -> tensor<1x4xf32>

func.func @main(%arg0: tensor<1x4xf32>) -> tensor<*xf32> {
  %0 = "top.Relu"(%arg0) : (tensor<1x4xf32>) -> tensor<*xf32> loc("used")
  %1 = "top.Abs"(%arg0) : (tensor<1x4xf32>) -> tensor<*xf32> loc("dead")
  return %0 : tensor<*xf32>
}

// With --split-input-file, --debug-only=pattern-application ends each chunk's log with that
// chunk's own count (mlir-opt runs each split on its own); a failing chunk still gets its count.
// RUN: not tpuc-opt %s --split-input-file --fuse-relu --debug-only=pattern-application 2>&1 >/dev/null | filecheck %s

// CHECK:      pattern FuseRelu applied at "relu_a"
// CHECK-NEXT: pattern-application: 1 applied (FuseRelu x1)
// CHECK-NEXT: pattern FuseRelu applied at "relu_b"
// CHECK-NEXT: pattern FuseRelu applied at "relu_c"
// CHECK-NEXT: pattern-application: 2 applied (FuseRelu x2)
// CHECK-NEXT: pattern-application: 0 applied
// CHECK-NEXT: error: {{.*}}
// CHECK-NEXT: pattern-application: 0 applied
// CHECK-NOT:  pattern

func.func @one(%arg0: tensor<1x4xf32>, %arg1: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = "top.Add"(%arg0, %arg1) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32> loc("add_a")
  %1 = "top.Relu"(%0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("relu_a")
  return %1 : tensor<1x4xf32>
}

// -----

func.func @two(%arg0: tensor<1x4xf32>, %arg1: tensor<1x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xf32>) {
  %0 = "top.Add"(%arg0, %arg1) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32> loc("add_b")
  %1 = "top.Relu"(%0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("relu_b")
  %2 = "top.Add"(%arg1, %arg0) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32> loc("add_c")
  %3 = "top.Relu"(%2) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("relu_c")
  return %1, %3 : tensor<1x4xf32>, tensor<1x4xf32>
}

// -----

// Nothing to fuse: the Relu reads an input.
func.func @three(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = "top.Relu"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("relu_d")
  return %0 : tensor<1x4xf32>
}

// -----

func.func @broken(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = "top.NoSuchOp"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("bad")
  return %0 : tensor<1x4xf32>
}

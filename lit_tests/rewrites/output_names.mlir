// Graph outputs keep their names through --canonicalize: a returned op that is an identity
// (x * 1, a Reshape or Permute to the same shape, a Cast to the same type, a lossless Cast round
// trip) is not folded into its input, which would hand the output name "y..." to "x".
// The same ops inside the graph do go.
// RUN: tpuc-opt %s --canonicalize --mlir-print-debuginfo | filecheck %s
// RUN: tpuc-opt %s --canonicalize --debug-only=pattern-application 2>&1 >/dev/null | filecheck %s --check-prefix=LOG

// CHECK:      %[[X:.*]] = "top.Input"{{.*}}
// CHECK-NEXT: %[[Y1:.*]] = "top.MulConst"(%[[X]]) {const_val = 1.000000e+00 : f64}
// CHECK-NEXT: %[[Y2:.*]] = "top.Reshape"(%[[X]]) {shape = [2, 3]}
// CHECK-NEXT: %[[Y3:.*]] = "top.Permute"(%[[X]]) {order = [0, 1]}
// CHECK-NEXT: %[[Y4:.*]] = "top.Cast"(%[[X]]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[H:.*]] = "top.Cast"(%[[X]]) : (tensor<2x3xf32>) -> tensor<2x3xf64>
// CHECK-NEXT: %[[Y5:.*]] = "top.Cast"(%[[H]]) : (tensor<2x3xf64>) -> tensor<2x3xf32>
// Inside the graph the identities go: y6 reads x.
// CHECK-NEXT: %[[Y6:.*]] = "top.Relu"(%[[X]])
// CHECK-NEXT: return %[[Y1]], %[[Y2]], %[[Y3]], %[[Y4]], %[[Y5]], %[[Y6]]
// CHECK-DAG:  loc("y1")
// CHECK-DAG:  loc("y2")
// CHECK-DAG:  loc("y3")
// CHECK-DAG:  loc("y4")
// CHECK-DAG:  loc("y5")
// CHECK-DAG:  loc("y6")
// LOG:        pattern-application: 3 applied (FoldMulConstOne x1, RemoveIdentityPermute x1, RemoveSameShapeReshape x1)
func.func @main(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %x = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %1 = "top.MulConst"(%x) {const_val = 1.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("y1")
  %2 = "top.Reshape"(%x) {shape = [2, 3]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("y2")
  %3 = "top.Permute"(%x) {order = [0, 1]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("y3")
  %4 = "top.Cast"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("y4")
  %h = "top.Cast"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf64> loc("x_f64")
  %5 = "top.Cast"(%h) : (tensor<2x3xf64>) -> tensor<2x3xf32> loc("y5")
  %a = "top.MulConst"(%x) {const_val = 1.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("a")
  %b = "top.Reshape"(%a) {shape = [2, 3]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("b")
  %c = "top.Permute"(%b) {order = [0, 1]} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("c")
  %6 = "top.Relu"(%c) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("y6")
  return %1, %2, %3, %4, %5, %6 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

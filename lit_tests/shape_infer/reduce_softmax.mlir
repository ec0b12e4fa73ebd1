// RUN: tpuc-opt %s --shape-infer | filecheck %s
// Reduce drops (or keeps as 1) its axes; Arg gives indices and values of the reduced shape (an
// unused `values` result stays none); Softmax keeps the shape.

// CHECK: "top.Reduce"{{.*}} -> tensor<2x1x4xf32>
// CHECK: "top.Reduce"{{.*}} -> tensor<3xf32>
// CHECK: "top.Arg"{{.*}} -> (tensor<2x3x1xf32>, tensor<2x3x1xf32>)
// CHECK: "top.Arg"{{.*}} -> (tensor<3x4xf32>, none)
// CHECK: "top.Softmax"{{.*}} -> tensor<2x3x4xf32>
func.func @main(%x: tensor<2x3x4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = "top.Reduce"(%x) {axes = [1], keepdims = true, mode = "ReduceMean"} : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("mean")
  %1 = "top.Reduce"(%x) {axes = [0, -1], keepdims = false, mode = "ReduceSum"} : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("sum")
  %2:2 = "top.Arg"(%x) {axis = 2 : i64, keepdims = true, mode = "ArgMax"} : (tensor<2x3x4xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc("argmax")
  %3:2 = "top.Arg"(%x) {axis = 0 : i64, keepdims = false, mode = "ArgMin"} : (tensor<2x3x4xf32>) -> (tensor<*xf32>, none) loc("argmin")
  %4 = "top.Softmax"(%x) {axis = -1 : i64, log = true} : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("log_softmax")
  func.return %0, %1, %2#1, %3#0, %4 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// RUN: tpuc-opt %s --shape-infer | filecheck %s
// A 0 dim is an empty dimension: it parses, prints and flows through the shape rules like any
// other size (Concat with an empty input, a reduction over it, Slice and Reshape to empty).

// CHECK: func.func @main(%arg0: tensor<0x3xf32>{{.*}}-> (tensor<2x3xf32>, tensor<3xf32>, tensor<0x3xf32>, tensor<0x3xf32>, tensor<3x0xf32>)
// CHECK: "top.Concat"{{.*}} -> tensor<2x3xf32>
// CHECK: "top.Reduce"{{.*}} -> tensor<3xf32>
// CHECK: "top.Add"{{.*}} -> tensor<0x3xf32>
// CHECK: "top.Slice"{{.*}} -> tensor<0x3xf32>
// CHECK: "top.Reshape"{{.*}} -> tensor<3x0xf32>
func.func @main(%x: tensor<0x3xf32>, %y: tensor<2x3xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = "top.Concat"(%x, %y) {axis = 0 : i64} : (tensor<0x3xf32>, tensor<2x3xf32>) -> tensor<*xf32> loc("cat")
  %1 = "top.Reduce"(%x) {axes = [0], keepdims = false, mode = "ReduceSum"} : (tensor<0x3xf32>) -> tensor<*xf32> loc("sum")
  %2 = "top.Add"(%x, %x) : (tensor<0x3xf32>, tensor<0x3xf32>) -> tensor<*xf32> loc("add")
  %n = "top.None"() : () -> none loc("none")
  %3 = "top.Slice"(%y, %n, %n, %n) {offset = [1, 0], ends = [1, 3], steps = [1, 1], axes = [0, 1]} : (tensor<2x3xf32>, none, none, none) -> tensor<*xf32> loc("slice")
  %4 = "top.Reshape"(%x) {shape = [3, -1]} : (tensor<0x3xf32>) -> tensor<*xf32> loc("reshape")
  return %0, %1, %2, %3, %4 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

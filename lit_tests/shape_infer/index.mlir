// RUN: tpuc-opt %s --shape-infer | filecheck %s
// TopK: values and indices are the input with K along axis (K -1: from kT, the result type must be
// given). GatherND: indices[:-1] + input[batch_dims + k:]. Scatter*: the input's shape.
// Pow2 (const_val ** x) keeps the shape; Pow3 (x ** y) broadcasts. Einsum: the output letters'
// sizes ("..." broadcasts; no "->": the letters used once, sorted).

// CHECK: "top.TopK"{{.*}} -> (tensor<2x5x4xf32>, tensor<2x5x4xf32>)
// CHECK: "top.TopK"{{.*}} -> (tensor<2x5x2xf32>, tensor<2x5x2xf32>)
// CHECK: "top.GatherND"{{.*}} -> tensor<4x6xf32>
// CHECK: "top.GatherND"{{.*}} -> tensor<2x3x6xf32>
// CHECK: "top.ScatterElements"{{.*}} -> tensor<2x5x6xf32>
// CHECK: "top.ScatterND"{{.*}} -> tensor<2x5x6xf32>
// CHECK: "top.Pow2"{{.*}} -> tensor<2x5x6xf32>
// CHECK: "top.Pow3"{{.*}} -> tensor<2x5x6xf32>
// CHECK: "top.Einsum"{{.*}} -> tensor<2x6x6xf32>
// CHECK: "top.Einsum"{{.*}} -> tensor<2x3x1xf32>
func.func @main(%x: tensor<2x5x6xf32>, %k: tensor<1xf32>, %i: tensor<4x2xf32>, %ib: tensor<2x3x1xf32>, %ie: tensor<2x5x6xf32>, %in: tensor<2x1xf32>, %u: tensor<2x5x6xf32>, %e: tensor<6xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<2x5x2xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<2x5x2xf32>) {
  %0:2 = "top.TopK"(%x) {axis = 2 : i64, K = 4 : i64} : (tensor<2x5x6xf32>) -> (tensor<*xf32>, tensor<*xf32>) loc(fused["v", "i"])
  %1:2 = "top.TopK"(%x, %k) {axis = -1 : i64} : (tensor<2x5x6xf32>, tensor<1xf32>) -> (tensor<2x5x2xf32>, tensor<2x5x2xf32>) loc(fused["vk", "ik"])
  %2 = "top.GatherND"(%x, %i) : (tensor<2x5x6xf32>, tensor<4x2xf32>) -> tensor<*xf32> loc("gather_nd")
  %3 = "top.GatherND"(%x, %ib) {batch_dims = 1 : i64} : (tensor<2x5x6xf32>, tensor<2x3x1xf32>) -> tensor<*xf32> loc("gather_nd_batch")
  %4 = "top.ScatterElements"(%x, %ie, %u) {axis = 1 : i64} : (tensor<2x5x6xf32>, tensor<2x5x6xf32>, tensor<2x5x6xf32>) -> tensor<*xf32> loc("scatter_elements")
  %5 = "top.ScatterND"(%x, %in, %u) : (tensor<2x5x6xf32>, tensor<2x1xf32>, tensor<2x5x6xf32>) -> tensor<*xf32> loc("scatter_nd")
  %6 = "top.Pow2"(%x) {const_val = 2.000000e+00 : f64} : (tensor<2x5x6xf32>) -> tensor<*xf32> loc("pow2")
  %7 = "top.Pow3"(%x, %e) : (tensor<2x5x6xf32>, tensor<6xf32>) -> tensor<*xf32> loc("pow3")
  %8 = "top.Einsum"(%x, %x) {mode = "bij,bik->bjk"} : (tensor<2x5x6xf32>, tensor<2x5x6xf32>) -> tensor<*xf32> loc("einsum")
  %9 = "top.Einsum"(%ib) {mode = "...ij"} : (tensor<2x3x1xf32>) -> tensor<*xf32> loc("einsum_implicit")
  func.return %8, %9, %0#0, %0#1, %1#0, %2, %3, %4, %5, %6, %7, %1#1 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<2x5x2xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<2x5x2xf32>
}

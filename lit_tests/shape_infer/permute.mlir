// RUN: tpuc-opt %s --shape-infer | filecheck %s
// Permute reorders dims by `order`; Transpose swaps dim0 and dim1 (negative counts from the end).

// CHECK: "top.Permute"{{.*}} -> tensor<2x4x5x3xf32>
// CHECK: "top.Transpose"{{.*}} -> tensor<3x4x5x2xf32>
func.func @main(%x: tensor<2x3x4x5xf32>) -> tensor<*xf32> {
  %0 = "top.Permute"(%x) {order = [0, 2, 3, 1]} : (tensor<2x3x4x5xf32>) -> tensor<*xf32> loc("nchw_to_nhwc")
  %1 = "top.Transpose"(%0) {dim0 = 0 : i64, dim1 = -1 : i64} : (tensor<*xf32>) -> tensor<*xf32> loc("swap_first_last")
  func.return %1 : tensor<*xf32>
}

// RUN: tpuc-opt %s --shape-infer | filecheck %s
// GatherElements takes the indices' shape; MaskedFill, Mod and Remainder broadcast; Reverse,
// CumSum, Trilu, ShuffleChannel, RMSNorm and LRN keep the shape; View's shape is a tensor's value,
// so its ranked result type is kept.

// CHECK: "top.GatherElements"{{.*}} -> tensor<2x3x2xf32>
// CHECK: "top.MaskedFill"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Mod"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Remainder"{{.*}} -> tensor<3x4xf32>
// CHECK: "top.Reverse"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.CumSum"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.Trilu"{{.*}} -> tensor<3x4xf32>
// CHECK: "top.ShuffleChannel"{{.*}} -> tensor<1x6x2x2xf32>
// CHECK: "top.RMSNorm"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.LRN"{{.*}} -> tensor<1x6x2x2xf32>
// CHECK: "top.View"{{.*}} -> tensor<6x4xf32>
func.func @main(%x: tensor<2x3x4xf32>, %idx: tensor<2x3x2xf32>, %cond: tensor<3x4xf32>, %v: tensor<4xf32>, %img: tensor<1x6x2x2xf32>, %shape: tensor<2xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<6x4xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %0 = "top.GatherElements"(%x, %idx) {axis = 2 : i64} : (tensor<2x3x4xf32>, tensor<2x3x2xf32>) -> tensor<*xf32> loc("gather_elements")
  %1 = "top.MaskedFill"(%cond, %x) {const_val = 0.000000e+00 : f64} : (tensor<3x4xf32>, tensor<2x3x4xf32>) -> tensor<*xf32> loc("masked_fill")
  %2 = "top.Mod"(%x, %v) : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<*xf32> loc("mod")
  %3 = "top.Remainder"(%cond, %v) : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<*xf32> loc("remainder")
  %4 = "top.Reverse"(%x) {axis = -1 : i64} : (tensor<2x3x4xf32>) -> tensor<*xf32> loc("reverse")
  %5 = "top.CumSum"(%x, %none) {axis = 1 : i64} : (tensor<2x3x4xf32>, none) -> tensor<*xf32> loc("cumsum")
  %6 = "top.Trilu"(%cond) {upper = true, diagonal = 1 : i64} : (tensor<3x4xf32>) -> tensor<*xf32> loc("triu")
  %7 = "top.ShuffleChannel"(%img) {group = 3 : i64} : (tensor<1x6x2x2xf32>) -> tensor<*xf32> loc("shuffle")
  %8 = "top.RMSNorm"(%x, %v) {eps = 1.000000e-06 : f64} : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<*xf32> loc("rms_norm")
  %9 = "top.LRN"(%img) {size = 3 : i64} : (tensor<1x6x2x2xf32>) -> tensor<*xf32> loc("lrn")
  %10 = "top.View"(%x, %shape) : (tensor<2x3x4xf32>, tensor<2xf32>) -> tensor<6x4xf32> loc("view")
  func.return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<6x4xf32>
}

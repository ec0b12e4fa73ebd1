// RUN: tpuc-opt %s --shape-infer | filecheck %s
// LayerNorm normalizes dims axis..end (weight/bias hold one value per normalized element);
// InstanceNorm and GroupNorm take per-channel weight/bias. All keep the shape.

// CHECK: "top.LayerNorm"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.LayerNorm"{{.*}} -> tensor<2x3x4xf32>
// CHECK: "top.InstanceNorm"{{.*}} -> tensor<1x6x4x4xf32>
// CHECK: "top.GroupNorm"{{.*}} -> tensor<1x6x4x4xf32>
func.func @main(%x: tensor<2x3x4xf32>, %img: tensor<1x6x4x4xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %w4 = "top.Weight"() : () -> tensor<4xf32> loc("ln_w")
  %w34 = "top.Weight"() : () -> tensor<3x4xf32> loc("ln2_w")
  %c6 = "top.Weight"() : () -> tensor<6xf32> loc("c6")
  %0 = "top.LayerNorm"(%x, %w4, %w4) {axis = 2 : i64, eps = 1.000000e-05 : f64, normalized_shape = [4]} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<*xf32> loc("ln_last")
  %1 = "top.LayerNorm"(%x, %w34, %none) {axis = -2 : i64, eps = 1.000000e-05 : f64} : (tensor<2x3x4xf32>, tensor<3x4xf32>, none) -> tensor<*xf32> loc("ln_two_dims")
  %2 = "top.InstanceNorm"(%img, %c6, %none) {eps = 1.000000e-05 : f64} : (tensor<1x6x4x4xf32>, tensor<6xf32>, none) -> tensor<*xf32> loc("instance_norm")
  %3 = "top.GroupNorm"(%img, %c6, %c6) {num_groups = 3 : i64, eps = 1.000000e-05 : f64} : (tensor<1x6x4x4xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<*xf32> loc("group_norm")
  func.return %0, %1, %2, %3 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

// RUN: tpuc-opt %s --shape-infer | filecheck %s
// MatMul follows numpy.matmul: batch dims broadcast, a rank-1 operand gains then loses a dim.

// CHECK: "top.MatMul"{{.*}} -> tensor<2x4xf32>
// CHECK: "top.MatMul"{{.*}} -> tensor<5x4x2x6xf32>
// CHECK: "top.MatMul"{{.*}} -> tensor<2x3xf32>
// CHECK: "top.MatMul"{{.*}} -> tensor<2x5xf32>
// CHECK: "top.MatMul"{{.*}} -> tensor<2x5xf32>
// CHECK: "top.MatMul"{{.*}} -> tensor<2x5xf32>
// CHECK: "top.MatMul"{{.*}} -> tensor<6x5xf32>
// CHECK: "top.MatMul"{{.*}} -> tensor<4x2xf32>
func.func @main(%a23: tensor<2x3xf32>, %b34: tensor<3x4xf32>, %a: tensor<5x1x2x3xf32>, %b: tensor<4x3x6xf32>, %a234: tensor<2x3x4xf32>, %v4: tensor<4xf32>, %b245: tensor<2x4x5xf32>, %a32: tensor<3x2xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %none = "top.None"() : () -> none loc("none")
  %w53 = "top.Weight"() : () -> tensor<5x3xf32> loc("w53")
  %w35 = "top.Weight"() : () -> tensor<3x5xf32> loc("w35")
  %w45 = "top.Weight"() : () -> tensor<4x5xf32> loc("w45")
  %bias = "top.Weight"() : () -> tensor<5xf32> loc("bias")
  %0 = "top.MatMul"(%a23, %b34, %none) : (tensor<2x3xf32>, tensor<3x4xf32>, none) -> tensor<*xf32> loc("mm_2d")
  %1 = "top.MatMul"(%a, %b, %none) : (tensor<5x1x2x3xf32>, tensor<4x3x6xf32>, none) -> tensor<*xf32> loc("mm_batch_broadcast")
  %2 = "top.MatMul"(%a234, %v4, %none) : (tensor<2x3x4xf32>, tensor<4xf32>, none) -> tensor<*xf32> loc("mm_vector_right")
  %3 = "top.MatMul"(%v4, %b245, %none) : (tensor<4xf32>, tensor<2x4x5xf32>, none) -> tensor<*xf32> loc("mm_vector_left")
  %4 = "top.MatMul"(%a23, %w53, %none) {right_transpose = true} : (tensor<2x3xf32>, tensor<5x3xf32>, none) -> tensor<*xf32> loc("mm_right_transpose")
  %5 = "top.MatMul"(%a23, %w35, %bias) : (tensor<2x3xf32>, tensor<3x5xf32>, tensor<5xf32>) -> tensor<*xf32> loc("mm_bias")
  %6 = "top.MatMul"(%a234, %w45, %none) {keep_dims = false} : (tensor<2x3x4xf32>, tensor<4x5xf32>, none) -> tensor<*xf32> loc("mm_no_keep_dims")
  %7 = "top.MatMul"(%a32, %b34, %none) {left_transpose = true, output_transpose = true} : (tensor<3x2xf32>, tensor<3x4xf32>, none) -> tensor<*xf32> loc("mm_transposes")
  func.return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

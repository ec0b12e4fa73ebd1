// RUN: tpuc-opt %s --shape-infer | filecheck %s
// GridSampler: input [N, C, H, W] read at grid [N, Ho, Wo, 2] gives [N, C, Ho, Wo]; a volumetric
// input [N, C, D, H, W] at grid [N, Do, Ho, Wo, 3] gives [N, C, Do, Ho, Wo]. The errors:
// lit_tests/verify/grid_sampler.mlir.

// CHECK: "top.GridSampler"{{.*}} : (tensor<2x3x5x7xf32>, tensor<2x4x6x2xf32>) -> tensor<2x3x4x6xf32>
// CHECK: "top.GridSampler"{{.*}} : (tensor<1x1x1x1xf32>, tensor<1x9x1x2xf32>) -> tensor<1x1x9x1xf32>
// CHECK: "top.GridSampler"{{.*}} : (tensor<2x3x4x5x7xf32>, tensor<2x6x4x2x3xf32>) -> tensor<2x3x6x4x2xf32>
func.func @main(%x: tensor<2x3x5x7xf32>, %g: tensor<2x4x6x2xf32>, %y: tensor<1x1x1x1xf32>, %h: tensor<1x9x1x2xf32>, %v: tensor<2x3x4x5x7xf32>, %vg: tensor<2x6x4x2x3xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>) {
  %0 = "top.GridSampler"(%x, %g) {mode = 0 : i64, padding_mode = 2 : i64, align_corners = true} : (tensor<2x3x5x7xf32>, tensor<2x4x6x2xf32>) -> tensor<*xf32> loc("warp")
  %1 = "top.GridSampler"(%y, %h) {mode = 1 : i64, padding_mode = 0 : i64} : (tensor<1x1x1x1xf32>, tensor<1x9x1x2xf32>) -> tensor<*xf32> loc("one_pixel")
  %2 = "top.GridSampler"(%v, %vg) {mode = 0 : i64, padding_mode = 1 : i64} : (tensor<2x3x4x5x7xf32>, tensor<2x6x4x2x3xf32>) -> tensor<*xf32> loc("volumetric")
  func.return %0, %1, %2 : tensor<*xf32>, tensor<*xf32>, tensor<*xf32>
}

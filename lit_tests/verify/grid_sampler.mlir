// RUN: not tpuc-opt %s --split-input-file 2>&1 | filecheck %s
// GridSampler's mode and padding codes outside TPU-MLIR's enums (mode 0 bilinear, 1 nearest,
// 2 bicubic), grids that are not [N, Ho, Wo, 2] ([N, Do, Ho, Wo, 3] for a 5-D input) and a volumetric
// bicubic are errors naming them.

// CHECK: grid_sampler.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.GridSampler' op "mode_3" attribute 'mode' = 3 is not supported (supported: 0, 1, 2)
func.func @main(%x: tensor<1x2x4x4xf32>, %g: tensor<1x3x3x2xf32>) {
  %0 = "top.GridSampler"(%x, %g) {mode = 3 : i64, padding_mode = 0 : i64} : (tensor<1x2x4x4xf32>, tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32> loc("mode_3")
  func.return
}

// -----

// CHECK: grid_sampler.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.GridSampler' op "wrap" attribute 'padding_mode' = 3 is not supported (supported: 0, 1, 2)
func.func @main(%x: tensor<1x2x4x4xf32>, %g: tensor<1x3x3x2xf32>) {
  %0 = "top.GridSampler"(%x, %g) {mode = 0 : i64, padding_mode = 3 : i64} : (tensor<1x2x4x4xf32>, tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32> loc("wrap")
  func.return
}

// -----

// CHECK: grid_sampler.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.GridSampler' op "xyz" grid 1x3x3x3 is not [N, *out, 2] for input 1x2x4x4
func.func @main(%x: tensor<1x2x4x4xf32>, %g: tensor<1x3x3x3xf32>) {
  %0 = "top.GridSampler"(%x, %g) {mode = 0 : i64, padding_mode = 0 : i64} : (tensor<1x2x4x4xf32>, tensor<1x3x3x3xf32>) -> tensor<1x2x3x3xf32> loc("xyz")
  func.return
}

// -----

// CHECK: grid_sampler.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.GridSampler' op "rank_4_grid" grid must have rank 5, got 1x3x3x3
func.func @main(%x: tensor<1x2x3x4x4xf32>, %g: tensor<1x3x3x3xf32>) {
  %0 = "top.GridSampler"(%x, %g) {mode = 0 : i64, padding_mode = 0 : i64} : (tensor<1x2x3x4x4xf32>, tensor<1x3x3x3xf32>) -> tensor<1x2x3x3xf32> loc("rank_4_grid")
  func.return
}

// -----

// CHECK: grid_sampler.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.GridSampler' op "volumetric_bicubic" mode 2 (bicubic) of a 5-D (volumetric) input is not modelled (bilinear and nearest are)
func.func @main(%x: tensor<1x2x3x4x4xf32>, %g: tensor<1x2x3x3x3xf32>) {
  %0 = "top.GridSampler"(%x, %g) {mode = 2 : i64, padding_mode = 0 : i64} : (tensor<1x2x3x4x4xf32>, tensor<1x2x3x3x3xf32>) -> tensor<1x2x2x3x3xf32> loc("volumetric_bicubic")
  func.return
}

// -----

// CHECK: grid_sampler.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.GridSampler' op "no_mode" requires attribute 'mode'
func.func @main(%x: tensor<1x2x4x4xf32>, %g: tensor<1x3x3x2xf32>) {
  %0 = "top.GridSampler"(%x, %g) {padding_mode = 0 : i64} : (tensor<1x2x4x4xf32>, tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32> loc("no_mode")
  func.return
}

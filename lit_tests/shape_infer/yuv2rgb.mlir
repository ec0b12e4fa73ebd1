// RUN: tpuc-opt %s --shape-infer | filecheck %s
// Yuv2rgbFormula (TPU-MLIR's shape_inference): 4:2:0 frames [..., H * 3 / 2, W] give [..., 3, H, W]; H and
// W even. The errors: lit_tests/verify/yuv2rgb_errors.mlir.

// CHECK: "top.Yuv2rgbFormula"{{.*}} : (tensor<2x6x4xui8>) -> tensor<2x3x4x4xui8>
// CHECK: "top.Yuv2rgbFormula"{{.*}} : (tensor<1x2x12x6xui8>) -> tensor<1x2x3x8x6xui8>
func.func @main(%a: tensor<2x6x4xui8>, %b: tensor<1x2x12x6xui8>) -> (tensor<*xui8>, tensor<*xui8>) {
  %0 = "top.Yuv2rgbFormula"(%a) {src_format = 2 : i64, dst_format = 4 : i64, image_format = "UINT8", formula_mode = "_601_limited"} : (tensor<2x6x4xui8>) -> tensor<*xui8> loc("nv12")
  %1 = "top.Yuv2rgbFormula"(%b) {src_format = 0 : i64, dst_format = 5 : i64, image_format = "UINT8", formula_mode = "_601_full", round_mode = "HalfToEven"} : (tensor<1x2x12x6xui8>) -> tensor<*xui8> loc("i420")
  func.return %0, %1 : tensor<*xui8>, tensor<*xui8>
}

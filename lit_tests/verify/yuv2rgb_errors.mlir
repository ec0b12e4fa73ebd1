// RUN: not tpuc-opt %s --split-input-file --shape-infer 2>&1 | filecheck %s
// Yuv2rgbFormula: frames that are not 4:2:0 (rows not H * 3 / 2, H or W odd), and what it does not model, each an
// error naming it: image_format FLOAT32, a src_format other than the four YUV layouts, a round_mode other than
// HalfAwayFromZero and HalfToEven.
// CHECK-NOT: Traceback

// CHECK: error: 'top.Yuv2rgbFormula' op "odd" YUV 7x4 is not 4:2:0 frames [..., H * 3 / 2, W] with H and W even
func.func @main(%a: tensor<7x4xui8>) -> tensor<*xui8> {
  %0 = "top.Yuv2rgbFormula"(%a) {src_format = 2 : i64, dst_format = 4 : i64, image_format = "UINT8", formula_mode = "_601_limited"} : (tensor<7x4xui8>) -> tensor<*xui8> loc("odd")
  func.return %0 : tensor<*xui8>
}

// -----

// CHECK: error: 'top.Yuv2rgbFormula' op "float" attribute 'image_format' = "FLOAT32" is not supported (supported: "UINT8")
func.func @main(%a: tensor<6x4xui8>) -> tensor<*xf32> {
  %0 = "top.Yuv2rgbFormula"(%a) {src_format = 2 : i64, dst_format = 4 : i64, image_format = "FLOAT32", formula_mode = "_601_limited"} : (tensor<6x4xui8>) -> tensor<*xf32> loc("float")
  func.return %0 : tensor<*xf32>
}

// -----

// CHECK: error: 'top.Yuv2rgbFormula' op "rgb_in" attribute 'src_format' = 4 is not supported (supported: 0, 1, 2, 3)
func.func @main(%a: tensor<6x4xui8>) -> tensor<*xui8> {
  %0 = "top.Yuv2rgbFormula"(%a) {src_format = 4 : i64, dst_format = 4 : i64, image_format = "UINT8", formula_mode = "_601_limited"} : (tensor<6x4xui8>) -> tensor<*xui8> loc("rgb_in")
  func.return %0 : tensor<*xui8>
}

// -----

// CHECK: error: 'top.Yuv2rgbFormula' op "down" attribute 'round_mode' = "Down" is not supported (supported: "HalfAwayFromZero", "HalfToEven")
func.func @main(%a: tensor<6x4xui8>) -> tensor<*xui8> {
  %0 = "top.Yuv2rgbFormula"(%a) {src_format = 2 : i64, dst_format = 4 : i64, image_format = "UINT8", formula_mode = "_601_limited", round_mode = "Down"} : (tensor<6x4xui8>) -> tensor<*xui8> loc("down")
  func.return %0 : tensor<*xui8>
}

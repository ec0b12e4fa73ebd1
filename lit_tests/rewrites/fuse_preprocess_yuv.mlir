// --fuse-preprocess with a YUV customization format (TPU-MLIR's Preprocess lowering on BM1684X: a Yuv2rgbFormula,
// _601_limited, uint8 pixels, src_format 0 for YUV420_PLANAR, 2 NV12, 3 NV21, dst_format 4 for an rgb model,
// 5 for bgr). The raw input is the 4:2:0 frames [N, H * 3 / 2, W] of resize_dims' H x W (ui8), recorded as
// TPU-MLIR records it (pixel_format bgr, nchw); "<name>_preprocess_yuv2rgb" gives the planes in the model's
// order, then the Permute (nhwc models), the crop (resize_dims larger) and the arithmetic. Values:
// tests/test_fuse_preprocess.py, tests/test_yuv2rgb_formula.py.
// RUN: rm -rf %t && mkdir %t && cp %s %t/in.mlir
// RUN: python %S/Inputs/make_weights.py %s %t/in_weight.npz
// RUN: tpuc-opt %t/in.mlir --fuse-preprocess="mode=F32 customization_format=YUV_NV12" --mlir-print-debuginfo -o %t/nv12.mlir
// RUN: filecheck %s --check-prefix=NV12 < %t/nv12.mlir
// RUN: tpuc-opt %t/in.mlir --fuse-preprocess="mode=F32 customization_format=YUV420_PLANAR" -o %t/i420.mlir
// RUN: filecheck %s --check-prefix=I420 < %t/i420.mlir
// RUN: tpuc-opt %t/in.mlir --fuse-preprocess="mode=F32 customization_format=YUV_NV21" -o %t/nv21.mlir
// RUN: filecheck %s --check-prefix=NV21 < %t/nv21.mlir
// What it refuses: fuse_preprocess_yuv_errors.mlir.

// NV12:      func.func @main(%arg0: tensor<1x6x6xui8> {{.*}}, %arg1: tensor<2x9x6xui8> {{.*}})
// NV12:        %[[X:[0-9]+]] = "top.Input"(%arg0) {channel_format = "nchw", customization_format = "YUV_NV12", {{.*}}pixel_format = "bgr", {{.*}} : (tensor<1x6x6xui8>) -> tensor<1x6x6x!quant.uniform<u8:f32, 1.000000e+00>> loc([[XLOC:#loc[0-9]+]])
// NV12-NEXT:   %[[XRGB:[0-9]+]] = "top.Yuv2rgbFormula"(%[[X]]) {dst_format = 4 : i64, formula_mode = "_601_limited", image_format = "UINT8", round_mode = "HalfAwayFromZero", src_format = 2 : i64} : ({{.*}}) -> tensor<1x3x4x6x!quant.uniform<u8:f32, 1.000000e+00>> loc([[XRGBLOC:#loc[0-9]+]])
// NV12-NEXT:   "top.Cast"(%[[XRGB]]) : {{.*}} -> tensor<1x3x4x6xf32>
// NV12:        %[[P:[0-9]+]] = "top.Input"(%arg1) {{.*}} -> tensor<2x9x6x!quant.uniform<u8:f32, 1.000000e+00>>
// NV12-NEXT:   %[[PRGB:[0-9]+]] = "top.Yuv2rgbFormula"(%[[P]]) {dst_format = 5 : i64, {{.*}}src_format = 2 : i64} : ({{.*}}) -> tensor<2x3x6x6x!quant.uniform<u8:f32, 1.000000e+00>>
// NV12-NEXT:   %[[PP:[0-9]+]] = "top.Permute"(%[[PRGB]]) {order = [0, 2, 3, 1]} : {{.*}} -> tensor<2x6x6x3x!quant.uniform<u8:f32, 1.000000e+00>>
// NV12-NEXT:   "top.None"()
// NV12-NEXT:   %[[PC:[0-9]+]] = "top.Slice"(%[[PP]], {{.*}}) {ends = [2, 5, 6, 3], offset = [0, 1, 0, 0], steps = [1, 1, 1, 1]} : {{.*}} -> tensor<2x4x6x3x!quant.uniform<u8:f32, 1.000000e+00>>
// NV12-NEXT:   "top.Cast"(%[[PC]])
// NV12-DAG:  [[XLOC]] = loc("x_raw")
// NV12-DAG:  [[XRGBLOC]] = loc("x_preprocess_yuv2rgb")

// I420:      "top.Yuv2rgbFormula"({{.*}}) {dst_format = 4 : i64, {{.*}}src_format = 0 : i64}
// I420:      "top.Yuv2rgbFormula"({{.*}}) {dst_format = 5 : i64, {{.*}}src_format = 0 : i64}
// NV21:      "top.Yuv2rgbFormula"({{.*}}) {dst_format = 4 : i64, {{.*}}src_format = 3 : i64}
// NV21:      "top.Yuv2rgbFormula"({{.*}}) {dst_format = 5 : i64, {{.*}}src_format = 3 : i64}

module attributes {module.chip = "ALL", module.name = "yuv", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "in_weight.npz"} {
  func.func @main(%arg0: tensor<1x3x4x6xf32>, %arg1: tensor<2x4x6x3xf32>) -> (tensor<1x3x4x6xf32>, tensor<2x4x6x3xf32>) {
    %0 = "top.Input"(%arg0) {channel_format = "nchw", do_preprocess = true, mean = [1.0, 2.0, 3.0], pixel_format = "rgb", resize_dims = [4, 6], scale = [1.0, 1.0, 1.0]} : (tensor<1x3x4x6xf32>) -> tensor<1x3x4x6xf32> loc("x")
    %1 = "top.Input"(%arg1) {channel_format = "nhwc", do_preprocess = true, mean = [1.0, 2.0, 3.0], pixel_format = "bgr", resize_dims = [6, 6], scale = [1.0, 1.0, 1.0]} : (tensor<2x4x6x3xf32>) -> tensor<2x4x6x3xf32> loc("p")
    return %0, %1 : tensor<1x3x4x6xf32>, tensor<2x4x6x3xf32>
  }
}

// --fuse-preprocess (TPU-MLIR's model_deploy --fuse_preprocess): an input with the preprocessing model_transform
// recorded takes raw uint8 data in the customization format and computes its preprocessing in the graph; the
// last op keeps the input's name ("x"), the raw input is "x_raw". The input without preprocessing ("y") is left
// as it is. docs/tpuc-opt.md has the decision table; tests/test_fuse_preprocess.py checks the values.
// RUN: rm -rf %t && mkdir %t && cp %s %t/in.mlir
// RUN: python %S/Inputs/make_weights.py %s %t/in_weight.npz
// RUN: tpuc-opt %t/in.mlir --fuse-preprocess="mode=F32 customization_format=BGR_PACKED align=False" --mlir-print-debuginfo -o %t/packed.mlir
// RUN: filecheck %s --check-prefix=PACKED < %t/packed.mlir
// RUN: tpuc-opt %t/in.mlir --fuse-preprocess="mode=F32 customization_format=RGB_PLANAR" -o %t/same.mlir
// RUN: filecheck %s --check-prefix=SAME < %t/same.mlir
// An empty customization_format is the model's own (rgb, nchw: RGB_PLANAR), as model_deploy's default.
// RUN: tpuc-opt %t/in.mlir --fuse-preprocess="mode=F32" -o %t/default.mlir
// RUN: filecheck %s --check-prefix=SAME < %t/default.mlir
// RUN: tpuc-opt %t/in.mlir --fuse-preprocess="mode=F32 customization_format=BGR_PLANAR" -o %t/planar.mlir
// RUN: filecheck %s --check-prefix=PLANAR < %t/planar.mlir
// A fused input (customization_format set) is not fused again, whatever the format: a second run changes
// nothing (and writes no weights).
// RUN: tpuc-opt %t/packed.mlir --fuse-preprocess="mode=F32 customization_format=BGR_PLANAR" --mlir-print-debuginfo -o %t/twice.mlir
// RUN: diff %t/packed.mlir %t/twice.mlir
// RUN: not ls %t/twice_weight.npz

// Options tpudsl does not model, each one error: align=true (CV18xx), the raw Bayer customization
// formats, a precision tpudsl does not lower to (YUV: fuse_preprocess_yuv.mlir).
// RUN: not tpuc-opt %t/in.mlir --fuse-preprocess="mode=F32 align=True" 2>&1 | filecheck %s --check-prefix=ALIGN
// RUN: not tpuc-opt %t/in.mlir --fuse-preprocess="mode=F32 customization_format=GBRG_RAW" 2>&1 | filecheck %s --check-prefix=BAYER
// RUN: not tpuc-opt %t/in.mlir --fuse-preprocess="mode=INT4" 2>&1 | filecheck %s --check-prefix=INT4

// ALIGN-NOT:  Traceback
// ALIGN:      error: fuse-preprocess: align=true is not supported: aligned input rows are CV18xx's (cvimodel); tpudsl deploys bm1684x .bmodel files (supported: align=false)
// BAYER:      error: fuse-preprocess: customization_format=GBRG_RAW is not supported: raw Bayer inputs need depacking inside the model, which tpudsl does not model (supported: customization_format=RGB_PLANAR or customization_format=RGB_PACKED or customization_format=BGR_PLANAR or customization_format=BGR_PACKED or customization_format=GRAYSCALE or customization_format=RGBA_PLANAR or customization_format=YUV420_PLANAR or customization_format=YUV_NV12 or customization_format=YUV_NV21)
// INT4:       error: fuse-preprocess: mode=INT4 is not supported: the precisions tpudsl lowers to (supported: mode=F32 or mode=F16 or mode=BF16 or mode=INT8)

// PACKED:      func.func @main(%arg0: tensor<1x4x6x3xui8> {{.*}}, %arg1: tensor<1x3x4x6xf32> {{.*}}) -> (tensor<1x3x4x6xf32>, tensor<1x3x4x6xf32>) {
// PACKED-NEXT:   "top.Weight"() : () -> tensor<1x3x1x1xf32> loc([[WLOC:#loc[0-9]+]])
// PACKED-NEXT:   %[[MEAN:[0-9]+]] = "top.Weight"() : () -> tensor<1x3x1x1xf32> loc([[MEANLOC:#loc[0-9]+]])
// PACKED-NEXT:   %[[SCALE:[0-9]+]] = "top.Weight"() : () -> tensor<1x3x1x1xf32> loc([[SCALELOC:#loc[0-9]+]])
// PACKED:        %[[RAW:[0-9]+]] = "top.Input"(%arg0) {channel_format = "nhwc", customization_format = "BGR_PACKED", do_preprocess = true, {{.*}}mean = [0.000000e+00, 0.000000e+00, 0.000000e+00], {{.*}}pixel_format = "bgr", resize_dims = [4, 6], scale = [1.000000e+00, 1.000000e+00, 1.000000e+00]} : (tensor<1x4x6x3xui8>) -> tensor<1x4x6x3x!quant.uniform<u8:f32, 1.000000e+00>> loc([[RAWLOC:#loc[0-9]+]])
// PACKED-NEXT:   %[[NCHW:[0-9]+]] = "top.Permute"(%[[RAW]]) {order = [0, 3, 1, 2]} : {{.*}} -> tensor<1x3x4x6x!quant.uniform<u8:f32, 1.000000e+00>>
// PACKED-NEXT:   %[[NONE:[0-9]+]] = "top.None"()
// PACKED-NEXT:   %[[C2:[0-9]+]] = "top.Slice"(%[[NCHW]], %[[NONE]], %[[NONE]], %[[NONE]]) {ends = [1, 3, 4, 6], offset = [0, 2, 0, 0], steps = [1, 1, 1, 1]} : {{.*}} -> tensor<1x1x4x6x!quant.uniform<u8:f32, 1.000000e+00>>
// PACKED-NEXT:   %[[C1:[0-9]+]] = "top.Slice"(%[[NCHW]], {{.*}}) {ends = [1, 2, 4, 6], offset = [0, 1, 0, 0], {{.*}}
// PACKED-NEXT:   %[[C0:[0-9]+]] = "top.Slice"(%[[NCHW]], {{.*}}) {ends = [1, 1, 4, 6], offset = [0, 0, 0, 0], {{.*}}
// PACKED-NEXT:   %[[RGB:[0-9]+]] = "top.Concat"(%[[C2]], %[[C1]], %[[C0]]) {axis = 1 : i64} : {{.*}} -> tensor<1x3x4x6x!quant.uniform<u8:f32, 1.000000e+00>> loc([[RGBLOC:#loc[0-9]+]])
// PACKED-NEXT:   %[[F32:[0-9]+]] = "top.Cast"(%[[RGB]]) : {{.*}} -> tensor<1x3x4x6xf32> loc([[F32LOC:#loc[0-9]+]])
// PACKED-NEXT:   %[[SUB:[0-9]+]] = "top.Sub"(%[[F32]], %[[MEAN]]) : {{.*}} -> tensor<1x3x4x6xf32> loc([[SUBLOC:#loc[0-9]+]])
// PACKED-NEXT:   %[[X:[0-9]+]] = "top.Mul"(%[[SUB]], %[[SCALE]]) : {{.*}} -> tensor<1x3x4x6xf32> loc([[XLOC:#loc[0-9]+]])
// PACKED-NEXT:   %[[Y:[0-9]+]] = "top.Input"(%arg1) : (tensor<1x3x4x6xf32>) -> tensor<1x3x4x6xf32> loc([[YLOC:#loc[0-9]+]])
// PACKED:        "top.Relu"(%[[X]])
// PACKED:        return %{{[0-9]+}}, %[[X]]
// PACKED-DAG:  [[WLOC]] = loc("w")
// PACKED-DAG:  [[MEANLOC]] = loc("x_preprocess_mean")
// PACKED-DAG:  [[SCALELOC]] = loc("x_preprocess_scale")
// PACKED-DAG:  [[RAWLOC]] = loc("x_raw")
// PACKED-DAG:  [[RGBLOC]] = loc("x_preprocess_rgb")
// PACKED-DAG:  [[F32LOC]] = loc("x_preprocess_f32")
// PACKED-DAG:  [[SUBLOC]] = loc("x_preprocess_sub")
// PACKED-DAG:  [[XLOC]] = loc("x")
// PACKED-DAG:  [[YLOC]] = loc("y")

// The model's own order and layout: no move, only the arithmetic.
// SAME:      func.func @main(%arg0: tensor<1x3x4x6xui8> {{.*}}, %arg1: tensor<1x3x4x6xf32>
// SAME:        "top.Input"(%arg0) {channel_format = "nchw", customization_format = "RGB_PLANAR"
// SAME-NOT:    top.Permute
// SAME-NOT:    top.Slice
// SAME-NEXT:   "top.Cast"
// SAME-NEXT:   "top.Sub"
// SAME-NEXT:   "top.Mul"

// PLANAR:      func.func @main(%arg0: tensor<1x3x4x6xui8> {{.*}}, %arg1: tensor<1x3x4x6xf32>
// PLANAR:        "top.Input"(%arg0) {channel_format = "nchw", customization_format = "BGR_PLANAR"
// PLANAR-NOT:    top.Permute
// PLANAR:        "top.Concat"
// PLANAR-NEXT:   "top.Cast"

module attributes {module.chip = "ALL", module.name = "pre", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "in_weight.npz"} {
  func.func @main(%arg0: tensor<1x3x4x6xf32>, %arg1: tensor<1x3x4x6xf32>) -> (tensor<1x3x4x6xf32>, tensor<1x3x4x6xf32>) {
    %w = "top.Weight"() : () -> tensor<1x3x1x1xf32> loc("w")
    %0 = "top.Input"(%arg0) {channel_format = "nchw", do_preprocess = true, keep_aspect_ratio = false, keep_ratio_mode = "letterbox", mean = [1.000000e+01, 2.000000e+01, 3.000000e+01], pad_type = "center", pad_value = 0 : i64, pixel_format = "rgb", resize_dims = [4, 6], scale = [5.000000e-01, 2.500000e-01, 2.000000e+00]} : (tensor<1x3x4x6xf32>) -> tensor<1x3x4x6xf32> loc("x")
    %1 = "top.Input"(%arg1) : (tensor<1x3x4x6xf32>) -> tensor<1x3x4x6xf32> loc("y")
    %2 = "top.Relu"(%0) : (tensor<1x3x4x6xf32>) -> tensor<1x3x4x6xf32> loc("relu")
    %3 = "top.Add"(%2, %1, %w) : (tensor<1x3x4x6xf32>, tensor<1x3x4x6xf32>, tensor<1x3x1x1xf32>) -> tensor<1x3x4x6xf32> loc("add")
    return %3, %0 : tensor<1x3x4x6xf32>, tensor<1x3x4x6xf32>
  }
}

// --fuse-preprocess customization_format=RGBA_PLANAR: the raw input is planar R, G, B, alpha (4 channels, as
// TPU-MLIR types it). An rgba model reads all four (TPU-MLIR's case: no move); an rgb model reads the first three
// planes, one top.Slice "<name>_preprocess_rgb" dropping the alpha plane; a bgr model reads planes 2, 1, 0 (a
// Slice each and a Concat). The alpha-dropping reads are tpudsl's: TPU-MLIR gives such a model a 3-channel raw
// input it calls rgba. Values: tests/test_fuse_preprocess.py.
// RUN: rm -rf %t && mkdir %t && cp %s %t/in.mlir
// RUN: python %S/Inputs/make_weights.py %s %t/in_weight.npz
// RUN: tpuc-opt %t/in.mlir --fuse-preprocess="mode=F32 customization_format=RGBA_PLANAR" --mlir-print-debuginfo -o %t/out.mlir
// RUN: filecheck %s < %t/out.mlir

// CHECK:      func.func @main(%arg0: tensor<1x4x4x6xui8> {{.*}}, %arg1: tensor<1x4x4x6xui8> {{.*}}, %arg2: tensor<1x4x4x6xui8> {{.*}})
// CHECK:        %[[R:[0-9]+]] = "top.Input"(%arg0) {channel_format = "nchw", customization_format = "RGBA_PLANAR", {{.*}}mean = [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], {{.*}}pixel_format = "rgba", {{.*}} -> tensor<1x4x4x6x!quant.uniform<u8:f32, 1.000000e+00>> loc([[RLOC:#loc[0-9]+]])
// CHECK-NEXT:   %[[NONE:[0-9]+]] = "top.None"()
// CHECK-NEXT:   %[[RGB:[0-9]+]] = "top.Slice"(%[[R]], %[[NONE]], %[[NONE]], %[[NONE]]) {ends = [1, 3, 4, 6], offset = [0, 0, 0, 0], steps = [1, 1, 1, 1]} : {{.*}} -> tensor<1x3x4x6x!quant.uniform<u8:f32, 1.000000e+00>> loc([[RGBLOC:#loc[0-9]+]])
// CHECK-NEXT:   "top.Cast"(%[[RGB]])
// CHECK:        %[[B:[0-9]+]] = "top.Input"(%arg1) {{.*}} -> tensor<1x4x4x6x!quant.uniform<u8:f32, 1.000000e+00>>
// CHECK-NEXT:   "top.None"()
// CHECK-NEXT:   "top.Slice"(%[[B]], {{.*}}) {ends = [1, 3, 4, 6], offset = [0, 2, 0, 0], {{.*}}
// CHECK-NEXT:   "top.Slice"(%[[B]], {{.*}}) {ends = [1, 2, 4, 6], offset = [0, 1, 0, 0], {{.*}}
// CHECK-NEXT:   "top.Slice"(%[[B]], {{.*}}) {ends = [1, 1, 4, 6], offset = [0, 0, 0, 0], {{.*}}
// CHECK-NEXT:   "top.Concat"({{.*}}) {axis = 1 : i64} : {{.*}} -> tensor<1x3x4x6x!quant.uniform<u8:f32, 1.000000e+00>> loc([[BGRLOC:#loc[0-9]+]])
// CHECK:        %[[A:[0-9]+]] = "top.Input"(%arg2) {{.*}} -> tensor<1x4x4x6x!quant.uniform<u8:f32, 1.000000e+00>>
// CHECK-NEXT:   "top.Cast"(%[[A]]) : {{.*}} -> tensor<1x4x4x6xf32>
// CHECK-NEXT:   "top.Sub"
// CHECK-NEXT:   "top.Mul"
// CHECK-DAG:  [[RLOC]] = loc("x_raw")
// CHECK-DAG:  [[RGBLOC]] = loc("x_preprocess_rgb")
// CHECK-DAG:  [[BGRLOC]] = loc("b_preprocess_bgr")

module attributes {module.chip = "ALL", module.name = "rgba", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "in_weight.npz"} {
  func.func @main(%arg0: tensor<1x3x4x6xf32>, %arg1: tensor<1x3x4x6xf32>, %arg2: tensor<1x4x4x6xf32>) -> (tensor<1x3x4x6xf32>, tensor<1x3x4x6xf32>, tensor<1x4x4x6xf32>) {
    %0 = "top.Input"(%arg0) {channel_format = "nchw", do_preprocess = true, mean = [1.0, 2.0, 3.0], pixel_format = "rgb", resize_dims = [4, 6], scale = [1.0, 1.0, 1.0]} : (tensor<1x3x4x6xf32>) -> tensor<1x3x4x6xf32> loc("x")
    %1 = "top.Input"(%arg1) {channel_format = "nchw", do_preprocess = true, mean = [1.0, 2.0, 3.0], pixel_format = "bgr", resize_dims = [4, 6], scale = [1.0, 1.0, 1.0]} : (tensor<1x3x4x6xf32>) -> tensor<1x3x4x6xf32> loc("b")
    %2 = "top.Input"(%arg2) {channel_format = "nchw", do_preprocess = true, mean = [1.0, 2.0, 3.0, 4.0], pixel_format = "rgba", resize_dims = [4, 6], scale = [1.0, 1.0, 1.0, 1.0]} : (tensor<1x4x4x6xf32>) -> tensor<1x4x4x6xf32> loc("a")
    return %0, %1, %2 : tensor<1x3x4x6xf32>, tensor<1x3x4x6xf32>, tensor<1x4x4x6xf32>
  }
}

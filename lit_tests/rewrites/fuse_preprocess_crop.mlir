// --fuse-preprocess with resize_dims larger than the input (TPU-MLIR's Preprocess lowering): the raw input has
// resize_dims' H x W and a top.Slice "<name>_preprocess_slice" crops its center, in the model's layout, after
// the Permute and before the channels are reordered. The offsets are TPU-MLIR's, resized // 2 - size // 2:
// x (5x4 of 8x7) starts at row 2 (not (8 - 5) // 2 = 1) and column 1; p (nhwc, 3x6 of 6x9) at row 2 and
// column 1. Values: tests/test_fuse_preprocess.py.
// RUN: rm -rf %t && mkdir %t && cp %s %t/in.mlir
// RUN: python %S/Inputs/make_weights.py %s %t/in_weight.npz
// RUN: tpuc-opt %t/in.mlir --fuse-preprocess="mode=F32 customization_format=RGB_PACKED" --mlir-print-debuginfo -o %t/out.mlir
// RUN: filecheck %s < %t/out.mlir

// CHECK:      func.func @main(%arg0: tensor<1x8x7x3xui8> {{.*}}, %arg1: tensor<1x6x9x3xui8> {{.*}})
// CHECK:        %[[X:[0-9]+]] = "top.Input"(%arg0) {{.*}}resize_dims = [8, 7]{{.*}} -> tensor<1x8x7x3x!quant.uniform<u8:f32, 1.000000e+00>>
// CHECK-NEXT:   %[[XP:[0-9]+]] = "top.Permute"(%[[X]]) {order = [0, 3, 1, 2]} : {{.*}} -> tensor<1x3x8x7x!quant.uniform<u8:f32, 1.000000e+00>>
// CHECK-NEXT:   %[[NONE:[0-9]+]] = "top.None"()
// CHECK-NEXT:   %[[XC:[0-9]+]] = "top.Slice"(%[[XP]], %[[NONE]], %[[NONE]], %[[NONE]]) {ends = [1, 3, 7, 5], offset = [0, 0, 2, 1], steps = [1, 1, 1, 1]} : {{.*}} -> tensor<1x3x5x4x!quant.uniform<u8:f32, 1.000000e+00>> loc([[XCLOC:#loc[0-9]+]])
// CHECK-NEXT:   "top.Cast"(%[[XC]]) : {{.*}} -> tensor<1x3x5x4xf32>
// CHECK:        %[[P:[0-9]+]] = "top.Input"(%arg1) {{.*}} -> tensor<1x6x9x3x!quant.uniform<u8:f32, 1.000000e+00>>
// CHECK-NOT:    top.Permute
// CHECK:        %[[PC:[0-9]+]] = "top.Slice"(%[[P]], {{.*}}) {ends = [1, 5, 7, 3], offset = [0, 2, 1, 0], steps = [1, 1, 1, 1]} : {{.*}} -> tensor<1x3x6x3x!quant.uniform<u8:f32, 1.000000e+00>> loc([[PCLOC:#loc[0-9]+]])
// CHECK-NEXT:   "top.Slice"(%[[PC]], {{.*}}) {ends = [1, 3, 6, 3], offset = [0, 0, 0, 2], {{.*}}
// CHECK-NEXT:   "top.Slice"(%[[PC]], {{.*}}) {ends = [1, 3, 6, 2], offset = [0, 0, 0, 1], {{.*}}
// CHECK-NEXT:   "top.Slice"(%[[PC]], {{.*}}) {ends = [1, 3, 6, 1], offset = [0, 0, 0, 0], {{.*}}
// CHECK-NEXT:   "top.Concat"({{.*}}) {axis = 3 : i64} : {{.*}} -> tensor<1x3x6x3x!quant.uniform<u8:f32, 1.000000e+00>>
// CHECK-DAG:  [[XCLOC]] = loc("x_preprocess_slice")
// CHECK-DAG:  [[PCLOC]] = loc("p_preprocess_slice")

module attributes {module.chip = "ALL", module.name = "crop", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "in_weight.npz"} {
  func.func @main(%arg0: tensor<1x3x5x4xf32>, %arg1: tensor<1x3x6x3xf32>) -> (tensor<1x3x5x4xf32>, tensor<1x3x6x3xf32>) {
    %0 = "top.Input"(%arg0) {channel_format = "nchw", do_preprocess = true, mean = [1.0, 2.0, 3.0], pixel_format = "rgb", resize_dims = [8, 7], scale = [1.0, 1.0, 1.0]} : (tensor<1x3x5x4xf32>) -> tensor<1x3x5x4xf32> loc("x")
    %1 = "top.Input"(%arg1) {channel_format = "nhwc", do_preprocess = true, mean = [1.0, 2.0, 3.0], pixel_format = "bgr", resize_dims = [6, 9], scale = [1.0, 1.0, 1.0]} : (tensor<1x3x6x3xf32>) -> tensor<1x3x6x3xf32> loc("p")
    return %0, %1 : tensor<1x3x5x4xf32>, tensor<1x3x6x3xf32>
  }
}

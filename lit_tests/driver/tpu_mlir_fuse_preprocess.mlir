// TPU-MLIR's lowering command line with --fuse-preprocess (mlir_shell.py's lowering_options with
// model_deploy --fuse_preprocess): after --import-calibration-table and --processor-top-optimize, before
// --convert-top-to-tpu. The raw uint8 input's moves stay uint8 at the Tpu level in every mode (in INT8 the
// lowering keeps a move whose tensors are quantized already, no calibrated range asked; in F32 the Tpu
// ops move the bytes); INT8 subtracts the mean from the uint8 values themselves (no cast, no loss),
// F32 casts them first. The last op keeps the input's name. Values: tests/test_fuse_preprocess.py.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python %S/../rewrites/Inputs/make_weights.py %s %t/m_weight.npz --inputs %t/in.npz
// RUN: mkdir %t/samples && cp %t/in.npz %t/samples/
// RUN: cd %t && run_calibration m.mlir --dataset samples -o m_cali_table
// RUN: cd %t && tpuc-opt m.mlir --processor-assign="chip=bm1684x mode=INT8 num_device=1 num_core=1 addr_mode=auto high_precision=False" --import-calibration-table="file=m_cali_table asymmetric=False" --processor-top-optimize --fuse-preprocess="mode=INT8 customization_format=BGR_PACKED align=False" --convert-top-to-tpu="weightFileName=m_bm1684x_int8_sym_tpu_weights.npz asymmetric=False doWinograd=False q_group_size=0 q_symmetric=False matmul_perchannel=False gelu_mode=normal" --canonicalize --weight-fold -o m_bm1684x_int8_sym_tpu.mlir
// RUN: filecheck %s --check-prefix=INT8 < %t/m_bm1684x_int8_sym_tpu.mlir
// RUN: cd %t && tpuc-opt m.mlir --processor-assign="chip=bm1684x mode=F32 num_device=1 num_core=1 addr_mode=auto high_precision=False" --processor-top-optimize --fuse-preprocess="mode=F32 customization_format=BGR_PACKED align=False" --convert-top-to-tpu="weightFileName=m_bm1684x_f32_tpu_weights.npz asymmetric=False doWinograd=False q_group_size=0 q_symmetric=False matmul_perchannel=False gelu_mode=normal" --canonicalize --weight-fold -o m_bm1684x_f32_tpu.mlir
// RUN: filecheck %s --check-prefix=F32 < %t/m_bm1684x_f32_tpu.mlir
// YUV frames, mode INT8 (tpu.Yuv2rgbFormula keeps its uint8 types: no cast, no calibrated range; the Sub reads its pixels).
// RUN: cd %t && tpuc-opt m.mlir --processor-assign="chip=bm1684x mode=INT8 num_device=1 num_core=1 addr_mode=auto high_precision=False" --import-calibration-table="file=m_cali_table asymmetric=False" --processor-top-optimize --fuse-preprocess="mode=INT8 customization_format=YUV_NV21 align=False" --convert-top-to-tpu="weightFileName=m_yuv_tpu_weights.npz asymmetric=False doWinograd=False q_group_size=0 q_symmetric=False matmul_perchannel=False gelu_mode=normal" --canonicalize --weight-fold -o m_yuv_tpu.mlir
// RUN: filecheck %s --check-prefix=YUV < %t/m_yuv_tpu.mlir
// The mode must be the module's (processor-assign's): another is an error naming both.
// RUN: cd %t && not tpuc-opt m.mlir --processor-assign="chip=bm1684x mode=F16" --fuse-preprocess="mode=F32" 2>&1 | filecheck %s --check-prefix=MODE

// INT8:      func.func @main(%arg0: tensor<1x4x6x3xui8> {{.*}}) -> tensor<1x8x4x6xf32> {
// INT8:        %[[RAW:[0-9]+]] = "top.Input"(%arg0) {{.*}} : (tensor<1x4x6x3xui8>) -> tensor<1x4x6x3x!quant.uniform<u8:f32, 1.000000e+00>> loc(#[[RAWLOC:loc[0-9]+]])
// INT8:        %[[NCHW:[0-9]+]] = "tpu.Permute"(%[[RAW]], {{.*}}) {order = [0, 3, 1, 2]} : {{.*}} -> tensor<1x3x4x6x!quant.uniform<u8:f32, 1.000000e+00>>
// INT8-COUNT-3: "tpu.Slice"(%[[NCHW]], {{.*}} -> tensor<1x1x4x6x!quant.uniform<u8:f32, 1.000000e+00>>
// INT8:        %[[RGB:[0-9]+]] = "tpu.Concat"({{.*}}) {axis = 1 : i64} : {{.*}} -> tensor<1x3x4x6x!quant.uniform<u8:f32, 1.000000e+00>>
// INT8-NOT:    tpu.Cast
// INT8:        %[[SUB:[0-9]+]] = "tpu.Sub"(%[[RGB]], %{{[0-9]+}}) {{.*}} -> tensor<1x3x4x6x!quant.uniform<i8:f32, {{.*}}>> loc(#[[SUBLOC:loc[0-9]+]])
// INT8-NEXT:   %[[X:[0-9]+]] = "tpu.Mul"(%[[SUB]], %{{[0-9]+}}) {{.*}} -> tensor<1x3x4x6x!quant.uniform<i8:f32, {{.*}}>> loc(#[[XLOC:loc[0-9]+]])
// INT8:        "tpu.Conv2D"(%[[X]],
// INT8-DAG:  #[[RAWLOC]] = loc("x_raw")
// INT8-DAG:  #[[SUBLOC]] = loc("x_preprocess_sub")
// INT8-DAG:  #[[XLOC]] = loc("x")

// F32:       func.func @main(%arg0: tensor<1x4x6x3xui8> {{.*}}) -> tensor<1x8x4x6xf32> {
// F32:         "tpu.Permute"({{.*}} -> tensor<1x3x4x6x!quant.uniform<u8:f32, 1.000000e+00>>
// F32:         %[[RGB:[0-9]+]] = "tpu.Concat"({{.*}} -> tensor<1x3x4x6x!quant.uniform<u8:f32, 1.000000e+00>>
// F32-NEXT:    %[[F:[0-9]+]] = "tpu.Cast"(%[[RGB]]) {{.*}} -> tensor<1x3x4x6xf32> loc(#[[FLOC:loc[0-9]+]])
// F32-NEXT:    %[[SUB:[0-9]+]] = "tpu.Sub"(%[[F]], %{{[0-9]+}}) {{.*}} -> tensor<1x3x4x6xf32>
// F32-NEXT:    "tpu.Mul"(%[[SUB]], %{{[0-9]+}}) {{.*}} -> tensor<1x3x4x6xf32> loc(#[[XLOC:loc[0-9]+]])
// F32-DAG:   #[[FLOC]] = loc("x_preprocess_f32")
// F32-DAG:   #[[XLOC]] = loc("x")

// YUV:       func.func @main(%arg0: tensor<1x6x6xui8> {{.*}}) -> tensor<1x8x4x6xf32> {
// YUV:         %[[RAW:[0-9]+]] = "top.Input"(%arg0) {{.*}} -> tensor<1x6x6x!quant.uniform<u8:f32, 1.000000e+00>>
// YUV-NEXT:    %[[RGB:[0-9]+]] = "tpu.Yuv2rgbFormula"(%[[RAW]]) {dst_format = 4 : i64, formula_mode = "_601_limited", image_format = "UINT8", round_mode = "HalfAwayFromZero", src_format = 3 : i64} : {{.*}} -> tensor<1x3x4x6x!quant.uniform<u8:f32, 1.000000e+00>>
// YUV-NOT:     tpu.Cast
// YUV:         "tpu.Sub"(%[[RGB]], %{{[0-9]+}}) {{.*}} -> tensor<1x3x4x6x!quant.uniform<i8:f32, {{.*}}>>

// MODE:      error: fuse-preprocess: mode=F32 differs from the module's mode F16 (processor-assign)

module attributes {module.chip = "ALL", module.name = "m", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x3x4x6xf32>) -> tensor<1x8x4x6xf32> {
    %w = "top.Weight"() : () -> tensor<8x3x3x3xf32> loc("conv_w")
    %b = "top.Weight"() : () -> tensor<8xf32> loc("conv_b")
    %0 = "top.Input"(%arg0) {channel_format = "nchw", do_preprocess = true, keep_aspect_ratio = false, keep_ratio_mode = "letterbox", mean = [1.000000e+01, 2.000000e+01, 3.000000e+01], pad_type = "center", pad_value = 0 : i64, pixel_format = "rgb", resize_dims = [4, 6], scale = [1.000000e-02, 2.000000e-02, 1.500000e-02]} : (tensor<1x3x4x6xf32>) -> tensor<1x3x4x6xf32> loc("x")
    %1 = "top.Conv"(%0, %w, %b) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [1, 1]} : (tensor<1x3x4x6xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x4x6xf32> loc("conv")
    return %1 : tensor<1x8x4x6xf32>
  }
}

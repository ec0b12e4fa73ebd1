// --fuse-preprocess: what tpudsl does not model is one error naming it (exit 1, no output, no traceback);
// the options' errors are in fuse_preprocess.mlir.
// The inputs: a resize/crop inside the model, a colour the format cannot give, INT8 before calibration, a mode
// other than the module's.
// RUN: not tpuc-opt %s --split-input-file --fuse-preprocess="mode=F32 customization_format=BGR_PLANAR" 2>&1 | filecheck %s --check-prefix=INPUTS
// RUN: not tpuc-opt %s --split-input-file --fuse-preprocess="mode=INT8" 2>&1 | filecheck %s --check-prefix=INT8

// INPUTS-NOT:  Traceback
// INPUTS:      error: fuse-preprocess: top.Input "resized": resize_dims [6, 8] differ from the input's 4x6: the resize and crop inside the model are not modelled (give resize_dims equal to the input size)
// INPUTS:      error: fuse-preprocess: top.Input "gray": customization_format BGR_PLANAR (bgr) does not give the model's pixel_format gray: only rgb <-> bgr reorders are modelled
// INPUTS:      error: fuse-preprocess: top.Input "rgba": customization_format BGR_PLANAR (bgr) does not give the model's pixel_format rgba: only rgb <-> bgr reorders are modelled
// INPUTS:      error: fuse-preprocess: mode=F32 differs from the module's mode INT8 (processor-assign)
// INPUTS-NOT:  error

// INT8:        error: fuse-preprocess: top.Input "resized": resize_dims [6, 8] differ
// INT8:        error: fuse-preprocess: top.Input "gray": mode=INT8 needs the calibrated module: run --import-calibration-table first

func.func @main(%arg0: tensor<1x3x4x6xf32>) -> tensor<1x3x4x6xf32> {
  %0 = "top.Input"(%arg0) {channel_format = "nchw", do_preprocess = true, mean = [1.0, 2.0, 3.0], pixel_format = "rgb", resize_dims = [6, 8], scale = [1.0, 1.0, 1.0]} : (tensor<1x3x4x6xf32>) -> tensor<1x3x4x6xf32> loc("resized")
  return %0 : tensor<1x3x4x6xf32>
}

// -----

func.func @main(%arg0: tensor<1x1x4x6xf32>) -> tensor<1x1x4x6xf32> {
  %0 = "top.Input"(%arg0) {channel_format = "nchw", do_preprocess = true, mean = [1.0], pixel_format = "gray", resize_dims = [4, 6], scale = [1.0]} : (tensor<1x1x4x6xf32>) -> tensor<1x1x4x6xf32> loc("gray")
  return %0 : tensor<1x1x4x6xf32>
}

// -----

func.func @main(%arg0: tensor<1x4x4x6xf32>) -> tensor<1x4x4x6xf32> {
  %0 = "top.Input"(%arg0) {channel_format = "nchw", do_preprocess = true, pixel_format = "rgba", resize_dims = [4, 6]} : (tensor<1x4x4x6xf32>) -> tensor<1x4x4x6xf32> loc("rgba")
  return %0 : tensor<1x4x4x6xf32>
}

// -----

module attributes {module.mode = "INT8"} {
  func.func @main(%arg0: tensor<1x3x4x6xf32>) -> tensor<1x3x4x6xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x3x4x6xf32>) -> tensor<1x3x4x6xf32> loc("plain")
    return %0 : tensor<1x3x4x6xf32>
  }
}

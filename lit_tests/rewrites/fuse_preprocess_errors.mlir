// --fuse-preprocess: what tpudsl does not model is one error naming it (exit 1, no output, no traceback);
// the options' errors are in fuse_preprocess.mlir.
// The inputs: a resize inside the model (resize_dims smaller than the input; a larger one is cropped:
// fuse_preprocess.mlir), a colour the format cannot give, INT8 before calibration, a mode other than the module's.
// RUN: not tpuc-opt %s --split-input-file --fuse-preprocess="mode=F32 customization_format=BGR_PLANAR" 2>&1 | filecheck %s --check-prefix=INPUTS
// RUN: not tpuc-opt %s --split-input-file --fuse-preprocess="mode=INT8" 2>&1 | filecheck %s --check-prefix=INT8

// INPUTS-NOT:  Traceback
// INPUTS:      error: fuse-preprocess: top.Input "resized": resize_dims [3, 8] are not at least the input's 4x6: TPU-MLIR crops the center of a larger image; a smaller one (a resize inside the model) is not modelled
// INPUTS:      error: fuse-preprocess: top.Input "gray": customization_format BGR_PLANAR (bgr) does not give the model's pixel_format gray: only channels the raw data holds are picked (rgb <-> bgr reordered, rgba's alpha dropped)
// INPUTS:      error: fuse-preprocess: top.Input "rgba": customization_format BGR_PLANAR (bgr) does not give the model's pixel_format rgba: only channels the raw data holds are picked
// INPUTS:      error: fuse-preprocess: mode=F32 differs from the module's mode INT8 (processor-assign)
// INPUTS-NOT:  error

// INT8:        error: fuse-preprocess: top.Input "resized": resize_dims [3, 8] are not at least
// INT8:        error: fuse-preprocess: top.Input "gray": mode=INT8 needs the calibrated module: run --import-calibration-table first

func.func @main(%arg0: tensor<1x3x4x6xf32>) -> tensor<1x3x4x6xf32> {
  %0 = "top.Input"(%arg0) {channel_format = "nchw", do_preprocess = true, mean = [1.0, 2.0, 3.0], pixel_format = "rgb", resize_dims = [3, 8], scale = [1.0, 1.0, 1.0]} : (tensor<1x3x4x6xf32>) -> tensor<1x3x4x6xf32> loc("resized")
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

// --fuse-preprocess with a YUV customization format refuses, each by name (exit 1, no output): a gray model (the
// conversion gives rgb or bgr), an image size that is not even (4:2:0: each chroma sample covers 2 x 2 pixels).
// RUN: not tpuc-opt %s --split-input-file --fuse-preprocess="mode=F32 customization_format=YUV_NV12" 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK:     error: fuse-preprocess: top.Input "gray": customization_format YUV_NV12 gives rgb or bgr pixels, the model's pixel_format is gray
// CHECK:     error: fuse-preprocess: top.Input "odd": customization_format YUV_NV12: the image's 5x6 (resize_dims) is not even: each chroma sample of 4:2:0 YUV covers 2 x 2 pixels

// -----

func.func @main(%arg0: tensor<1x1x4x6xf32>) -> tensor<1x1x4x6xf32> {
  %0 = "top.Input"(%arg0) {channel_format = "nchw", do_preprocess = true, mean = [1.0], pixel_format = "gray", resize_dims = [4, 6], scale = [1.0]} : (tensor<1x1x4x6xf32>) -> tensor<1x1x4x6xf32> loc("gray")
  return %0 : tensor<1x1x4x6xf32>
}

// -----

func.func @main(%arg0: tensor<1x3x4x6xf32>) -> tensor<1x3x4x6xf32> {
  %0 = "top.Input"(%arg0) {channel_format = "nchw", do_preprocess = true, mean = [1.0, 2.0, 3.0], pixel_format = "rgb", resize_dims = [5, 6], scale = [1.0, 1.0, 1.0]} : (tensor<1x3x4x6xf32>) -> tensor<1x3x4x6xf32> loc("odd")
  return %0 : tensor<1x3x4x6xf32>
}

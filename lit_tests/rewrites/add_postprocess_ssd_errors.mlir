// RUN: not tpuc-opt %s --split-input-file --add-postprocess="type=ssd" 2>&1 | filecheck %s
// type=ssd refuses, in one line, outputs it cannot take as loc, conf and priorbox that TPU-MLIR would
// read another way, or rows TPU-MLIR would size by another batch (exit 1, no output, no traceback);
// add_postprocess_errors.mlir has output sets that are not SSD's at all.

// CHECK-NOT: Traceback
// Two outputs, boxes decoded and scores class-major: newer TPU-MLIR's onnx_nms form, not modelled.
// CHECK: error: add-postprocess: the outputs are not SSD's loc, conf and priorbox: takes 3 inputs (loc, conf, priorbox), got 2: TPU-MLIR's onnx_nms form (2 inputs, decoded boxes) is not modelled (the outputs are 'boxes' 1x8x4, 'scores' 1x3x8)
func.func @main(%arg0: tensor<1x3x8x8xf32>, %a: tensor<1x8x4xf32>, %b: tensor<1x3x8xf32>) -> (tensor<1x8x4xf32>, tensor<1x3x8xf32>) {
  %0 = "top.Input"(%a) : (tensor<1x8x4xf32>) -> tensor<1x8x4xf32> loc("boxes")
  %1 = "top.Input"(%b) : (tensor<1x3x8xf32>) -> tensor<1x3x8xf32> loc("scores")
  return %0, %1 : tensor<1x8x4xf32>, tensor<1x3x8xf32>
}

// -----
// TPU-MLIR types the rows [1, 1, input batch x 200, 7], the op's rule [1, 1, loc's batch x 200, 7]: they must agree.
// CHECK: error: add-postprocess: loc 'mbox_loc' has batch 2, the input 1
func.func @main(%arg0: tensor<1x3x8x8xf32>, %l: tensor<2x32xf32>, %c: tensor<2x24xf32>, %p: tensor<1x2x32xf32>) -> (tensor<2x32xf32>, tensor<2x24xf32>, tensor<1x2x32xf32>) {
  %0 = "top.Input"(%l) : (tensor<2x32xf32>) -> tensor<2x32xf32> loc("mbox_loc")
  %1 = "top.Input"(%c) : (tensor<2x24xf32>) -> tensor<2x24xf32> loc("mbox_conf_flatten")
  %2 = "top.Input"(%p) : (tensor<1x2x32xf32>) -> tensor<1x2x32xf32> loc("mbox_priorbox")
  return %0, %1, %2 : tensor<2x32xf32>, tensor<2x24xf32>, tensor<1x2x32xf32>
}

// -----
// TPU-MLIR reads the first input's batch, height and width for every type: it must be an image.
// CHECK: error: add-postprocess: the first input is not an N x C x H x W image: no net input size
func.func @main(%l: tensor<1x32xf32>, %c: tensor<1x24xf32>, %p: tensor<1x2x32xf32>) -> (tensor<1x32xf32>, tensor<1x24xf32>, tensor<1x2x32xf32>) {
  %0 = "top.Input"(%l) : (tensor<1x32xf32>) -> tensor<1x32xf32> loc("mbox_loc")
  %1 = "top.Input"(%c) : (tensor<1x24xf32>) -> tensor<1x24xf32> loc("mbox_conf_flatten")
  %2 = "top.Input"(%p) : (tensor<1x2x32xf32>) -> tensor<1x2x32xf32> loc("mbox_priorbox")
  return %0, %1, %2 : tensor<1x32xf32>, tensor<1x24xf32>, tensor<1x2x32xf32>
}
// CHECK-NOT: error

// RUN: not tpuc-opt %s --split-input-file --add-postprocess="type=ssd" 2>&1 | filecheck %s
// type=ssd refuses, in one line, outputs it cannot take as loc, conf and priorbox that TPU-MLIR would
// read another way (exit 1, no output, no traceback); add_postprocess_errors.mlir has output sets that
// are not SSD's at all.

// CHECK-NOT: Traceback
// Two outputs, boxes decoded and scores class-major: newer TPU-MLIR's onnx_nms form, not modelled.
// CHECK: error: add-postprocess: the outputs are not SSD's loc, conf and priorbox: takes 3 inputs (loc, conf, priorbox), got 2: TPU-MLIR's onnx_nms form (2 inputs, decoded boxes) is not modelled (the outputs are 'boxes' 1x8x4, 'scores' 1x3x8)
func.func @main(%arg0: tensor<1x3x8x8xf32>, %a: tensor<1x8x4xf32>, %b: tensor<1x3x8xf32>) -> (tensor<1x8x4xf32>, tensor<1x3x8xf32>) {
  %0 = "top.Input"(%a) : (tensor<1x8x4xf32>) -> tensor<1x8x4xf32> loc("boxes")
  %1 = "top.Input"(%b) : (tensor<1x3x8xf32>) -> tensor<1x3x8xf32> loc("scores")
  return %0, %1 : tensor<1x8x4xf32>, tensor<1x3x8xf32>
}

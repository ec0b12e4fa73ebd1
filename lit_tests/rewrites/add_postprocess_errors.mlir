// --add-postprocess refuses, in one line naming why, outputs that are not one to three YOLO heads (yolov8: one
// decoded head; ssd: loc, conf and priorbox), and the
// post-processing types it does not model (exit 1, no output, no traceback).
// RUN: not tpuc-opt %s --split-input-file --add-postprocess="type=yolov5" 2>&1 | filecheck %s
// RUN: not tpuc-opt %s --split-input-file --add-postprocess="type=ssd" 2>&1 | filecheck %s --check-prefix=SSD
// RUN: not tpuc-opt %s --split-input-file --add-postprocess="type=yolov8_seg" 2>&1 | filecheck %s --check-prefix=SEG
// RUN: not tpuc-opt %s --split-input-file --add-postprocess="type=yolov8" 2>&1 | filecheck %s --check-prefix=V8
// RUN: not tpuc-opt %s --split-input-file --add-postprocess="type=yolov9" 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not tpuc-opt %s --split-input-file --add-postprocess="type=yolov3" 2>&1 | filecheck %s --check-prefix=V3

// CHECK-NOT: Traceback
// CHECK: error: add-postprocess: the outputs do not look like YOLO heads: yolov5 takes 1 to 3 heads N x C x H x W, the outputs are 'logits' 1x10
// CHECK: error: add-postprocess: the outputs do not look like YOLO heads: head #1 has 24 channels: 3 boxes x (5 + 2 classes) are 21
// CHECK: error: add-postprocess: the outputs do not look like YOLO heads: head 'p3' is 6 wide: not a stride of the 64 wide input
// CHECK: error: add-postprocess: the outputs do not look like YOLO heads: the first input is not an N x C x H x W image: no net input size
// CHECK: error: add-postprocess: the outputs do not look like YOLO heads: yolov5 takes 1 to 3 heads N x C x H x W, the outputs are 'boxes' 1x4x64
// CHECK: error: add-postprocess: the outputs do not look like YOLO heads: yolov5 takes 1 to 3 heads N x C x H x W, the outputs are 'output0' 2x7x64
// CHECK: error: add-postprocess: the outputs do not look like YOLO heads: yolov5 takes 1 to 3 heads N x C x H x W, the outputs are 'p3' 1x21x8x8, 'p4' 1x21x4x4, 'p5' 1x21x2x2, 'p6' 1x21x1x1
// CHECK-NOT: error

// A head of stride 4 (a 4 wide head of a 16 wide input): yolov5 takes its first default triple (the
// module is printed), yolov3's anchors by stride would take triple 4 / 8 - 1 = -1 in TPU-MLIR.
// V3: error: add-postprocess: the outputs do not look like YOLO heads: a head of stride 4: TPU-MLIR's anchors by stride for 1 yolov3 head(s) (triple s / 8 - 1 where 8 does not divide s) would read before its table

// V8: error: add-postprocess: the outputs do not look like YOLO heads: yolov8 takes one head N x (4 + classes) x boxes, the outputs are 'logits' 1x10
// V8: error: add-postprocess: the outputs do not look like YOLO heads: yolov8 takes one head N x (4 + classes) x boxes, the outputs are 'p3' 1x21x8x8, 'p4' 1x24x4x4, 'p5' 1x21x2x2
// V8: error: add-postprocess: the outputs do not look like YOLO heads: yolov8 takes one head N x (4 + classes) x boxes, the outputs are 'p3' 1x21x6x6, 'p4' 1x21x4x4, 'p5' 1x21x2x2
// V8: error: add-postprocess: the outputs do not look like YOLO heads: yolov8 takes one head N x (4 + classes) x boxes, the outputs are 'p3' 1x21x8x8, 'p4' 1x21x4x4, 'p5' 1x21x2x2
// V8: error: add-postprocess: the outputs do not look like YOLO heads: yolov8 takes one head N x (4 + classes) x boxes, the outputs are 'boxes' 1x4x64
// V8: error: add-postprocess: the outputs do not look like YOLO heads: the heads have batch 2, the input 1
// V8: error: add-postprocess: the outputs do not look like YOLO heads: yolov8 takes one head N x (4 + classes) x boxes, the outputs are 'p3' 1x21x8x8, 'p4' 1x21x4x4, 'p5' 1x21x2x2, 'p6' 1x21x1x1
// V8: error: add-postprocess: the outputs do not look like YOLO heads: yolov8 takes one head N x (4 + classes) x boxes, the outputs are 'p2' 1x21x4x4
// V8-NOT: error

// type=ssd takes the outputs loc, conf and priorbox (add_postprocess_ssd.mlir); none of these is.
// SSD: error: add-postprocess: the outputs are not SSD's loc, conf and priorbox: takes 3 inputs (loc, conf, priorbox), got 1 (the outputs are 'logits' 1x10)
// SSD: error: add-postprocess: the outputs are not SSD's loc, conf and priorbox: priorbox has shape [1, 21, 2, 2], not [1, 2, priors * 4] (corners, then variances) (the outputs are 'p3' 1x21x8x8, 'p4' 1x24x4x4, 'p5' 1x21x2x2)
// SSD: error: add-postprocess: the outputs are not SSD's loc, conf and priorbox: priorbox has shape [1, 21, 2, 2], not [1, 2, priors * 4] (corners, then variances) (the outputs are 'p3' 1x21x6x6, 'p4' 1x21x4x4, 'p5' 1x21x2x2)
// SSD: error: add-postprocess: the outputs are not SSD's loc, conf and priorbox: priorbox has shape [1, 21, 2, 2], not [1, 2, priors * 4] (corners, then variances) (the outputs are 'p3' 1x21x8x8, 'p4' 1x21x4x4, 'p5' 1x21x2x2)
// SSD: error: add-postprocess: the outputs are not SSD's loc, conf and priorbox: takes 3 inputs (loc, conf, priorbox), got 1 (the outputs are 'boxes' 1x4x64)
// SSD: error: add-postprocess: the outputs are not SSD's loc, conf and priorbox: takes 3 inputs (loc, conf, priorbox), got 1 (the outputs are 'output0' 2x7x64)
// SSD: error: add-postprocess: the outputs are not SSD's loc, conf and priorbox: takes 3 inputs (loc, conf, priorbox), got 4 (the outputs are 'p3' 1x21x8x8, 'p4' 1x21x4x4, 'p5' 1x21x2x2, 'p6' 1x21x1x1)
// SSD: error: add-postprocess: the outputs are not SSD's loc, conf and priorbox: takes 3 inputs (loc, conf, priorbox), got 1 (the outputs are 'p2' 1x21x4x4)
// SSD-NOT: error
// SEG: error: add-postprocess: type=yolov8_seg is not supported: its mask post-processing is not modelled (supported: type=yolov3, yolov3_tiny, yolov5, yolov8, yolov11 or ssd)
// UNKNOWN: error: add-postprocess: type=yolov9 is not supported: not a post-processing TPU-MLIR has (supported: type= or type=yolov3 or type=yolov5 or type=yolov3_tiny or type=yolov8 or type=yolov11 or type=ssd)

func.func @main(%arg0: tensor<1x10xf32>) -> tensor<1x10xf32> {
  %0 = "top.Input"(%arg0) : (tensor<1x10xf32>) -> tensor<1x10xf32> loc("images")
  %1 = "top.Relu"(%0) : (tensor<1x10xf32>) -> tensor<1x10xf32> loc("logits")
  return %1 : tensor<1x10xf32>
}

// -----
func.func @main(%arg0: tensor<1x3x64x64xf32>, %a: tensor<1x21x8x8xf32>, %b: tensor<1x24x4x4xf32>, %c: tensor<1x21x2x2xf32>) -> (tensor<1x21x8x8xf32>, tensor<1x24x4x4xf32>, tensor<1x21x2x2xf32>) {
  %0 = "top.Input"(%a) : (tensor<1x21x8x8xf32>) -> tensor<1x21x8x8xf32> loc("p3")
  %1 = "top.Input"(%b) : (tensor<1x24x4x4xf32>) -> tensor<1x24x4x4xf32> loc("p4")
  %2 = "top.Input"(%c) : (tensor<1x21x2x2xf32>) -> tensor<1x21x2x2xf32> loc("p5")
  return %0, %1, %2 : tensor<1x21x8x8xf32>, tensor<1x24x4x4xf32>, tensor<1x21x2x2xf32>
}

// -----
func.func @main(%arg0: tensor<1x3x64x64xf32>, %a: tensor<1x21x6x6xf32>, %b: tensor<1x21x4x4xf32>, %c: tensor<1x21x2x2xf32>) -> (tensor<1x21x6x6xf32>, tensor<1x21x4x4xf32>, tensor<1x21x2x2xf32>) {
  %0 = "top.Input"(%a) : (tensor<1x21x6x6xf32>) -> tensor<1x21x6x6xf32> loc("p3")
  %1 = "top.Input"(%b) : (tensor<1x21x4x4xf32>) -> tensor<1x21x4x4xf32> loc("p4")
  %2 = "top.Input"(%c) : (tensor<1x21x2x2xf32>) -> tensor<1x21x2x2xf32> loc("p5")
  return %0, %1, %2 : tensor<1x21x6x6xf32>, tensor<1x21x4x4xf32>, tensor<1x21x2x2xf32>
}

// -----
func.func @main(%arg0: tensor<*xf32>, %a: tensor<1x21x8x8xf32>, %b: tensor<1x21x4x4xf32>, %c: tensor<1x21x2x2xf32>) -> (tensor<1x21x8x8xf32>, tensor<1x21x4x4xf32>, tensor<1x21x2x2xf32>) {
  %0 = "top.Input"(%a) : (tensor<1x21x8x8xf32>) -> tensor<1x21x8x8xf32> loc("p3")
  %1 = "top.Input"(%b) : (tensor<1x21x4x4xf32>) -> tensor<1x21x4x4xf32> loc("p4")
  %2 = "top.Input"(%c) : (tensor<1x21x2x2xf32>) -> tensor<1x21x2x2xf32> loc("p5")
  return %0, %1, %2 : tensor<1x21x8x8xf32>, tensor<1x21x4x4xf32>, tensor<1x21x2x2xf32>
}

// -----
// A [1, 4, boxes] output has no class row.
func.func @main(%arg0: tensor<1x3x64x64xf32>, %a: tensor<1x4x64xf32>) -> tensor<1x4x64xf32> {
  %0 = "top.Input"(%a) : (tensor<1x4x64xf32>) -> tensor<1x4x64xf32> loc("boxes")
  return %0 : tensor<1x4x64xf32>
}

// -----
func.func @main(%arg0: tensor<1x3x64x64xf32>, %a: tensor<2x7x64xf32>) -> tensor<2x7x64xf32> {
  %0 = "top.Input"(%a) : (tensor<2x7x64xf32>) -> tensor<2x7x64xf32> loc("output0")
  return %0 : tensor<2x7x64xf32>
}

// -----
func.func @main(%arg0: tensor<1x3x64x64xf32>, %a: tensor<1x21x8x8xf32>, %b: tensor<1x21x4x4xf32>, %c: tensor<1x21x2x2xf32>, %d: tensor<1x21x1x1xf32>) -> (tensor<1x21x8x8xf32>, tensor<1x21x4x4xf32>, tensor<1x21x2x2xf32>, tensor<1x21x1x1xf32>) {
  %0 = "top.Input"(%a) : (tensor<1x21x8x8xf32>) -> tensor<1x21x8x8xf32> loc("p3")
  %1 = "top.Input"(%b) : (tensor<1x21x4x4xf32>) -> tensor<1x21x4x4xf32> loc("p4")
  %2 = "top.Input"(%c) : (tensor<1x21x2x2xf32>) -> tensor<1x21x2x2xf32> loc("p5")
  %3 = "top.Input"(%d) : (tensor<1x21x1x1xf32>) -> tensor<1x21x1x1xf32> loc("p6")
  return %0, %1, %2, %3 : tensor<1x21x8x8xf32>, tensor<1x21x4x4xf32>, tensor<1x21x2x2xf32>, tensor<1x21x1x1xf32>
}

// -----
func.func @main(%arg0: tensor<1x3x16x16xf32>, %a: tensor<1x21x4x4xf32>) -> tensor<1x21x4x4xf32> {
  %0 = "top.Input"(%a) : (tensor<1x21x4x4xf32>) -> tensor<1x21x4x4xf32> loc("p2")
  return %0 : tensor<1x21x4x4xf32>
}

// RUN: not tpuc-opt %s --split-input-file 2>&1 | filecheck %s
// YoloDetection's heads must match class_num and the anchors; what tpudsl does not model is refused.

// CHECK: yolo_detection.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.YoloDetection' op "yolo_post" head #1 has 20 channels: 3 boxes x (5 + 2 classes) are 21
func.func @main(%a: tensor<1x21x8x8xf32>, %b: tensor<1x20x4x4xf32>, %c: tensor<1x21x2x2xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "top.YoloDetection"(%a, %b, %c) {anchors = [1.000000e+01, 1.300000e+01, 1.600000e+01, 3.000000e+01, 3.300000e+01, 2.300000e+01, 3.000000e+01, 6.100000e+01, 6.200000e+01, 4.500000e+01, 5.900000e+01, 1.190000e+02, 1.160000e+02, 9.000000e+01, 1.560000e+02, 1.980000e+02, 3.730000e+02, 3.260000e+02], class_num = 2 : i64, keep_topk = 10 : i64, net_input_h = 64 : i64, net_input_w = 64 : i64, nms_threshold = 5.000000e-01 : f64, obj_threshold = 5.000000e-01 : f64, version = "yolov5"} : (tensor<1x21x8x8xf32>, tensor<1x20x4x4xf32>, tensor<1x21x2x2xf32>) -> tensor<1x1x10x7xf32> loc("yolo_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

// -----
// CHECK: yolo_detection.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.YoloDetection' op "yolo_post" yolov8 takes one head, not 3
func.func @main(%a: tensor<1x21x8x8xf32>, %b: tensor<1x21x4x4xf32>, %c: tensor<1x21x2x2xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "top.YoloDetection"(%a, %b, %c) {anchors = [1.000000e+01, 1.300000e+01, 1.600000e+01, 3.000000e+01, 3.300000e+01, 2.300000e+01, 3.000000e+01, 6.100000e+01, 6.200000e+01, 4.500000e+01, 5.900000e+01, 1.190000e+02, 1.160000e+02, 9.000000e+01, 1.560000e+02, 1.980000e+02, 3.730000e+02, 3.260000e+02], class_num = 2 : i64, keep_topk = 10 : i64, net_input_h = 64 : i64, net_input_w = 64 : i64, nms_threshold = 5.000000e-01 : f64, obj_threshold = 5.000000e-01 : f64, version = "yolov8"} : (tensor<1x21x8x8xf32>, tensor<1x21x4x4xf32>, tensor<1x21x2x2xf32>) -> tensor<1x1x10x7xf32> loc("yolo_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

// -----
// CHECK: yolo_detection.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.YoloDetection' op "yolo_post" operand #0 has type tensor<1x21x8x8xf16>: only f32 is modelled
func.func @main(%a: tensor<1x21x8x8xf16>, %b: tensor<1x21x4x4xf32>, %c: tensor<1x21x2x2xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "top.YoloDetection"(%a, %b, %c) {anchors = [1.000000e+01, 1.300000e+01, 1.600000e+01, 3.000000e+01, 3.300000e+01, 2.300000e+01, 3.000000e+01, 6.100000e+01, 6.200000e+01, 4.500000e+01, 5.900000e+01, 1.190000e+02, 1.160000e+02, 9.000000e+01, 1.560000e+02, 1.980000e+02, 3.730000e+02, 3.260000e+02], class_num = 2 : i64, keep_topk = 10 : i64, net_input_h = 64 : i64, net_input_w = 64 : i64, nms_threshold = 5.000000e-01 : f64, obj_threshold = 5.000000e-01 : f64, version = "yolov5"} : (tensor<1x21x8x8xf16>, tensor<1x21x4x4xf32>, tensor<1x21x2x2xf32>) -> tensor<1x1x10x7xf32> loc("yolo_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

// -----
// CHECK: yolo_detection.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.YoloDetection' op "yolo_post" obj_threshold 1.0 is not in (0, 1): it is a probability
func.func @main(%a: tensor<1x21x8x8xf32>, %b: tensor<1x21x4x4xf32>, %c: tensor<1x21x2x2xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "top.YoloDetection"(%a, %b, %c) {anchors = [1.000000e+01, 1.300000e+01, 1.600000e+01, 3.000000e+01, 3.300000e+01, 2.300000e+01, 3.000000e+01, 6.100000e+01, 6.200000e+01, 4.500000e+01, 5.900000e+01, 1.190000e+02, 1.160000e+02, 9.000000e+01, 1.560000e+02, 1.980000e+02, 3.730000e+02, 3.260000e+02], class_num = 2 : i64, keep_topk = 10 : i64, net_input_h = 64 : i64, net_input_w = 64 : i64, nms_threshold = 5.000000e-01 : f64, obj_threshold = 1.000000e+00 : f64, version = "yolov5"} : (tensor<1x21x8x8xf32>, tensor<1x21x4x4xf32>, tensor<1x21x2x2xf32>) -> tensor<1x1x10x7xf32> loc("yolo_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

// -----
// CHECK: yolo_detection.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.YoloDetection' op "yolo_post" attribute 'version' = "yolov4" is not supported (supported: "yolov3", "yolov3_tiny", "yolov5", "yolov8")
func.func @main(%a: tensor<1x7x64xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "top.YoloDetection"(%a) {anchors = [0.000000e+00], class_num = 3 : i64, keep_topk = 10 : i64, net_input_h = 64 : i64, net_input_w = 64 : i64, nms_threshold = 5.000000e-01 : f64, obj_threshold = 5.000000e-01 : f64, version = "yolov4"} : (tensor<1x7x64xf32>) -> tensor<1x1x10x7xf32> loc("yolo_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

// -----
// CHECK: yolo_detection.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.YoloDetection' op "yolo_post" head #0 has 7 rows: 4 + 2 classes are 6
func.func @main(%a: tensor<1x7x64xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "top.YoloDetection"(%a) {anchors = [0.000000e+00], class_num = 2 : i64, keep_topk = 10 : i64, net_input_h = 64 : i64, net_input_w = 64 : i64, nms_threshold = 5.000000e-01 : f64, obj_threshold = 5.000000e-01 : f64, version = "yolov8"} : (tensor<1x7x64xf32>) -> tensor<1x1x10x7xf32> loc("yolo_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

// -----
// CHECK: yolo_detection.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.YoloDetection' op "yolo_post" head #0 is 1x7x8x8: a yolov8 head is N x (4 + classes) x boxes
func.func @main(%a: tensor<1x7x8x8xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "top.YoloDetection"(%a) {anchors = [0.000000e+00], class_num = 3 : i64, keep_topk = 10 : i64, net_input_h = 64 : i64, net_input_w = 64 : i64, nms_threshold = 5.000000e-01 : f64, obj_threshold = 5.000000e-01 : f64, version = "yolov8"} : (tensor<1x7x8x8xf32>) -> tensor<1x1x10x7xf32> loc("yolo_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

// -----
// CHECK: yolo_detection.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.YoloDetection' op "yolo_post" has anchors [10.0, 13.0]: yolov8 reads none (TPU-MLIR writes [0])
func.func @main(%a: tensor<1x7x64xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "top.YoloDetection"(%a) {anchors = [1.000000e+01, 1.300000e+01], class_num = 3 : i64, keep_topk = 10 : i64, net_input_h = 64 : i64, net_input_w = 64 : i64, nms_threshold = 5.000000e-01 : f64, obj_threshold = 5.000000e-01 : f64, version = "yolov8"} : (tensor<1x7x64xf32>) -> tensor<1x1x10x7xf32> loc("yolo_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

// -----
// nms_threshold is an IoU in [0, 1] (NaN would suppress no box, silently), as DetectionOutput's.
// CHECK: yolo_detection.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.YoloDetection' op "yolo_post" nms_threshold nan is not in [0, 1]: it is an IoU
func.func @main(%a: tensor<1x7x64xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "top.YoloDetection"(%a) {anchors = [0.000000e+00], class_num = 3 : i64, keep_topk = 10 : i64, net_input_h = 64 : i64, net_input_w = 64 : i64, nms_threshold = 0x7FF8000000000000 : f64, obj_threshold = 5.000000e-01 : f64, version = "yolov8"} : (tensor<1x7x64xf32>) -> tensor<1x1x10x7xf32> loc("yolo_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

// -----
// CHECK: yolo_detection.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'tpu.YoloDetection' op "yolo_post" nms_threshold 1.5 is not in [0, 1]: it is an IoU
func.func @main(%a: tensor<1x7x64xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "tpu.YoloDetection"(%a) {anchors = [0.000000e+00], class_num = 3 : i64, keep_topk = 10 : i64, net_input_h = 64 : i64, net_input_w = 64 : i64, nms_threshold = 1.500000e+00 : f64, obj_threshold = 5.000000e-01 : f64, version = "yolov8"} : (tensor<1x7x64xf32>) -> tensor<1x1x10x7xf32> loc("yolo_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

// --add-postprocess="type=yolov3|yolov5" on 1 or 2 heads: TPU-MLIR's anchors (AddPostprocess.cpp,
// getYoloOperandsAndAnchors). yolov3 "by scale": head i (widest first) of stride s takes
// YOLOV3_ANCHORS' triple s / 8 - 1 when 8 does not divide s, else triple i, and triple i when that
// index exceeds the head count. yolov5: its default triples in order, whatever the strides.
// Triples: 0 = 10,13 16,30 33,23; 1 = 30,61 62,45 59,119; 2 = 116,90 156,198 373,326.
// RUN: tpuc-opt %s --split-input-file --add-postprocess="type=yolov3" | filecheck %s
// RUN: tpuc-opt %s --split-input-file --add-postprocess="type=yolov5" | filecheck %s --check-prefix=V5

// One head of stride 20 (an 80 wide input, 4 wide head): 20 / 8 - 1 = triple 1 (yolov5: triple 0).
// CHECK-LABEL: func.func @main(%arg0: tensor<1x3x80x80xf32> {{.*}}, %arg1: tensor<1x21x4x4xf32> {{.*}}) -> tensor<1x1x200x7xf32>
// CHECK: "top.YoloDetection"(%{{[0-9]+}}) {agnostic_nms = false, anchors = [3.000000e+01, 6.100000e+01, 6.200000e+01, 4.500000e+01, 5.900000e+01, 1.190000e+02], class_num = 2 : i64, keep_topk = 200 : i64, net_input_h = 80 : i64, net_input_w = 80 : i64, nms_threshold = 5.000000e-01 : f64, obj_threshold = 5.000000e-01 : f64, version = "yolov3"} : (tensor<1x21x4x4xf32>) -> tensor<1x1x200x7xf32>
// V5-LABEL: func.func @main(%arg0: tensor<1x3x80x80xf32> {{.*}}, %arg1: tensor<1x21x4x4xf32>
// V5: anchors = [1.000000e+01, 1.300000e+01, 1.600000e+01, 3.000000e+01, 3.300000e+01, 2.300000e+01], class_num = 2 : i64, {{.*}} version = "yolov5"
func.func @main(%arg0: tensor<1x3x80x80xf32>, %a: tensor<1x21x4x4xf32>) -> tensor<1x21x4x4xf32> {
  %0 = "top.Input"(%a) : (tensor<1x21x4x4xf32>) -> tensor<1x21x4x4xf32> loc("p")
  return %0 : tensor<1x21x4x4xf32>
}

// -----
// One head of stride 28 (56 wide input, 2 wide head): 28 / 8 - 1 = 2 exceeds 1 head: triple 0.
// CHECK-LABEL: func.func @main(%arg0: tensor<1x3x56x56xf32> {{.*}}
// CHECK: anchors = [1.000000e+01, 1.300000e+01, 1.600000e+01, 3.000000e+01, 3.300000e+01, 2.300000e+01], class_num = 2 : i64
// V5-LABEL: func.func @main(%arg0: tensor<1x3x56x56xf32> {{.*}}
// V5: anchors = [1.000000e+01, 1.300000e+01, 1.600000e+01, 3.000000e+01, 3.300000e+01, 2.300000e+01], class_num = 2 : i64
func.func @main(%arg0: tensor<1x3x56x56xf32>, %a: tensor<1x21x2x2xf32>) -> tensor<1x21x2x2xf32> {
  %0 = "top.Input"(%a) : (tensor<1x21x2x2xf32>) -> tensor<1x21x2x2xf32> loc("p")
  return %0 : tensor<1x21x2x2xf32>
}

// -----
// Two heads of strides 40 and 20 (80 wide input), returned narrowest first: read widest first
// (stride 20: triple 1; stride 40, a multiple of 8, head 1: triple 1 again); yolov5 triples 0, 1.
// CHECK-LABEL: func.func @main(%arg0: tensor<1x3x80x80xf32> {{.*}}, %arg1: tensor<1x21x2x2xf32> {{.*}}, %arg2: tensor<1x21x4x4xf32>
// CHECK: %[[N:[0-9]+]] = "top.Input"(%arg1)
// CHECK: %[[W:[0-9]+]] = "top.Input"(%arg2)
// CHECK: "top.YoloDetection"(%[[W]], %[[N]]) {agnostic_nms = false, anchors = [3.000000e+01, 6.100000e+01, 6.200000e+01, 4.500000e+01, 5.900000e+01, 1.190000e+02, 3.000000e+01, 6.100000e+01, 6.200000e+01, 4.500000e+01, 5.900000e+01, 1.190000e+02], class_num = 2 : i64
// V5-LABEL: func.func @main(%arg0: tensor<1x3x80x80xf32> {{.*}}, %arg1: tensor<1x21x2x2xf32>
// V5: anchors = [1.000000e+01, 1.300000e+01, 1.600000e+01, 3.000000e+01, 3.300000e+01, 2.300000e+01, 3.000000e+01, 6.100000e+01, 6.200000e+01, 4.500000e+01, 5.900000e+01, 1.190000e+02], class_num = 2 : i64
func.func @main(%arg0: tensor<1x3x80x80xf32>, %a: tensor<1x21x2x2xf32>, %b: tensor<1x21x4x4xf32>) -> (tensor<1x21x2x2xf32>, tensor<1x21x4x4xf32>) {
  %0 = "top.Input"(%a) : (tensor<1x21x2x2xf32>) -> tensor<1x21x2x2xf32> loc("p5")
  %1 = "top.Input"(%b) : (tensor<1x21x4x4xf32>) -> tensor<1x21x4x4xf32> loc("p4")
  return %0, %1 : tensor<1x21x2x2xf32>, tensor<1x21x4x4xf32>
}

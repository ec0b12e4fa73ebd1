// RUN: tpuc-opt %s --add-postprocess="type=yolov8" --mlir-print-debuginfo | filecheck %s
// ultralytics' YOLOv11 exports YOLOv8's head: the same op, version "yolov8"; the module records the type.
// RUN: tpuc-opt %s --add-postprocess="type=yolov11" | filecheck %s --check-prefix=V11
// yolov5 on this decoded output is refused by name (add_postprocess_errors.mlir: yolov8 on what is not its head).
// RUN: not tpuc-opt %s --add-postprocess="type=yolov5" 2>&1 | filecheck %s --check-prefix=V5

// One decoded output [1, 4 + 3 classes, 64 boxes] of a 64x64 input: top.YoloDetection on it with
// TPU-MLIR's thresholds and keep_topk, anchors [0] (none read), class_num from its rows; the output
// keeps its name, the result is "yolo_post".
// CHECK:      module attributes {module.postprocess = "yolov8"}
// CHECK:      func.func @main(%arg0: tensor<1x3x64x64xf32> {{.*}}) -> tensor<1x1x200x7xf32>
// CHECK:      %[[H:.*]] = "top.Reshape"{{.*}} loc(#[[LH:loc[0-9]+]])
// CHECK-NEXT: %[[Y:.*]] = "top.YoloDetection"(%[[H]]) {agnostic_nms = false, anchors = [0.000000e+00], class_num = 3 : i64, keep_topk = 200 : i64, net_input_h = 64 : i64, net_input_w = 64 : i64, nms_threshold = 5.000000e-01 : f64, obj_threshold = 5.000000e-01 : f64, version = "yolov8"} : (tensor<1x7x64xf32>) -> tensor<1x1x200x7xf32> loc(#[[LY:loc[0-9]+]])
// CHECK-NEXT: return %[[Y]] : tensor<1x1x200x7xf32>
// CHECK-DAG:  #[[LH]] = loc("output0")
// CHECK-DAG:  #[[LY]] = loc("yolo_post")

// V11: module attributes {module.postprocess = "yolov11"}
// V11: "top.YoloDetection"{{.*}} version = "yolov8"

// V5: error: add-postprocess: the outputs do not look like YOLO heads: yolov5 takes 1 to 3 heads N x C x H x W, the outputs are 'output0' 1x7x64

func.func @main(%arg0: tensor<1x3x64x64xf32>) -> tensor<1x7x64xf32> {
  %0 = "top.Input"(%arg0) : (tensor<1x3x64x64xf32>) -> tensor<1x3x64x64xf32> loc("images")
  %w = "top.Weight"() : () -> tensor<7x3x8x8xf32> loc("w")
  %n = "top.None"() : () -> none loc("none")
  %1 = "top.Conv"(%0, %w, %n) {kernel_shape = [8, 8], strides = [8, 8]} : (tensor<1x3x64x64xf32>, tensor<7x3x8x8xf32>, none) -> tensor<1x7x8x8xf32> loc("conv")
  %2 = "top.Reshape"(%1) {shape = [1, 7, 64]} : (tensor<1x7x8x8xf32>) -> tensor<1x7x64xf32> loc("output0")
  return %2 : tensor<1x7x64xf32>
}

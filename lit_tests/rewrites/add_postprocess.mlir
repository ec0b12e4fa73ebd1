// RUN: tpuc-opt %s --add-postprocess="type=yolov5" --mlir-print-debuginfo | filecheck %s
// RUN: tpuc-opt %s --add-postprocess="type=yolov3" | filecheck %s --check-prefix=V3
// Three heads are not yolov3_tiny's (TPU-MLIR would give them yolov3's anchors: not modelled).
// RUN: not tpuc-opt %s --add-postprocess="type=yolov3_tiny" 2>&1 | filecheck %s --check-prefix=TINY
// An empty type (TPU-MLIR's default) adds nothing.
// RUN: tpuc-opt %s --add-postprocess | filecheck %s --check-prefix=NONE
// A second run refuses: the outputs are a detection result by then.
// RUN: tpuc-opt %s --add-postprocess="type=yolov5" > %t.once
// RUN: not tpuc-opt %t.once --add-postprocess="type=yolov5" 2>&1 | filecheck %s --check-prefix=TWICE

// Three yolov5 heads (3 boxes x (5 + 2 classes) channels) of a 64x64 input, returned narrowest first:
// the op reads them widest first, with TPU-MLIR's default anchors and thresholds; class_num is the
// heads' (TPU-MLIR leaves 80); the result is the one output, "yolo_post"; the heads keep their names.
// CHECK:      module attributes {module.postprocess = "yolov5"}
// CHECK:      func.func @main(%arg0: tensor<1x3x64x64xf32> {{.*}}) -> tensor<1x1x200x7xf32>
// CHECK:      %[[P5:.*]] = "top.Conv"{{.*}} loc(#[[L5:loc[0-9]+]])
// CHECK-NEXT: %[[P3:.*]] = "top.Conv"{{.*}} loc(#[[L3:loc[0-9]+]])
// CHECK-NEXT: %[[P4:.*]] = "top.Conv"{{.*}} loc(#[[L4:loc[0-9]+]])
// CHECK-NEXT: %[[Y:.*]] = "top.YoloDetection"(%[[P3]], %[[P4]], %[[P5]]) {agnostic_nms = false, anchors = [1.000000e+01, 1.300000e+01, 1.600000e+01, 3.000000e+01, 3.300000e+01, 2.300000e+01, 3.000000e+01, 6.100000e+01, 6.200000e+01, 4.500000e+01, 5.900000e+01, 1.190000e+02, 1.160000e+02, 9.000000e+01, 1.560000e+02, 1.980000e+02, 3.730000e+02, 3.260000e+02], class_num = 2 : i64, keep_topk = 200 : i64, net_input_h = 64 : i64, net_input_w = 64 : i64, nms_threshold = 5.000000e-01 : f64, obj_threshold = 5.000000e-01 : f64, version = "yolov5"} : (tensor<1x21x8x8xf32>, tensor<1x21x4x4xf32>, tensor<1x21x2x2xf32>) -> tensor<1x1x200x7xf32> loc(#[[LY:loc[0-9]+]])
// CHECK-NEXT: return %[[Y]] : tensor<1x1x200x7xf32>
// CHECK-DAG:  #[[L5]] = loc("p5")
// CHECK-DAG:  #[[L3]] = loc("p3")
// CHECK-DAG:  #[[L4]] = loc("p4")
// CHECK-DAG:  #[[LY]] = loc("yolo_post")

// NONE-NOT: module.postprocess
// NONE:     func.func @main(%arg0: tensor<1x3x64x64xf32>{{.*}}) -> (tensor<1x21x2x2xf32>, tensor<1x21x8x8xf32>, tensor<1x21x4x4xf32>)
// NONE-NOT: YoloDetection

// V3: module attributes {module.postprocess = "yolov3"}
// V3: "top.YoloDetection"{{.*}} version = "yolov3"

// TINY: error: add-postprocess: the outputs do not look like YOLO heads: yolov3_tiny takes 2 heads N x C x H x W, the outputs are 'p5' 1x21x2x2, 'p3' 1x21x8x8, 'p4' 1x21x4x4
// TINY-NOT: YoloDetection

// TWICE: error: add-postprocess: the module has post-processing already (module.postprocess = yolov5)
func.func @main(%arg0: tensor<1x3x64x64xf32>) -> (tensor<1x21x2x2xf32>, tensor<1x21x8x8xf32>, tensor<1x21x4x4xf32>) {
  %0 = "top.Input"(%arg0) : (tensor<1x3x64x64xf32>) -> tensor<1x3x64x64xf32> loc("images")
  %w5 = "top.Weight"() : () -> tensor<21x3x32x32xf32> loc("w5")
  %w3 = "top.Weight"() : () -> tensor<21x3x8x8xf32> loc("w3")
  %w4 = "top.Weight"() : () -> tensor<21x3x16x16xf32> loc("w4")
  %n = "top.None"() : () -> none loc("none")
  %5 = "top.Conv"(%0, %w5, %n) {kernel_shape = [32, 32], strides = [32, 32]} : (tensor<1x3x64x64xf32>, tensor<21x3x32x32xf32>, none) -> tensor<1x21x2x2xf32> loc("p5")
  %3 = "top.Conv"(%0, %w3, %n) {kernel_shape = [8, 8], strides = [8, 8]} : (tensor<1x3x64x64xf32>, tensor<21x3x8x8xf32>, none) -> tensor<1x21x8x8xf32> loc("p3")
  %4 = "top.Conv"(%0, %w4, %n) {kernel_shape = [16, 16], strides = [16, 16]} : (tensor<1x3x64x64xf32>, tensor<21x3x16x16xf32>, none) -> tensor<1x21x4x4xf32> loc("p4")
  return %5, %3, %4 : tensor<1x21x2x2xf32>, tensor<1x21x8x8xf32>, tensor<1x21x4x4xf32>
}

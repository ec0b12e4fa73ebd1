// --add-postprocess="type=yolov3_tiny": two heads, as TPU-MLIR's AddPostprocess takes them (its
// YOLOV3_TINY_ANCHORS for exactly 2 heads; 3 heads: add_postprocess.mlir's TINY).
// RUN: tpuc-opt %s --add-postprocess="type=yolov3_tiny" --mlir-print-debuginfo 2>&1 | filecheck %s
// Under yolov3 the same two heads take yolov3's triples by stride (strides 16 and 32 are multiples of
// 8: triples 0 and 1, TPU-MLIR's rule; add_postprocess_few_heads.mlir), not the tiny anchors:
// RUN: tpuc-opt %s --add-postprocess="type=yolov3" 2>&1 | filecheck %s --check-prefix=V3

// Two heads of a 64x64 input (3 boxes x (5 + 2 classes) channels), returned narrowest first: the op
// reads them widest first (stride 16, then 32), with the tiny anchors in that order; version
// yolov3_tiny (decoded as yolov3); the heads keep their names, the result is "yolo_post".
// CHECK:      module attributes {module.postprocess = "yolov3_tiny"}
// CHECK:      func.func @main(%arg0: tensor<1x3x64x64xf32> {{.*}}) -> tensor<1x1x200x7xf32>
// CHECK:      %[[P5:.*]] = "top.Conv"{{.*}} loc(#[[L5:loc[0-9]+]])
// CHECK-NEXT: %[[P4:.*]] = "top.Conv"{{.*}} loc(#[[L4:loc[0-9]+]])
// CHECK-NEXT: %[[Y:.*]] = "top.YoloDetection"(%[[P4]], %[[P5]]) {agnostic_nms = false, anchors = [1.000000e+01, 1.400000e+01, 2.300000e+01, 2.700000e+01, 3.700000e+01, 5.800000e+01, 8.100000e+01, 8.200000e+01, 1.350000e+02, 1.690000e+02, 3.440000e+02, 3.190000e+02], class_num = 2 : i64, keep_topk = 200 : i64, net_input_h = 64 : i64, net_input_w = 64 : i64, nms_threshold = 5.000000e-01 : f64, obj_threshold = 5.000000e-01 : f64, version = "yolov3_tiny"} : (tensor<1x21x4x4xf32>, tensor<1x21x2x2xf32>) -> tensor<1x1x200x7xf32> loc(#[[LY:loc[0-9]+]])
// CHECK-NEXT: return %[[Y]] : tensor<1x1x200x7xf32>
// CHECK-DAG:  #[[L5]] = loc("p5")
// CHECK-DAG:  #[[L4]] = loc("p4")
// CHECK-DAG:  #[[LY]] = loc("yolo_post")

// V3: "top.YoloDetection"({{.*}}) {agnostic_nms = false, anchors = [1.000000e+01, 1.300000e+01, 1.600000e+01, 3.000000e+01, 3.300000e+01, 2.300000e+01, 3.000000e+01, 6.100000e+01, 6.200000e+01, 4.500000e+01, 5.900000e+01, 1.190000e+02], {{.*}} version = "yolov3"}

func.func @main(%arg0: tensor<1x3x64x64xf32>) -> (tensor<1x21x2x2xf32>, tensor<1x21x4x4xf32>) {
  %0 = "top.Input"(%arg0) : (tensor<1x3x64x64xf32>) -> tensor<1x3x64x64xf32> loc("images")
  %w5 = "top.Weight"() : () -> tensor<21x3x32x32xf32> loc("w5")
  %w4 = "top.Weight"() : () -> tensor<21x3x16x16xf32> loc("w4")
  %n = "top.None"() : () -> none loc("none")
  %5 = "top.Conv"(%0, %w5, %n) {kernel_shape = [32, 32], strides = [32, 32]} : (tensor<1x3x64x64xf32>, tensor<21x3x32x32xf32>, none) -> tensor<1x21x2x2xf32> loc("p5")
  %4 = "top.Conv"(%0, %w4, %n) {kernel_shape = [16, 16], strides = [16, 16]} : (tensor<1x3x64x64xf32>, tensor<21x3x16x16xf32>, none) -> tensor<1x21x4x4xf32> loc("p4")
  return %5, %4 : tensor<1x21x2x2xf32>, tensor<1x21x4x4xf32>
}


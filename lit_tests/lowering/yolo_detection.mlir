// RUN: tpuc-opt %s --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu --mlir-print-debuginfo | filecheck %s
// YoloDetection lowers to tpu.YoloDetection in F32 whatever the mode (TPU-MLIR's lowering): the f16
// heads are cast to f32 (derived names), the result is f32 and keeps its name "yolo_post".

// CHECK:      %[[A:[0-9]+]] = "tpu.Relu"{{.*}} -> tensor<1x21x8x8xf16> loc(#[[LA:loc[0-9]+]])
// CHECK:      %[[A32:[0-9]+]] = "tpu.Cast"(%[[A]]) : (tensor<1x21x8x8xf16>) -> tensor<1x21x8x8xf32> loc(#[[LA32:loc[0-9]+]])
// CHECK:      %[[B32:[0-9]+]] = "tpu.Cast"({{.*}}) : (tensor<1x21x4x4xf16>) -> tensor<1x21x4x4xf32>
// CHECK:      %[[C32:[0-9]+]] = "tpu.Cast"({{.*}}) : (tensor<1x21x2x2xf16>) -> tensor<1x21x2x2xf32>
// CHECK:      %[[Y:[0-9]+]] = "tpu.YoloDetection"(%[[A32]], %[[B32]], %[[C32]]) {anchors = [1.000000e+01, 1.300000e+01, 1.600000e+01, 3.000000e+01, 3.300000e+01, 2.300000e+01, 3.000000e+01, 6.100000e+01, 6.200000e+01, 4.500000e+01, 5.900000e+01, 1.190000e+02, 1.160000e+02, 9.000000e+01, 1.560000e+02, 1.980000e+02, 3.730000e+02, 3.260000e+02], class_num = 2 : i64, keep_topk = 10 : i64, net_input_h = 64 : i64, net_input_w = 64 : i64, nms_threshold = 5.000000e-01 : f64, obj_threshold = 5.000000e-01 : f64, version = "yolov5"} : (tensor<1x21x8x8xf32>, tensor<1x21x4x4xf32>, tensor<1x21x2x2xf32>) -> tensor<1x1x10x7xf32> loc(#[[LY:loc[0-9]+]])
// CHECK-NEXT: return %[[Y]] : tensor<1x1x10x7xf32>
// CHECK-DAG:  #[[LA]] = loc("p3")
// CHECK-DAG:  #[[LA32]] = loc("p3_f32")
// CHECK-DAG:  #[[LY]] = loc("yolo_post")
module attributes {module.name = "m", module.state = "TOP_F32"} {
  func.func @main(%a: tensor<1x21x8x8xf32>, %b: tensor<1x21x4x4xf32>, %c: tensor<1x21x2x2xf32>) -> tensor<1x1x10x7xf32> {
    %0 = "top.Input"(%a) : (tensor<1x21x8x8xf32>) -> tensor<1x21x8x8xf32> loc("a")
    %1 = "top.Input"(%b) : (tensor<1x21x4x4xf32>) -> tensor<1x21x4x4xf32> loc("b")
    %2 = "top.Input"(%c) : (tensor<1x21x2x2xf32>) -> tensor<1x21x2x2xf32> loc("c")
    %3 = "top.Relu"(%0) : (tensor<1x21x8x8xf32>) -> tensor<1x21x8x8xf32> loc("p3")
    %4 = "top.Relu"(%1) : (tensor<1x21x4x4xf32>) -> tensor<1x21x4x4xf32> loc("p4")
    %5 = "top.Relu"(%2) : (tensor<1x21x2x2xf32>) -> tensor<1x21x2x2xf32> loc("p5")
    %6 = "top.YoloDetection"(%3, %4, %5) {anchors = [1.000000e+01, 1.300000e+01, 1.600000e+01, 3.000000e+01, 3.300000e+01, 2.300000e+01, 3.000000e+01, 6.100000e+01, 6.200000e+01, 4.500000e+01, 5.900000e+01, 1.190000e+02, 1.160000e+02, 9.000000e+01, 1.560000e+02, 1.980000e+02, 3.730000e+02, 3.260000e+02], class_num = 2 : i64, keep_topk = 10 : i64, net_input_h = 64 : i64, net_input_w = 64 : i64, nms_threshold = 5.000000e-01 : f64, obj_threshold = 5.000000e-01 : f64, version = "yolov5"} : (tensor<1x21x8x8xf32>, tensor<1x21x4x4xf32>, tensor<1x21x2x2xf32>) -> tensor<1x1x10x7xf32> loc("yolo_post")
    return %6 : tensor<1x1x10x7xf32>
  }
}

// RUN: tpuc-opt %s --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu --mlir-print-debuginfo | filecheck %s
// YoloDetection of version yolov8 lowers as the others: tpu.YoloDetection in F32 whatever the mode, its one
// f16 head cast to f32 (a derived name), the result f32 and named "yolo_post".

// CHECK:      %[[H:[0-9]+]] = "tpu.Relu"{{.*}} -> tensor<1x7x64xf16>
// CHECK:      %[[H32:[0-9]+]] = "tpu.Cast"(%[[H]]) : (tensor<1x7x64xf16>) -> tensor<1x7x64xf32> loc(#[[LH32:loc[0-9]+]])
// CHECK:      %[[Y:[0-9]+]] = "tpu.YoloDetection"(%[[H32]]) {anchors = [0.000000e+00], class_num = 3 : i64, {{.*}} version = "yolov8"} : (tensor<1x7x64xf32>) -> tensor<1x1x10x7xf32> loc(#[[LY:loc[0-9]+]])
// CHECK-NEXT: return %[[Y]] : tensor<1x1x10x7xf32>
// CHECK-DAG:  #[[LH32]] = loc("output0_f32")
// CHECK-DAG:  #[[LY]] = loc("yolo_post")
func.func @main(%arg0: tensor<1x7x64xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "top.Input"(%arg0) : (tensor<1x7x64xf32>) -> tensor<1x7x64xf32> loc("x")
  %1 = "top.Relu"(%0) : (tensor<1x7x64xf32>) -> tensor<1x7x64xf32> loc("output0")
  %2 = "top.YoloDetection"(%1) {anchors = [0.000000e+00], class_num = 3 : i64, keep_topk = 10 : i64, net_input_h = 64 : i64, net_input_w = 64 : i64, nms_threshold = 5.000000e-01 : f64, obj_threshold = 5.000000e-01 : f64, version = "yolov8"} : (tensor<1x7x64xf32>) -> tensor<1x1x10x7xf32> loc("yolo_post")
  return %2 : tensor<1x1x10x7xf32>
}

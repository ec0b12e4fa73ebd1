// RUN: tpuc-opt %s --shape-infer | filecheck %s
// YoloDetection of version yolov8: one decoded head of a batch of 2 gives 2 x keep_topk rows of 7.

// CHECK: "top.YoloDetection"{{.*}} -> tensor<1x1x20x7xf32>
func.func @main(%a: tensor<2x7x64xf32>) -> tensor<*xf32> {
  %0 = "top.YoloDetection"(%a) {anchors = [0.000000e+00], class_num = 3 : i64, keep_topk = 10 : i64, net_input_h = 64 : i64, net_input_w = 64 : i64, nms_threshold = 5.000000e-01 : f64, obj_threshold = 5.000000e-01 : f64, version = "yolov8"} : (tensor<2x7x64xf32>) -> tensor<*xf32> loc("yolo_post")
  func.return %0 : tensor<*xf32>
}

// RUN: tpuc-opt %s --shape-infer | filecheck %s
// YoloDetection: heads of a batch of 2 give 2 x keep_topk rows of 7 (image, class, score, x, y, w, h).

// CHECK: "top.YoloDetection"{{.*}} -> tensor<1x1x20x7xf32>
func.func @main(%a: tensor<2x21x8x8xf32>, %b: tensor<2x21x4x4xf32>, %c: tensor<2x21x2x2xf32>) -> tensor<*xf32> {
  %0 = "top.YoloDetection"(%a, %b, %c) {anchors = [1.000000e+01, 1.300000e+01, 1.600000e+01, 3.000000e+01, 3.300000e+01, 2.300000e+01, 3.000000e+01, 6.100000e+01, 6.200000e+01, 4.500000e+01, 5.900000e+01, 1.190000e+02, 1.160000e+02, 9.000000e+01, 1.560000e+02, 1.980000e+02, 3.730000e+02, 3.260000e+02], class_num = 2 : i64, keep_topk = 10 : i64, net_input_h = 64 : i64, net_input_w = 64 : i64, nms_threshold = 5.000000e-01 : f64, obj_threshold = 5.000000e-01 : f64, version = "yolov5"} : (tensor<2x21x8x8xf32>, tensor<2x21x4x4xf32>, tensor<2x21x2x2xf32>) -> tensor<*xf32> loc("yolo_post")
  func.return %0 : tensor<*xf32>
}

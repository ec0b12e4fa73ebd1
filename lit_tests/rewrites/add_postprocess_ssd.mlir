// RUN: tpuc-opt %s --add-postprocess="type=ssd" --mlir-print-debuginfo | filecheck %s
// Without a type the pass adds nothing: the three outputs stay.
// RUN: tpuc-opt %s --add-postprocess | filecheck %s --check-prefix=NONE
// yolov5 on SSD's outputs is refused by name.
// RUN: not tpuc-opt %s --add-postprocess="type=yolov5" 2>&1 | filecheck %s --check-prefix=V5
// ssd on what is not loc, conf and priorbox: add_postprocess_errors.mlir.

// loc [1, 8 priors x 4], conf [1, 8 priors x 3 classes] and priorbox [1, 2, 8 x 4] (a weight): one
// top.DetectionOutput on them, TPU-MLIR's insertSsdOp attributes, num_classes = 24 / 8 priors; the
// outputs keep their names, the result is "ssd_post" [1, 1, 200, 7].
// CHECK:      module attributes {module.postprocess = "ssd"}
// CHECK:      func.func @main(%arg0: tensor<1x3x8x8xf32> {{.*}}) -> tensor<1x1x200x7xf32>
// CHECK:      %[[P:.*]] = "top.Weight"() {{.*}} loc(#[[LP:loc[0-9]+]])
// CHECK:      %[[L:.*]] = "top.Reshape"{{.*}} loc(#[[LL:loc[0-9]+]])
// CHECK:      %[[C:.*]] = "top.Reshape"{{.*}} loc(#[[LC:loc[0-9]+]])
// CHECK-NEXT: %[[Y:.*]] = "top.DetectionOutput"(%[[L]], %[[C]], %[[P]]) {background_label_id = 0 : i64, code_type = "CENTER_SIZE", confidence_threshold = 5.000000e-02 : f64, eta = 1.000000e+00 : f64, keep_top_k = 200 : i64, nms_threshold = 5.000000e-01 : f64, num_classes = 3 : i64, share_location = true, top_k = 200 : i64, variance_encoded_in_target = 0.000000e+00 : f64} : (tensor<1x32xf32>, tensor<1x24xf32>, tensor<1x2x32xf32>) -> tensor<1x1x200x7xf32> loc(#[[LY:loc[0-9]+]])
// CHECK-NEXT: return %[[Y]] : tensor<1x1x200x7xf32>
// CHECK-DAG:  #[[LP]] = loc("mbox_priorbox")
// CHECK-DAG:  #[[LL]] = loc("mbox_loc")
// CHECK-DAG:  #[[LC]] = loc("mbox_conf_flatten")
// CHECK-DAG:  #[[LY]] = loc("ssd_post")

// NONE-NOT: top.DetectionOutput
// NONE:     return %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x32xf32>, tensor<1x24xf32>, tensor<1x2x32xf32>

// V5: error: add-postprocess: the outputs do not look like YOLO heads: yolov5 takes 1 to 3 heads N x C x H x W, the outputs are 'mbox_loc' 1x32, 'mbox_conf_flatten' 1x24, 'mbox_priorbox' 1x2x32

func.func @main(%arg0: tensor<1x3x8x8xf32>) -> (tensor<1x32xf32>, tensor<1x24xf32>, tensor<1x2x32xf32>) {
  %0 = "top.Input"(%arg0) : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> loc("images")
  %p = "top.Weight"() : () -> tensor<1x2x32xf32> loc("mbox_priorbox")
  %wl = "top.Weight"() : () -> tensor<8x3x4x4xf32> loc("wl")
  %wc = "top.Weight"() : () -> tensor<6x3x4x4xf32> loc("wc")
  %n = "top.None"() : () -> none loc("none")
  %1 = "top.Conv"(%0, %wl, %n) {kernel_shape = [4, 4], strides = [4, 4]} : (tensor<1x3x8x8xf32>, tensor<8x3x4x4xf32>, none) -> tensor<1x8x2x2xf32> loc("loc_conv")
  %2 = "top.Reshape"(%1) {shape = [1, 32]} : (tensor<1x8x2x2xf32>) -> tensor<1x32xf32> loc("mbox_loc")
  %3 = "top.Conv"(%0, %wc, %n) {kernel_shape = [4, 4], strides = [4, 4]} : (tensor<1x3x8x8xf32>, tensor<6x3x4x4xf32>, none) -> tensor<1x6x2x2xf32> loc("conf_conv")
  %4 = "top.Reshape"(%3) {shape = [1, 24]} : (tensor<1x6x2x2xf32>) -> tensor<1x24xf32> loc("mbox_conf_flatten")
  return %2, %4, %p : tensor<1x32xf32>, tensor<1x24xf32>, tensor<1x2x32xf32>
}


// RUN: tpuc-opt %s --shape-infer | filecheck %s
// DetectionOutput: loc, conf and priorbox of a batch of 2 (8 priors, 3 classes) give 2 x keep_top_k rows of 7,
// whatever shapes hold loc's and conf's values (here conf [2, 8, 3]).

// CHECK: "top.DetectionOutput"{{.*}} -> tensor<1x1x20x7xf32>
func.func @main(%l: tensor<2x32xf32>, %c: tensor<2x8x3xf32>, %p: tensor<1x2x32xf32>) -> tensor<*xf32> {
  %0 = "top.DetectionOutput"(%l, %c, %p) {background_label_id = 0 : i64, code_type = "CENTER_SIZE", confidence_threshold = 5.000000e-02 : f64, eta = 1.000000e+00 : f64, keep_top_k = 10 : i64, nms_threshold = 5.000000e-01 : f64, num_classes = 3 : i64, share_location = true, top_k = 20 : i64, variance_encoded_in_target = 0.000000e+00 : f64} : (tensor<2x32xf32>, tensor<2x8x3xf32>, tensor<1x2x32xf32>) -> tensor<*xf32> loc("ssd_post")
  func.return %0 : tensor<*xf32>
}

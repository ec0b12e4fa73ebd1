// RUN: not tpuc-opt %s --split-input-file 2>&1 | filecheck %s
// DetectionOutput's loc, conf and priorbox must fit num_classes and each other; the attribute values TPU-MLIR's
// interpreter does not read (it decodes CENTER_SIZE boxes with shared locations, eta 1, the variances of
// priorbox) are refused by name, as is an attribute TopOps.td does not declare.
// CHECK: detection_output.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.DetectionOutput' op "ssd_post" conf has shape [1, 24]: not 8 priors x 4 scores an image
func.func @main(%l: tensor<1x32xf32>, %c: tensor<1x24xf32>, %p: tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "top.DetectionOutput"(%l, %c, %p) {background_label_id = 0 : i64, code_type = "CENTER_SIZE", confidence_threshold = 5.000000e-02 : f64, eta = 1.000000e+00 : f64, keep_top_k = 10 : i64, nms_threshold = 5.000000e-01 : f64, num_classes = 4 : i64, share_location = true, top_k = 20 : i64, variance_encoded_in_target = 0.000000e+00 : f64} : (tensor<1x32xf32>, tensor<1x24xf32>, tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> loc("ssd_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

// -----
// CHECK: detection_output.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.DetectionOutput' op "ssd_post" loc has shape [1, 30]: not 8 priors x 4 offsets an image (share_location: one box for every class)
func.func @main(%l: tensor<1x30xf32>, %c: tensor<1x24xf32>, %p: tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "top.DetectionOutput"(%l, %c, %p) {background_label_id = 0 : i64, code_type = "CENTER_SIZE", confidence_threshold = 5.000000e-02 : f64, eta = 1.000000e+00 : f64, keep_top_k = 10 : i64, nms_threshold = 5.000000e-01 : f64, num_classes = 3 : i64, share_location = true, top_k = 20 : i64, variance_encoded_in_target = 0.000000e+00 : f64} : (tensor<1x30xf32>, tensor<1x24xf32>, tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> loc("ssd_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

// -----
// CHECK: detection_output.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.DetectionOutput' op "ssd_post" priorbox has shape [1, 32], not [1, 2, priors * 4] (corners, then variances)
func.func @main(%l: tensor<1x32xf32>, %c: tensor<1x24xf32>, %p: tensor<1x32xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "top.DetectionOutput"(%l, %c, %p) {background_label_id = 0 : i64, code_type = "CENTER_SIZE", confidence_threshold = 5.000000e-02 : f64, eta = 1.000000e+00 : f64, keep_top_k = 10 : i64, nms_threshold = 5.000000e-01 : f64, num_classes = 3 : i64, share_location = true, top_k = 20 : i64, variance_encoded_in_target = 0.000000e+00 : f64} : (tensor<1x32xf32>, tensor<1x24xf32>, tensor<1x32xf32>) -> tensor<1x1x10x7xf32> loc("ssd_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

// -----
// CHECK: detection_output.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.DetectionOutput' op "ssd_post" attribute 'code_type' = "CORNER" is not supported (supported: "CENTER_SIZE")
func.func @main(%l: tensor<1x32xf32>, %c: tensor<1x24xf32>, %p: tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "top.DetectionOutput"(%l, %c, %p) {background_label_id = 0 : i64, code_type = "CORNER", confidence_threshold = 5.000000e-02 : f64, eta = 1.000000e+00 : f64, keep_top_k = 10 : i64, nms_threshold = 5.000000e-01 : f64, num_classes = 3 : i64, share_location = true, top_k = 20 : i64, variance_encoded_in_target = 0.000000e+00 : f64} : (tensor<1x32xf32>, tensor<1x24xf32>, tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> loc("ssd_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

// -----
// CHECK: detection_output.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.DetectionOutput' op "ssd_post" attribute 'share_location' = false is not supported (supported: true)
func.func @main(%l: tensor<1x32xf32>, %c: tensor<1x24xf32>, %p: tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "top.DetectionOutput"(%l, %c, %p) {background_label_id = 0 : i64, code_type = "CENTER_SIZE", confidence_threshold = 5.000000e-02 : f64, eta = 1.000000e+00 : f64, keep_top_k = 10 : i64, nms_threshold = 5.000000e-01 : f64, num_classes = 3 : i64, share_location = false, top_k = 20 : i64, variance_encoded_in_target = 0.000000e+00 : f64} : (tensor<1x32xf32>, tensor<1x24xf32>, tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> loc("ssd_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

// -----
// CHECK: detection_output.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.DetectionOutput' op "ssd_post" attribute 'variance_encoded_in_target' = 1.0 is not supported
func.func @main(%l: tensor<1x32xf32>, %c: tensor<1x24xf32>, %p: tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "top.DetectionOutput"(%l, %c, %p) {background_label_id = 0 : i64, code_type = "CENTER_SIZE", confidence_threshold = 5.000000e-02 : f64, eta = 1.000000e+00 : f64, keep_top_k = 10 : i64, nms_threshold = 5.000000e-01 : f64, num_classes = 3 : i64, share_location = true, top_k = 20 : i64, variance_encoded_in_target = 1.000000e+00 : f64} : (tensor<1x32xf32>, tensor<1x24xf32>, tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> loc("ssd_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

// -----
// CHECK: detection_output.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.DetectionOutput' op "ssd_post" attribute 'eta' = 0.9 is not supported
func.func @main(%l: tensor<1x32xf32>, %c: tensor<1x24xf32>, %p: tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "top.DetectionOutput"(%l, %c, %p) {background_label_id = 0 : i64, code_type = "CENTER_SIZE", confidence_threshold = 5.000000e-02 : f64, eta = 9.000000e-01 : f64, keep_top_k = 10 : i64, nms_threshold = 5.000000e-01 : f64, num_classes = 3 : i64, share_location = true, top_k = 20 : i64, variance_encoded_in_target = 0.000000e+00 : f64} : (tensor<1x32xf32>, tensor<1x24xf32>, tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> loc("ssd_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

// -----
// CHECK: detection_output.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.DetectionOutput' op "ssd_post" background_label_id 3 is not a class of 0..2
func.func @main(%l: tensor<1x32xf32>, %c: tensor<1x24xf32>, %p: tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "top.DetectionOutput"(%l, %c, %p) {background_label_id = 3 : i64, code_type = "CENTER_SIZE", confidence_threshold = 5.000000e-02 : f64, eta = 1.000000e+00 : f64, keep_top_k = 10 : i64, nms_threshold = 5.000000e-01 : f64, num_classes = 3 : i64, share_location = true, top_k = 20 : i64, variance_encoded_in_target = 0.000000e+00 : f64} : (tensor<1x32xf32>, tensor<1x24xf32>, tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> loc("ssd_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

// -----
// CHECK: detection_output.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.DetectionOutput' op "ssd_post" keep_top_k 0 must be positive
func.func @main(%l: tensor<1x32xf32>, %c: tensor<1x24xf32>, %p: tensor<1x2x32xf32>) -> tensor<1x1x0x7xf32> {
  %0 = "top.DetectionOutput"(%l, %c, %p) {background_label_id = 0 : i64, code_type = "CENTER_SIZE", confidence_threshold = 5.000000e-02 : f64, eta = 1.000000e+00 : f64, keep_top_k = 0 : i64, nms_threshold = 5.000000e-01 : f64, num_classes = 3 : i64, share_location = true, top_k = 20 : i64, variance_encoded_in_target = 0.000000e+00 : f64} : (tensor<1x32xf32>, tensor<1x24xf32>, tensor<1x2x32xf32>) -> tensor<1x1x0x7xf32> loc("ssd_post")
  func.return %0 : tensor<1x1x0x7xf32>
}

// -----
// CHECK: detection_output.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.DetectionOutput' op "ssd_post" operand #0 has type tensor<1x32xf16>: only f32 is modelled
func.func @main(%l: tensor<1x32xf16>, %c: tensor<1x24xf32>, %p: tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "top.DetectionOutput"(%l, %c, %p) {background_label_id = 0 : i64, code_type = "CENTER_SIZE", confidence_threshold = 5.000000e-02 : f64, eta = 1.000000e+00 : f64, keep_top_k = 10 : i64, nms_threshold = 5.000000e-01 : f64, num_classes = 3 : i64, share_location = true, top_k = 20 : i64, variance_encoded_in_target = 0.000000e+00 : f64} : (tensor<1x32xf16>, tensor<1x24xf32>, tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> loc("ssd_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

// -----
// CHECK: detection_output.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.DetectionOutput' op "ssd_post" has attribute 'onnx_nms', which top.DetectionOutput does not define
func.func @main(%l: tensor<1x32xf32>, %c: tensor<1x24xf32>, %p: tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "top.DetectionOutput"(%l, %c, %p) {background_label_id = 0 : i64, code_type = "CENTER_SIZE", confidence_threshold = 5.000000e-02 : f64, eta = 1.000000e+00 : f64, keep_top_k = 10 : i64, nms_threshold = 5.000000e-01 : f64, num_classes = 3 : i64, onnx_nms = 1 : i64, share_location = true, top_k = 20 : i64, variance_encoded_in_target = 0.000000e+00 : f64} : (tensor<1x32xf32>, tensor<1x24xf32>, tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> loc("ssd_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

// -----
// Two inputs is newer TPU-MLIR's onnx_nms form (boxes decoded already, conf class-major): refused by name.
// CHECK: detection_output.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.DetectionOutput' op "ssd_post" takes 3 inputs (loc, conf, priorbox), got 2: TPU-MLIR's onnx_nms form (2 inputs, decoded boxes) is not modelled
func.func @main(%l: tensor<1x8x4xf32>, %c: tensor<1x3x8xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "top.DetectionOutput"(%l, %c) {background_label_id = 0 : i64, code_type = "CENTER_SIZE", confidence_threshold = 5.000000e-02 : f64, eta = 1.000000e+00 : f64, keep_top_k = 10 : i64, nms_threshold = 5.000000e-01 : f64, num_classes = 3 : i64, share_location = true, top_k = 20 : i64, variance_encoded_in_target = 0.000000e+00 : f64} : (tensor<1x8x4xf32>, tensor<1x3x8xf32>) -> tensor<1x1x10x7xf32> loc("ssd_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

// -----
// A NaN confidence threshold would pass no score (every comparison false): refused, not an empty result.
// CHECK: detection_output.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'top.DetectionOutput' op "ssd_post" confidence_threshold is nan: a score threshold must be a number
func.func @main(%l: tensor<1x32xf32>, %c: tensor<1x24xf32>, %p: tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "top.DetectionOutput"(%l, %c, %p) {background_label_id = 0 : i64, code_type = "CENTER_SIZE", confidence_threshold = 0x7FF8000000000000 : f64, eta = 1.000000e+00 : f64, keep_top_k = 10 : i64, nms_threshold = 5.000000e-01 : f64, num_classes = 3 : i64, share_location = true, top_k = 20 : i64, variance_encoded_in_target = 0.000000e+00 : f64} : (tensor<1x32xf32>, tensor<1x24xf32>, tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> loc("ssd_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

// -----
// tpu.DetectionOutput shares the rule.
// CHECK: detection_output.mlir:[[# @LINE + 2]]:{{[0-9]+}}: error: 'tpu.DetectionOutput' op "ssd_post" confidence_threshold is nan: a score threshold must be a number
func.func @main(%l: tensor<1x32xf32>, %c: tensor<1x24xf32>, %p: tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> {
  %0 = "tpu.DetectionOutput"(%l, %c, %p) {background_label_id = 0 : i64, code_type = "CENTER_SIZE", confidence_threshold = 0x7FF8000000000000 : f64, eta = 1.000000e+00 : f64, keep_top_k = 10 : i64, nms_threshold = 5.000000e-01 : f64, num_classes = 3 : i64, share_location = true, top_k = 20 : i64, variance_encoded_in_target = 0.000000e+00 : f64} : (tensor<1x32xf32>, tensor<1x24xf32>, tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> loc("ssd_post")
  func.return %0 : tensor<1x1x10x7xf32>
}

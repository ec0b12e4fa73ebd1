// RUN: rm -rf %t && mkdir -p %t/ok %t/flat && cp %s %t/ok/m.mlir && cp %s %t/flat/m.mlir
// RUN: python -c "import numpy as np; c = np.tile(np.float32([0.1, 0.2, 0.3, 0.5]), (8, 1)); v = np.tile(np.float32([0.1, 0.1, 0.2, 0.2]), (8, 1)); np.savez('%t/ok/m_weight.npz', mbox_priorbox=np.stack([c.ravel(), v.ravel()])[None]); c[3, 3] = c[3, 1]; np.savez('%t/flat/m_weight.npz', mbox_priorbox=np.stack([c.ravel(), v.ravel()])[None])"
// RUN: tpuc-opt %t/ok/m.mlir --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu --mlir-print-debuginfo | filecheck %s
// RUN: tpuc-opt %t/ok/m.mlir --processor-assign="chip=bm1684x mode=F32" --convert-top-to-tpu | filecheck %s --check-prefix=F32
// RUN: not tpuc-opt %t/flat/m.mlir --processor-assign="chip=bm1684x mode=F32" --convert-top-to-tpu 2>&1 | filecheck %s --check-prefix=FLAT
// DetectionOutput lowers to tpu.DetectionOutput in F32 whatever the mode, as TPU-MLIR lowers it: an f16
// loc or conf is cast to f32 (a derived name), the priorbox weight stays f32, the result is f32 and named "ssd_post".
// Constant priors are checked: TPU-MLIR's decode asserts each prior's width and height are positive, so a
// priorbox weight whose prior 3 has height 0 (ymax = ymin) is refused, naming the op and the prior.
// FLAT-NOT: Traceback
// FLAT: error: convert-top-to-tpu: 'top.DetectionOutput' op "ssd_post": prior 3 of 'mbox_priorbox' has width 0.2 and height 0: TPU-MLIR's decode asserts both are positive

// CHECK:      %[[L:[0-9]+]] = "tpu.Relu"{{.*}} -> tensor<1x32xf16>
// CHECK-NEXT: %[[L32:[0-9]+]] = "tpu.Cast"(%[[L]]) : (tensor<1x32xf16>) -> tensor<1x32xf32> loc(#[[LL32:loc[0-9]+]])
// CHECK-NEXT: %[[C:[0-9]+]] = "tpu.Active"{{.*}} -> tensor<1x24xf16>
// CHECK-NEXT: %[[C32:[0-9]+]] = "tpu.Cast"(%[[C]]) : (tensor<1x24xf16>) -> tensor<1x24xf32> loc(#[[LC32:loc[0-9]+]])
// CHECK:      %[[Y:[0-9]+]] = "tpu.DetectionOutput"(%[[L32]], %[[C32]], %{{[0-9]+}}) {background_label_id = 0 : i64, code_type = "CENTER_SIZE", {{.*}}num_classes = 3 : i64{{.*}}} : (tensor<1x32xf32>, tensor<1x24xf32>, tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> loc(#[[LY:loc[0-9]+]])
// CHECK-NEXT: return %[[Y]] : tensor<1x1x10x7xf32>
// CHECK-DAG:  #[[LL32]] = loc("mbox_loc_f32")
// CHECK-DAG:  #[[LC32]] = loc("mbox_conf_f32")
// CHECK-DAG:  #[[LY]] = loc("ssd_post")

// F32-NOT: tpu.Cast
// F32:     "tpu.DetectionOutput"{{.*}} : (tensor<1x32xf32>, tensor<1x24xf32>, tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32>
module attributes {module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x32xf32>, %arg1: tensor<1x24xf32>) -> tensor<1x1x10x7xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x32xf32>) -> tensor<1x32xf32> loc("loc_in")
    %1 = "top.Input"(%arg1) : (tensor<1x24xf32>) -> tensor<1x24xf32> loc("conf_in")
    %p = "top.Weight"() : () -> tensor<1x2x32xf32> loc("mbox_priorbox")
    %2 = "top.Relu"(%0) : (tensor<1x32xf32>) -> tensor<1x32xf32> loc("mbox_loc")
    %3 = "top.Sigmoid"(%1) : (tensor<1x24xf32>) -> tensor<1x24xf32> loc("mbox_conf")
    %4 = "top.DetectionOutput"(%2, %3, %p) {background_label_id = 0 : i64, code_type = "CENTER_SIZE", confidence_threshold = 5.000000e-02 : f64, eta = 1.000000e+00 : f64, keep_top_k = 10 : i64, nms_threshold = 5.000000e-01 : f64, num_classes = 3 : i64, share_location = true, top_k = 20 : i64, variance_encoded_in_target = 0.000000e+00 : f64} : (tensor<1x32xf32>, tensor<1x24xf32>, tensor<1x2x32xf32>) -> tensor<1x1x10x7xf32> loc("ssd_post")
    return %4 : tensor<1x1x10x7xf32>
  }
}

// Asymmetric INT8 must not fuse a relu where 0.0 is not stored as 0: a fused do_relu clamps
// stored values at 0, so a result range below 0 (written here by hand: the import gives relu
// outputs lo = 0) keeps the op in F32; with lo = 0 (uint8, zero point 0) it is INT8.
// RUN: tpuc-opt %s --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu="asymmetric=true" --mlir-print-debuginfo | filecheck %s
// CHECK: "tpu.Add"({{.*}}do_relu = true{{.*}} -> tensor<1x1x2x2xf32> loc(#[[NEG:loc[0-9]+]])
// CHECK: "tpu.Add"({{.*}}do_relu = true{{.*}} -> tensor<1x1x2x2x!quant.uniform<u8:f32, 0.0078431372549019607>> loc(#[[POS:loc[0-9]+]])
// CHECK-DAG: #[[NEG]] = loc("neg")
// CHECK-DAG: #[[POS]] = loc("pos_int8")
module attributes {module.name = "m", module.state = "TOP_CALIBRATED"} {
  func.func @main(%arg0: tensor<1x1x2x2xf32>) -> (tensor<1x1x2x2x!quant.calibrated<f32<-5.000000e-01:2.000000e+00>>>, tensor<1x1x2x2x!quant.calibrated<f32<0.000000e+00:2.000000e+00>>>) {
    %0 = "top.Input"(%arg0) : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2x!quant.calibrated<f32<-1.000000e+00:1.000000e+00>>> loc("x")
    %1 = "top.Add"(%0, %0) {do_relu = true} : (tensor<1x1x2x2x!quant.calibrated<f32<-1.000000e+00:1.000000e+00>>>, tensor<1x1x2x2x!quant.calibrated<f32<-1.000000e+00:1.000000e+00>>>) -> tensor<1x1x2x2x!quant.calibrated<f32<-5.000000e-01:2.000000e+00>>> loc("neg")
    %2 = "top.Add"(%0, %0) {do_relu = true} : (tensor<1x1x2x2x!quant.calibrated<f32<-1.000000e+00:1.000000e+00>>>, tensor<1x1x2x2x!quant.calibrated<f32<-1.000000e+00:1.000000e+00>>>) -> tensor<1x1x2x2x!quant.calibrated<f32<0.000000e+00:2.000000e+00>>> loc("pos")
    return %1, %2 : tensor<1x1x2x2x!quant.calibrated<f32<-5.000000e-01:2.000000e+00>>>, tensor<1x1x2x2x!quant.calibrated<f32<0.000000e+00:2.000000e+00>>>
  }
}

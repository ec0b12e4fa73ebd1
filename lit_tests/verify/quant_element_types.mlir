// TPU-MLIR registers MLIR's quant dialect: a calibrated Top graph (`!quant.calibrated`) and an
// int8 one (`!quant.uniform`, per-tensor and per-axis) parse and verify without
// --allow-unregistered-dialect, and shape inference keeps their element types (float parameters
// printed as the quant dialect prints them).
// RUN: tpuc-opt %s --shape-infer | filecheck %s

// CHECK-LABEL: func.func @main(%arg0: tensor<1x3x8x8xf32>{{.*}}) -> tensor<4x!quant.uniform<i8:f32, 5.000000e-02:-3>>
// CHECK:       "top.Conv"(%0, %1, %2) {{.*}} -> tensor<1x4x8x8x!quant.calibrated<f32<-3.500000e+00:3.500000e+00>>>
// CHECK:       "top.MaxPool"(%3) {{.*}} -> tensor<1x4x4x4x!quant.calibrated<f32<-3.500000e+00:3.500000e+00>>>
// CHECK:       "top.Add"(%6, %6) : ({{.*}}) -> tensor<1x4x!quant.uniform<i8:f32, 5.000000e-02:-3>>
// CHECK:       "top.Reshape"(%7) {{.*}} -> tensor<4x!quant.uniform<i8:f32, 5.000000e-02:-3>>

module attributes {module.chip = "ALL", module.name = "q", module.state = "TOP_CALIBRATED", module.weight_file = "q_weight.npz"} {
  func.func @main(%arg0: tensor<1x3x8x8xf32>) -> tensor<*x!quant.uniform<i8:f32, 5.000000e-02:-3>> {
    %0 = "top.Input"(%arg0) {name = "in"} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8x!quant.calibrated<f32<-1.25:1.25>>>
    %1 = "top.Weight"() {name = "w"} : () -> tensor<4x3x3x3x!quant.uniform<i8<-127:127>:f32:0, {1.000000e-02,2.000000e-02,3.000000e-02,4.000000e-02}>>
    %2 = "top.Weight"() {name = "b"} : () -> tensor<4xf32>
    %3 = "top.Conv"(%0, %1, %2) {dilations = [1, 1], do_relu = true, group = 1 : i64, kernel_shape = [3, 3], name = "conv", pads = [1, 1, 1, 1], strides = [1, 1]} : (tensor<1x3x8x8x!quant.calibrated<f32<-1.25:1.25>>>, tensor<4x3x3x3x!quant.uniform<i8<-127:127>:f32:0, {1.000000e-02,2.000000e-02,3.000000e-02,4.000000e-02}>>, tensor<4xf32>) -> tensor<*x!quant.calibrated<f32<-3.5:3.5>>>
    %4 = "top.MaxPool"(%3) {kernel_shape = [2, 2], name = "pool", pads = [0, 0, 0, 0], strides = [2, 2]} : (tensor<*x!quant.calibrated<f32<-3.5:3.5>>>) -> tensor<*x!quant.calibrated<f32<-3.5:3.5>>>
    %5 = "top.Reshape"(%4) {shape = [1, 4, 16]} : (tensor<*x!quant.calibrated<f32<-3.5:3.5>>>) -> tensor<1x4x16x!quant.calibrated<f32<-3.5:3.5>>>
    %6 = "top.Reduce"(%5) {axes = [2], keepdims = false, mode = "ReduceMean"} : (tensor<1x4x16x!quant.calibrated<f32<-3.5:3.5>>>) -> tensor<1x4x!quant.uniform<i8:f32, 5.000000e-02:-3>>
    %7 = "top.Add"(%6, %6) : (tensor<1x4x!quant.uniform<i8:f32, 5.000000e-02:-3>>, tensor<1x4x!quant.uniform<i8:f32, 5.000000e-02:-3>>) -> tensor<*x!quant.uniform<i8:f32, 5.000000e-02:-3>>
    %8 = "top.Reshape"(%7) {shape = [4]} : (tensor<*x!quant.uniform<i8:f32, 5.000000e-02:-3>>) -> tensor<*x!quant.uniform<i8:f32, 5.000000e-02:-3>>
    return %8 : tensor<*x!quant.uniform<i8:f32, 5.000000e-02:-3>>
  }
}

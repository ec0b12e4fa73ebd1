// --import-calibration-table: float results of Top ops take !quant.calibrated<f32<min:max>> with
// TPU-MLIR's rules (symmetric: [-th, th], [0, th] when min >= 0; asymmetric: the table's min/max;
// do_relu, Sigmoid, Abs, Mul, Sub have their own); weights, `none` and integer tensors stay.
// RUN: tpuc-opt %s --import-calibration-table="file=%S/Inputs/small_cali_table asymmetric=false" | filecheck %s --check-prefixes=CHECK,SYM
// RUN: tpuc-opt %s --import-calibration-table="file=%S/Inputs/small_cali_table asymmetric=true" | filecheck %s --check-prefixes=CHECK,ASYM

// CHECK:      module attributes {module.state = "TOP_CALIBRATED"}
// SYM:        func.func @main(%arg0: tensor<1x2x4x4xf32>{{.*}}) -> (tensor<1x2x4x4x!quant.calibrated<f32<-3.000000e+00:3.000000e+00>>>, tensor<1x1x4x4xi64>
// CHECK:      "top.None"() : () -> none
// SYM:        "top.Input"(%arg0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4x!quant.calibrated<f32<-2.500000e+00:2.500000e+00>>>
// ASYM:       "top.Input"(%arg0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4x!quant.calibrated<f32<-2.000000e+00:2.250000e+00>>>
// CHECK:      "top.Weight"() : () -> tensor<2x2x1x1xf32>
// SYM:        "top.Conv"{{.*}} -> tensor<1x2x4x4x!quant.calibrated<f32<-3.000000e+00:3.000000e+00>>>
// ASYM:       "top.Conv"{{.*}} -> tensor<1x2x4x4x!quant.calibrated<f32<-1.500000e+00:2.750000e+00>>>
// SYM:        "top.Conv"{{.*}}do_relu = true{{.*}} -> tensor<1x2x4x4x!quant.calibrated<f32<0.000000e+00:3.000000e+00>>>
// ASYM:       "top.Conv"{{.*}}do_relu = true{{.*}} -> tensor<1x2x4x4x!quant.calibrated<f32<0.000000e+00:2.750000e+00>>>
// CHECK:      "top.Sigmoid"{{.*}} -> tensor<1x2x4x4x!quant.calibrated<f32<0.000000e+00:1.000000e+00>>>
// CHECK:      "top.Sub"{{.*}} -> tensor<1x2x4x4x!quant.calibrated<f32<-1.000000e-05:1.500000e+00>>>
// CHECK:      "top.Mul"(%{{.*}}, %{{.*}}) : {{.*}} -> tensor<1x2x4x4x!quant.calibrated<f32<0.000000e+00:4.000000e+00>>>
// SYM:        "top.Mul"{{.*}} -> tensor<1x2x4x4x!quant.calibrated<f32<-2.000000e+00:2.000000e+00>>>
// ASYM:       "top.Mul"{{.*}} -> tensor<1x2x4x4x!quant.calibrated<f32<-2.000000e+00:2.000000e+00>>>
// CHECK:      "top.Abs"{{.*}} -> tensor<1x2x4x4x!quant.calibrated<f32<-2.000000e+00:2.000000e+00>>>
// SYM:        "top.Relu"{{.*}} -> tensor<1x2x4x4x!quant.calibrated<f32<0.000000e+00:1.250000e+00>>>
// CHECK:      "top.Arg"{{.*}} -> (tensor<1x1x4x4xi64>, none)
module attributes {module.state = "TOP_F32"} {
  func.func @main(%arg0: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x1x4x4xi64>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
    %n = "top.None"() : () -> none loc("none")
    %0 = "top.Input"(%arg0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("x")
    %w = "top.Weight"() : () -> tensor<2x2x1x1xf32> loc("w")
    %1 = "top.Conv"(%0, %w, %n) {kernel_shape = [1, 1]} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x4x4xf32> loc("conv")
    %2 = "top.Conv"(%0, %w, %n) {kernel_shape = [1, 1], do_relu = true} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x4x4xf32> loc("relu")
    %3 = "top.Sigmoid"(%1) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("sig")
    %4 = "top.Sub"(%3, %1) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("sub")
    %5 = "top.Mul"(%1, %1) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("square")
    %6 = "top.Mul"(%1, %3) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("mul")
    %7 = "top.Abs"(%1) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("abs")
    %8 = "top.Relu"(%7) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("pos")
    %9, %v = "top.Arg"(%8) {axis = 1 : i64, keepdims = true, mode = "ArgMax"} : (tensor<1x2x4x4xf32>) -> (tensor<1x1x4x4xi64>, none) loc("arg")
    return %1, %9, %4, %5, %6, %8 : tensor<1x2x4x4xf32>, tensor<1x1x4x4xi64>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
  }
}

// RUN: tpuc-opt %s --shape-infer --mlir-print-debuginfo | filecheck %s
// The func signature follows the inferred results; unused weights are not deleted; locations
// (the tensor names users see) survive; correct ranked types are left alone.

// CHECK: func.func @main({{.*}}) -> (tensor<1x4x8x8xf32>, tensor<1x3x8x8xf32>)
// CHECK: "top.Input"{{.*}} -> tensor<1x3x8x8xf32> loc([[IN:#loc[0-9]*]])
// CHECK: "top.Weight"() : () -> tensor<4x3x1x1xf32> loc([[W:#loc[0-9]*]])
// CHECK: "top.Weight"() : () -> tensor<7xf32> loc([[UNUSED:#loc[0-9]*]])
// CHECK: "top.Conv"{{.*}} -> tensor<1x4x8x8xf32> loc([[CONV:#loc[0-9]*]])
// CHECK: "top.Relu"{{.*}} -> tensor<1x3x8x8xf32> loc([[RELU:#loc[0-9]*]])
// CHECK-DAG: [[IN]] = loc("images")
// CHECK-DAG: [[W]] = loc("conv1_w")
// CHECK-DAG: [[UNUSED]] = loc("unused_w")
// CHECK-DAG: [[CONV]] = loc("conv1")
// CHECK-DAG: [[RELU]] = loc("relu0")
module attributes {module.chip = "ALL", module.name = "sig", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "sig_top_f32_all_origin_weight.npz"} {
  func.func @main(%arg0: tensor<1x3x8x8xf32>) -> (tensor<*xf32>, tensor<1x3x8x8xf32>) {
    %none = "top.None"() : () -> none loc("none")
    %in = "top.Input"(%arg0) : (tensor<1x3x8x8xf32>) -> tensor<*xf32> loc("images")
    %w = "top.Weight"() : () -> tensor<4x3x1x1xf32> loc("conv1_w")
    %unused = "top.Weight"() : () -> tensor<7xf32> loc("unused_w")
    %c = "top.Conv"(%in, %w, %none) {kernel_shape = [1, 1]} : (tensor<*xf32>, tensor<4x3x1x1xf32>, none) -> tensor<*xf32> loc("conv1")
    %r = "top.Relu"(%in) : (tensor<*xf32>) -> tensor<1x3x8x8xf32> loc("relu0")
    func.return %c, %r : tensor<*xf32>, tensor<1x3x8x8xf32>
  }
}

// Must not fire on an integer Div: it truncates toward zero, and x * (1/c) in float would not
// (7 / 7 is 1, but 7 * (1/7) is 0.99999994, which truncates to 0).
// RUN: rm -rf %t && mkdir %t && cp %s %t/in.mlir
// RUN: python %S/Inputs/make_weights.py %s %t/scalar_to_const_int_weight.npz
// RUN: tpuc-opt %t/in.mlir --scalar-to-const | filecheck %s

// CHECK:     "top.Div"(%{{.*}}, %{{.*}}) : (tensor<2x3xi32>, tensor<1xi32>) -> tensor<2x3xi32>
// CHECK-NOT: Const
module attributes {module.chip = "ALL", module.name = "scalars", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "scalar_to_const_int_weight.npz"} {
  func.func @main(%arg0: tensor<2x3xi32>) -> tensor<2x3xi32> {
    %0 = "top.Input"(%arg0) : (tensor<2x3xi32>) -> tensor<2x3xi32> loc("x")
    %c = "top.Weight"() : () -> tensor<1xi32> loc("c")
    %1 = "top.Div"(%0, %c) : (tensor<2x3xi32>, tensor<1xi32>) -> tensor<2x3xi32> loc("idiv")
    return %1 : tensor<2x3xi32>
  }
}

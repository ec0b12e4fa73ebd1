// A binary op with a one-element weight becomes the *Const op with that value when tpuc-opt has the
// weights: the input names a weight npz (written by Inputs/make_weights.py).
// RUN: rm -rf %t && mkdir %t && cp %s %t/in.mlir
// RUN: python %S/Inputs/make_weights.py %s %t/scalar_to_const_weight.npz --inputs %t/inputs.npz
// RUN: tpuc-opt %t/in.mlir --scalar-to-const -o %t/out.mlir
// RUN: filecheck %s < %t/out.mlir
// The rewritten model computes what the original did (Div(x, c) -> MulConst(1/c) rounds once).
// RUN: model_runner --input %t/inputs.npz --model %t/in.mlir --output %t/before.npz
// RUN: model_runner --input %t/inputs.npz --model %t/out.mlir --output %t/after.npz
// RUN: npz_tool compare %t/after.npz %t/before.npz --tolerance 0.99999,0.9999 | filecheck %s --check-prefix=SAME
// The scalars are gone from the new weight file; the weights still used stay.
// RUN: npz_tool stats %t/out_weight.npz | filecheck %s --check-prefix=NPZ
// RUN: tpuc-opt %t/out.mlir --scalar-to-const --mlir-print-debuginfo -o %t/twice.mlir
// RUN: diff %t/out.mlir %t/twice.mlir

// CHECK:      module attributes {{{.*}}module.weight_file = "out_weight.npz"}
// CHECK:      %[[X:.*]] = "top.Input"
// CHECK:      "top.MulConst"(%[[X]]) {const_val = {{.*}} : f64, do_relu = true, relu_limit = -1.000000e+00 : f64} {{.*}} loc(#[[MUL:loc[0-9]*]])
// CHECK-NEXT: "top.AddConst"(%[[X]]) {const_val = {{.*}} : f64, {{.*}} loc(#[[ADD:loc[0-9]*]])
// CHECK-NEXT: "top.AddConst"(%[[X]]) {const_val = -{{.*}} : f64, {{.*}} loc(#[[SUB:loc[0-9]*]])
// CHECK-NEXT: "top.SubConst"(%[[X]]) {const_val = {{.*}} : f64, {{.*}}is_reverse = true{{.*}} loc(#[[RSUB:loc[0-9]*]])
// CHECK-NEXT: "top.MulConst"(%[[X]]) {const_val = {{.*}} : f64, {{.*}} loc(#[[DIV:loc[0-9]*]])
// CHECK-NEXT: "top.DivConst"(%[[X]]) {const_val = {{.*}} : f64, {{.*}}is_reverse = true{{.*}} loc(#[[RDIV:loc[0-9]*]])
// Must not fire: a weight of three elements; a one-element weight that broadcasts x to a higher rank.
// CHECK-NEXT: "top.Mul"(%[[X]], %{{.*}})
// CHECK-NEXT: "top.Mul"(%{{.*}}, %{{.*}}) : (tensor<1x1xf32>, tensor<1x1x1xf32>)
// CHECK-NOT:  Const
// CHECK-DAG:  #[[MUL]] = loc("mul")
// CHECK-DAG:  #[[ADD]] = loc("add")
// CHECK-DAG:  #[[SUB]] = loc("sub")
// CHECK-DAG:  #[[RSUB]] = loc("rsub")
// CHECK-DAG:  #[[DIV]] = loc("div")
// CHECK-DAG:  #[[RDIV]] = loc("rdiv")
// SAME:       npz compare PASSED.
// NPZ:        name
// NPZ-NEXT:   pair
// NPZ-NEXT:   c7 {{.*$}}
// NPZ-NOT:    {{.}}
module attributes {module.chip = "ALL", module.name = "scalars", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "scalar_to_const_weight.npz"} {
  func.func @main(%arg0: tensor<2x3xf32>, %arg1: tensor<1x1xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<1x1x1xf32>) {
    %0 = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
    %small = "top.Input"(%arg1) : (tensor<1x1xf32>) -> tensor<1x1xf32> loc("small")
    %c1 = "top.Weight"() : () -> tensor<1xf32> loc("c1")
    %c2 = "top.Weight"() : () -> tensor<1x1xf32> loc("c2")
    %c3 = "top.Weight"() : () -> tensor<1xf32> loc("c3")
    %c4 = "top.Weight"() : () -> tensor<1xf32> loc("c4")
    %c5 = "top.Weight"() : () -> tensor<1xf32> loc("c5")
    %c6 = "top.Weight"() : () -> tensor<1xf32> loc("c6")
    %pair = "top.Weight"() : () -> tensor<1x3xf32> loc("pair")
    %c7 = "top.Weight"() : () -> tensor<1x1x1xf32> loc("c7")
    %1 = "top.Mul"(%0, %c1) {do_relu = true} : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32> loc("mul")
    %2 = "top.Add"(%c2, %0) : (tensor<1x1xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("add")
    %3 = "top.Sub"(%0, %c3) : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32> loc("sub")
    %4 = "top.Sub"(%c4, %0) : (tensor<1xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("rsub")
    %5 = "top.Div"(%0, %c5) : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32> loc("div")
    %6 = "top.Div"(%c6, %0) : (tensor<1xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("rdiv")
    %7 = "top.Mul"(%0, %pair) : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32> loc("mul_pair")
    %8 = "top.Mul"(%small, %c7) : (tensor<1x1xf32>, tensor<1x1x1xf32>) -> tensor<1x1x1xf32> loc("mul_rank")
    return %1, %2, %3, %4, %5, %6, %7, %8 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<1x1x1xf32>
  }
}

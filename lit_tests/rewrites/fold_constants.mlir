// Ops whose operands are all weights are computed by tpuc-opt when it has the weights (the input
// names a weight npz written by Inputs/make_weights.py), and replaced by weights named like them.
// RUN: rm -rf %t && mkdir %t && cp %s %t/in.mlir
// RUN: python %S/Inputs/make_weights.py %s %t/fold_constants_weight.npz --inputs %t/inputs.npz
// RUN: tpuc-opt %t/in.mlir --fold-constants -o %t/out.mlir
// RUN: filecheck %s < %t/out.mlir
// RUN: model_runner --input %t/inputs.npz --model %t/in.mlir --output %t/before.npz
// RUN: model_runner --input %t/inputs.npz --model %t/out.mlir --output %t/after.npz
// RUN: npz_tool compare %t/after.npz %t/before.npz --tolerance 0.99999,0.9999 | filecheck %s --check-prefix=SAME
// The new weight file holds the folded tensors, not the weights they were computed from.
// RUN: npz_tool stats %t/out_weight.npz | filecheck %s --check-prefix=NPZ
// The output goes to stdout only when the weights did not change.
// RUN: not tpuc-opt %t/in.mlir --fold-constants 2>&1 | filecheck %s --check-prefix=STDOUT
// RUN: tpuc-opt %t/out.mlir --fold-constants | filecheck %s --check-prefix=AGAIN

// CHECK:      module attributes {{{.*}}module.weight_file = "out_weight.npz"}
// CHECK:      %[[X:.*]] = "top.Input"
// CHECK-NEXT: %[[KT:.*]] = "top.Weight"() : () -> tensor<3x2xf32> loc(#[[KTL:loc[0-9]*]])
// An op reading an activation is not folded; a dead one is erased.
// CHECK-NEXT: %[[Y:.*]] = "top.Add"(%[[X]], %[[KT]]) {{.*}} loc(#[[YL:loc[0-9]*]])
// CHECK-NEXT: %[[FLAT:.*]] = "top.Weight"() : () -> tensor<6xf32> loc(#[[FLATL:loc[0-9]*]])
// CHECK-NEXT: return %[[Y]], %[[FLAT]]
// CHECK-NOT:  top.
// CHECK-DAG:  #[[KTL]] = loc("k_T")
// A returned value folded to a weight keeps the output's name.
// CHECK-DAG:  #[[FLATL]] = loc("flat")
// CHECK-DAG:  #[[YL]] = loc("y")
// SAME:       npz compare PASSED.
// NPZ:        name
// NPZ-NEXT:   k_T
// NPZ-NEXT:   flat {{.*$}}
// NPZ-NOT:    {{.}}
// STDOUT:     error: the passes changed the weights; use -o FILE so they can be written
// STDOUT-NOT: {{.}}
// AGAIN:      module.weight_file = "out_weight.npz"
module attributes {module.chip = "ALL", module.name = "fold", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "fold_constants_weight.npz"} {
  func.func @main(%arg0: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<6xf32>) {
    %0 = "top.Input"(%arg0) : (tensor<3x2xf32>) -> tensor<3x2xf32> loc("x")
    %k = "top.Weight"() : () -> tensor<2x3xf32> loc("k")
    %a = "top.Weight"() : () -> tensor<2x3xf32> loc("a")
    %1 = "top.Permute"(%k) {order = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32> loc("k_T")
    %2 = "top.Add"(%0, %1) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32> loc("y")
    %3 = "top.Add"(%k, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("sum")
    %4 = "top.Reshape"(%3) {shape = [6]} : (tensor<2x3xf32>) -> tensor<6xf32> loc("flat")
    %5 = "top.Relu"(%0) : (tensor<3x2xf32>) -> tensor<3x2xf32> loc("dead")
    return %2, %4 : tensor<3x2xf32>, tensor<6xf32>
  }
}

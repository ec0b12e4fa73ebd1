// A module that names a weight file which cannot be read (here: it does not exist) is an error for a
// pass that reads weight data, naming the file (it would otherwise silently fire nothing); a pass
// that reads none runs. Without module.weight_file there is no data and no error
// (lit_tests/rewrites/weights_unavailable.mlir).
// RUN: not tpuc-opt %s --canonicalize 2>&1 | filecheck %s -DFILE=%s -DDIR=%S
// RUN: tpuc-opt %s --shape-infer --struct-optimize | filecheck %s --check-prefix=RUNS

// CHECK:      [[FILE]]: error: pass 'canonicalize' needs the weight data, but cannot read weight file '[[DIR]]/no_such_weight.npz' named by module.weight_file: No such file or directory
// CHECK-NOT:  {{.}}
// RUNS:       module attributes {module.weight_file = "no_such_weight.npz"}
// RUNS:       "top.Permute"

module attributes {module.weight_file = "no_such_weight.npz"} {
  func.func @main(%arg0: tensor<1x2xf32>) -> tensor<2x1xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x2xf32>) -> tensor<1x2xf32> loc("x")
    %k = "top.Weight"() : () -> tensor<1x2xf32> loc("k")
    %1 = "top.Add"(%0, %k) : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32> loc("y")
    %2 = "top.Permute"(%1) {order = [1, 0]} : (tensor<1x2xf32>) -> tensor<2x1xf32> loc("y_T")
    return %2 : tensor<2x1xf32>
  }
}

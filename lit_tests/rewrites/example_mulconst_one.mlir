// The tutorial's pattern (docs/writing-a-pass.md): MulConst(x, 1.0) is x.
// RUN: tpuc-opt %s --fold-mulconst-one | filecheck %s
// RUN: tpuc-opt %s --fold-mulconst-one > %t.once
// RUN: tpuc-opt %t.once --fold-mulconst-one > %t.twice
// RUN: diff %t.once %t.twice

// CHECK:      %[[X:.*]] = "top.Input"
// CHECK-NOT:  const_val = 1.000000e+00 : f64}
// CHECK:      "top.MulConst"(%[[X]]) {const_val = 2.000000e+00 : f64}
// CHECK:      "top.MulConst"(%[[X]]) {const_val = 1.000000e+00 : f64, do_relu = true}
// CHECK:      return %[[X]],
func.func @main(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %1 = "top.MulConst"(%0) {const_val = 1.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("one")
  %2 = "top.MulConst"(%0) {const_val = 2.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("two")
  %3 = "top.MulConst"(%0) {const_val = 1.0 : f64, do_relu = true} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("relu")
  return %1, %2, %3 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

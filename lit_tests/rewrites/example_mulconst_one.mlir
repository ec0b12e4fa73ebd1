// The tutorial's pattern (docs/writing-a-pass.md): MulConst(x, 1.0) is x.
// RUN: tpuc-opt %s --fold-mulconst-one | filecheck %s
// Run twice with locations: names decide whether a returned op may go, so they must survive.
// RUN: tpuc-opt %s --fold-mulconst-one --mlir-print-debuginfo > %t.once
// RUN: tpuc-opt %t.once --fold-mulconst-one --mlir-print-debuginfo > %t.twice
// RUN: diff %t.once %t.twice

// CHECK:      %[[X:.*]] = "top.Input"
// CHECK-NEXT: %[[Y:.*]] = "top.Relu"(%[[X]])
// CHECK-NEXT: "top.MulConst"(%[[X]]) {const_val = 2.000000e+00 : f64}
// CHECK-NEXT: "top.MulConst"(%[[X]]) {const_val = 1.000000e+00 : f64, do_relu = true}
// Must not fire: x * 1 is the graph output "out"; folding it to x would lose that name.
// CHECK-NEXT: "top.MulConst"(%[[X]]) {const_val = 1.000000e+00 : f64}
// CHECK-NEXT: return %[[Y]],
func.func @main(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %1 = "top.MulConst"(%0) {const_val = 1.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("one")
  %y = "top.Relu"(%1) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("y")
  %2 = "top.MulConst"(%0) {const_val = 2.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("two")
  %3 = "top.MulConst"(%0) {const_val = 1.0 : f64, do_relu = true} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("relu")
  %4 = "top.MulConst"(%0) {const_val = 1.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("out")
  return %y, %2, %3, %4 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// struct-optimize (before shape inference) rewires Permute chains and Casts, reading no shapes and
// no weights; extra-optimize (after it) fuses MatMul + bias and Relu into their producers. Each
// leaves the other's patterns alone. The groups are chosen in tpudsl/rewrites/optimize_groups.py.
// RUN: tpuc-opt %s --struct-optimize | filecheck %s --check-prefix=STRUCT
// RUN: tpuc-opt %s --extra-optimize | filecheck %s --check-prefix=EXTRA

// struct-optimize must not fuse: the MatMul, its Add and the Relu after it stay.
// STRUCT:      %[[X:.*]] = "top.Input"(%arg0)
// STRUCT:      %[[M:.*]] = "top.MatMul"
// STRUCT-NEXT: %[[A:.*]] = "top.Add"(%[[M]], %{{.*}})
// STRUCT-NEXT: "top.Relu"(%[[A]])
// It fires on the Permute pair, whose results are still unranked, and drops the lossless
// f32 -> f64 -> f32 Casts (the Relu reads %x again).
// STRUCT-NEXT: "top.Permute"(%[[X]]) {order = [0, 1]} : (tensor<2x3xf32>) -> tensor<*xf32> loc(#[[PLOC:loc[0-9]+]])
// STRUCT-NEXT: "top.Relu"(%[[X]])
// STRUCT-NOT:  "top.Cast"
// The composed Permute keeps the name of the one it replaced.
// STRUCT:      #[[PLOC]] = loc("p2")
// STRUCT-NOT:  loc("p1")

// extra-optimize fuses the bias and the Relu into the MatMul, which takes the Relu's name, ...
// EXTRA:       "top.MatMul"(%{{.*}}, %{{.*}}, %{{.*}}) {do_relu = true, {{.*}}} : (tensor<4x3xf32>, tensor<3x2xf32>, tensor<2xf32>) -> tensor<4x2xf32> loc(#[[MLOC:loc[0-9]+]])
// EXTRA-NOT:   "top.Add"
// ... and must not touch the Permute pair or the Casts.
// EXTRA:       "top.Permute"
// EXTRA-NEXT:  "top.Permute"
// EXTRA:       "top.Cast"
// EXTRA-NEXT:  "top.Cast"
// EXTRA:       #[[MLOC]] = loc("mm_relu")

func.func @main(%arg0: tensor<2x3xf32>, %arg1: tensor<4x3xf32>) -> (tensor<4x2xf32>, tensor<*xf32>, tensor<2x3xf32>) {
  %n = "top.None"() : () -> none loc("none")
  %x = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %y = "top.Input"(%arg1) : (tensor<4x3xf32>) -> tensor<4x3xf32> loc("y")
  %w = "top.Weight"() : () -> tensor<3x2xf32> loc("w")
  %b = "top.Weight"() : () -> tensor<2xf32> loc("b")
  %m = "top.MatMul"(%y, %w, %n) : (tensor<4x3xf32>, tensor<3x2xf32>, none) -> tensor<4x2xf32> loc("mm")
  %a = "top.Add"(%m, %b) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32> loc("mm_bias")
  %r = "top.Relu"(%a) : (tensor<4x2xf32>) -> tensor<4x2xf32> loc("mm_relu")
  %p1 = "top.Permute"(%x) {order = [1, 0]} : (tensor<2x3xf32>) -> tensor<*xf32> loc("p1")
  %p2 = "top.Permute"(%p1) {order = [1, 0]} : (tensor<*xf32>) -> tensor<*xf32> loc("p2")
  %c1 = "top.Cast"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf64> loc("c1")
  %c2 = "top.Cast"(%c1) : (tensor<2x3xf64>) -> tensor<2x3xf32> loc("c2")
  %q = "top.Relu"(%c2) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("q")
  return %r, %p2, %q : tensor<4x2xf32>, tensor<*xf32>, tensor<2x3xf32>
}

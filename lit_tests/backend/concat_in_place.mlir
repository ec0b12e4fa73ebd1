// --address-assign merges a Concat in place (only_merge, TPU-MLIR's ConcatFusePattern, docs/backend.md
// "Concats merged in place") exactly where TPU-MLIR's conditions hold: one Concat where they do, and one per
// condition that fails. The tiny chip: activations from 4096 + 64 (the one weight's 16 bytes, aligned);
// a 1x2x4x4 f32 tensor is 128 bytes.
// RUN: tpuc-opt %s --address-assign -o %t && filecheck %s < %t
// RUN: tpuc-opt %s --address-assign="merge_concat=false" | filecheck %s --check-prefix=OFF
// Fires: a and b, each read only here, are the two 128-byte runs of its result.
// CHECK: "tpu.Concat"(%{{[0-9]+}}, %{{[0-9]+}}) {axis = 1 : i64, only_merge = true} : (tensor<1x2x4x4xf32, [[A:[0-9]+]] : i64>, tensor<1x2x4x4xf32, [[B:[0-9]+]] : i64>) -> tensor<1x4x4x4xf32, [[A]] : i64> loc(#[[FIRES:loc[0-9]+]])
// Must not fire: a fused relu, a dim before the axis that is not 1, a weight, a graph input, a returned value,
// another Concat's result, an input already a run of the merged Concat "first", three inputs with other readers.
// CHECK: "tpu.Concat"({{.*}}) {axis = 1 : i64, do_relu = true} : {{.*}} loc(#[[RELU:loc[0-9]+]])
// CHECK: "tpu.Concat"({{.*}}) {axis = 2 : i64} : {{.*}} loc(#[[OUTER:loc[0-9]+]])
// CHECK: "tpu.Concat"({{.*}}) {axis = 1 : i64} : {{.*}} loc(#[[WEIGHT:loc[0-9]+]])
// CHECK: "tpu.Concat"({{.*}}) {axis = 1 : i64} : {{.*}} loc(#[[INPUT:loc[0-9]+]])
// CHECK: "tpu.Concat"({{.*}}) {axis = 1 : i64} : {{.*}} loc(#[[RETURNED:loc[0-9]+]])
// CHECK: "tpu.Concat"({{.*}}) {axis = 1 : i64} : {{.*}} loc(#[[OF_CONCAT:loc[0-9]+]])
// CHECK: "tpu.Concat"({{.*}}) {axis = 1 : i64, only_merge = true} : {{.*}} loc(#[[FIRST:loc[0-9]+]])
// CHECK: "tpu.Concat"({{.*}}) {axis = 1 : i64} : {{.*}} loc(#[[SECOND:loc[0-9]+]])
// CHECK: "tpu.Concat"({{.*}}) {axis = 1 : i64} : {{.*}} loc(#[[THREE_SHARED:loc[0-9]+]])
// Two of them (o and p) with other readers: merged.
// CHECK: "tpu.Concat"({{.*}}) {axis = 1 : i64, only_merge = true} : {{.*}} loc(#[[OP_READERS:loc[0-9]+]])
// CHECK-DAG: #[[FIRES]] = loc("fires")
// CHECK-DAG: #[[RELU]] = loc("relu")
// CHECK-DAG: #[[OUTER]] = loc("outer")
// CHECK-DAG: #[[WEIGHT]] = loc("weight")
// CHECK-DAG: #[[INPUT]] = loc("input")
// CHECK-DAG: #[[RETURNED]] = loc("returned")
// CHECK-DAG: #[[OF_CONCAT]] = loc("of_concat")
// CHECK-DAG: #[[FIRST]] = loc("first")
// CHECK-DAG: #[[SECOND]] = loc("second")
// CHECK-DAG: #[[THREE_SHARED]] = loc("three_shared")
// CHECK-DAG: #[[OP_READERS]] = loc("op_readers")
// OFF-NOT: only_merge
// RUN: python -c "import re; t = open('%t').read(); a, b = (int(x) for x in re.search(r'tensor<1x2x4x4xf32, (\d+) : i64>, tensor<1x2x4x4xf32, (\d+) : i64>\) -> tensor<1x4x4x4xf32, \d+ : i64> ', t).groups()); print('RUN', b - a)" | filecheck %s --check-prefix=RUNS
// RUNS: RUN 128
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x2x4x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x2x8x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x6x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x6x4x4xf32>) {
    %x = "top.Input"(%arg0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("x")
    %w = "top.Weight"() : () -> tensor<1x2x4x4xf32> loc("w")
    %a = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("a")
    %b = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("b")
    %fires = "tpu.Concat"(%a, %b) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> loc("fires")
    %c = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("c")
    %d = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("d")
    %relu = "tpu.Concat"(%c, %d) {axis = 1 : i64, do_relu = true} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> loc("relu")
    %e = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("e")
    %f = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("f")
    %outer = "tpu.Concat"(%e, %f) {axis = 2 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x8x4xf32> loc("outer")
    %g = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("g")
    %weight = "tpu.Concat"(%g, %w) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> loc("weight")
    %h = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("h")
    %input = "tpu.Concat"(%h, %x) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> loc("input")
    %i = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("i")
    %j = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("j")
    %returned = "tpu.Concat"(%i, %j) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> loc("returned")
    %k = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("k")
    %of_concat = "tpu.Concat"(%k, %relu) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x6x4x4xf32> loc("of_concat")
    %l = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("l")
    %m = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("m")
    %first = "tpu.Concat"(%l, %m) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> loc("first")
    %n = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("n")
    %second = "tpu.Concat"(%n, %m) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> loc("second")
    %o = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("o")
    %p = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("p")
    %q = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("q")
    %three_shared = "tpu.Concat"(%o, %p, %q) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x6x4x4xf32> loc("three_shared")
    %opq = "tpu.Concat"(%o, %p) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> loc("op_readers")
    %qq = "tpu.Concat"(%q, %x) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> loc("q_reader")
    return %fires, %j, %weight, %input, %outer, %returned, %first, %second, %three_shared, %opq, %qq, %of_concat : tensor<1x4x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x2x8x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x6x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x6x4x4xf32>
  }
}

// --address-assign places a chain of Concats (DenseNet's dense blocks: docs/backend.md "Concats merged in
// place", "Chains") in one buffer, the last Concat's result: each part written once at its run, every Concat's
// result the buffer's prefix, all of them only_merge. Fires on the nested form (x2 = Concat(x1, y2)) and on
// torchvision's (Concat(x0, x1, x2) after Concat(x0, x1)); must not where two Concats extend the same one, the
// axis changes, a member's result is returned, a member has a fused relu, a part is a graph input or a weight,
// or a member adds three parts with readers outside the chain. The tiny chip: a 1x2x4x4 f32 tensor is 128 bytes.
// RUN: tpuc-opt %s --address-assign -o %t && filecheck %s < %t
// RUN: tpuc-opt %s --address-assign="merge_concat=false" | filecheck %s --check-prefix=OFF
// CHECK-DAG: {axis = 1 : i64, only_merge = true} : {{.*}} loc(#[[N1:loc[0-9]+]])
// CHECK-DAG: {axis = 1 : i64, only_merge = true} : {{.*}} loc(#[[N2:loc[0-9]+]])
// CHECK-DAG: {axis = 1 : i64, only_merge = true} : {{.*}} loc(#[[F1:loc[0-9]+]])
// CHECK-DAG: {axis = 1 : i64, only_merge = true} : {{.*}} loc(#[[F2:loc[0-9]+]])
// CHECK-DAG: {axis = 1 : i64, only_merge = true} : {{.*}} loc(#[[F3:loc[0-9]+]])
// Two Concats extend "fork" (read by Relus, not returned: both chain candidates): it merges alone (TPU-MLIR's
// rule), both of them copy (a Concat's result is an input).
// CHECK-DAG: {axis = 1 : i64, only_merge = true} : {{.*}} loc(#[[FORK:loc[0-9]+]])
// CHECK-DAG: {axis = 1 : i64} : {{.*}} loc(#[[FORK_A:loc[0-9]+]])
// CHECK-DAG: {axis = 1 : i64} : {{.*}} loc(#[[FORK_B:loc[0-9]+]])
// The axis changes: "ax1" merges alone, "ax2" copies.
// CHECK-DAG: {axis = 2 : i64, only_merge = true} : {{.*}} loc(#[[AX1:loc[0-9]+]])
// CHECK-DAG: {axis = 1 : i64} : {{.*}} loc(#[[AX2:loc[0-9]+]])
// "ret1" is returned: merged alone, "ret2" copies.
// CHECK-DAG: {axis = 1 : i64, only_merge = true} : {{.*}} loc(#[[RET1:loc[0-9]+]])
// CHECK-DAG: {axis = 1 : i64} : {{.*}} loc(#[[RET2:loc[0-9]+]])
// "relu1" merges alone; "relu2" has a relu.
// CHECK-DAG: {axis = 1 : i64, only_merge = true} : {{.*}} loc(#[[RELU1:loc[0-9]+]])
// CHECK-DAG: {axis = 1 : i64, do_relu = true} : {{.*}} loc(#[[RELU2:loc[0-9]+]])
// A graph input in the first Concat: no chain, neither merges.
// CHECK-DAG: {axis = 1 : i64} : {{.*}} loc(#[[IN1:loc[0-9]+]])
// CHECK-DAG: {axis = 1 : i64} : {{.*}} loc(#[[IN2:loc[0-9]+]])
// A weight added by the second: the chain ends before it, "w1" merges alone.
// CHECK-DAG: {axis = 1 : i64, only_merge = true} : {{.*}} loc(#[[W1:loc[0-9]+]])
// CHECK-DAG: {axis = 1 : i64} : {{.*}} loc(#[[W2:loc[0-9]+]])
// Three new parts with readers outside the chain: "sh1" merges alone, "sh2" copies.
// CHECK-DAG: {axis = 1 : i64, only_merge = true} : {{.*}} loc(#[[SH1:loc[0-9]+]])
// CHECK-DAG: {axis = 1 : i64} : {{.*}} loc(#[[SH2:loc[0-9]+]])
// CHECK-DAG: #[[N1]] = loc("n1")
// CHECK-DAG: #[[N2]] = loc("n2")
// CHECK-DAG: #[[F1]] = loc("f1")
// CHECK-DAG: #[[F2]] = loc("f2")
// CHECK-DAG: #[[F3]] = loc("f3")
// CHECK-DAG: #[[FORK]] = loc("fork")
// CHECK-DAG: #[[FORK_A]] = loc("fork_a")
// CHECK-DAG: #[[FORK_B]] = loc("fork_b")
// CHECK-DAG: #[[AX1]] = loc("ax1")
// CHECK-DAG: #[[AX2]] = loc("ax2")
// CHECK-DAG: #[[RET1]] = loc("ret1")
// CHECK-DAG: #[[RET2]] = loc("ret2")
// CHECK-DAG: #[[RELU1]] = loc("relu1")
// CHECK-DAG: #[[RELU2]] = loc("relu2")
// CHECK-DAG: #[[IN1]] = loc("in1")
// CHECK-DAG: #[[IN2]] = loc("in2")
// CHECK-DAG: #[[W1]] = loc("w1")
// CHECK-DAG: #[[W2]] = loc("w2")
// CHECK-DAG: #[[SH1]] = loc("sh1")
// CHECK-DAG: #[[SH2]] = loc("sh2")
// OFF-NOT: only_merge
// Each part's and each Concat's byte offset from the chain's first part: the parts one after another, the Concats
// at 0; the buffer lives until its members' last reader: "late", computed after n2's last reader but before
// n1's, is not inside it.
// RUN: python -c "import re; t = open('%t').read(); name = dict(re.findall(r'#(loc\d+) = loc\(\"([^\"]+)\"\)', t)); at = {name[l]: int(x) for x, l in re.findall(r'-> tensor<[0-9x]+f32, (\d+) : i64> loc\(#(loc\d+)\)', t)}; print('NESTED', *(at[v] - at['a'] for v in ('a', 'b', 'c', 'n1', 'n2'))); print('FLAT', *(at[v] - at['d'] for v in ('d', 'e', 'g', 'h', 'f1', 'f2', 'f3'))); print('LATE', not at['a'] <= at['late'] < at['a'] + 384)" | filecheck %s --check-prefix=RUNS
// RUNS: NESTED 0 128 256 0 0
// RUNS: FLAT 0 128 256 384 0 0 0
// RUNS: LATE True
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x2x4x4xf32>, %arg1: tensor<1x1x4x4xf32>) -> (tensor<1x6x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x6x4x4xf32>, tensor<1x6x4x4xf32>, tensor<1x2x8x4xf32>, tensor<1x4x4x4xf32>, tensor<1x6x4x4xf32>, tensor<1x6x4x4xf32>, tensor<1x6x4x4xf32>, tensor<1x6x4x4xf32>, tensor<1x10x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
    %x = "top.Input"(%arg0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("x")
    %w = "top.Weight"() : () -> tensor<1x2x4x4xf32> loc("w")
    %a = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("a")
    %b = "tpu.Relu"(%a) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("b")
    %n1 = "tpu.Concat"(%a, %b) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> loc("n1")
    %c = "tpu.Relu"(%b) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("c")
    %n2 = "tpu.Concat"(%n1, %c) {axis = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x6x4x4xf32> loc("n2")
    %n2_reader = "tpu.Relu"(%n2) : (tensor<1x6x4x4xf32>) -> tensor<1x6x4x4xf32> loc("n2_reader")
    %late = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("late")
    %n1_reader = "tpu.Relu"(%n1) : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> loc("n1_reader")
    %d = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("d")
    %e = "tpu.Relu"(%d) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("e")
    %f1 = "tpu.Concat"(%d, %e) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> loc("f1")
    %g = "tpu.Relu"(%e) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("g")
    %f2 = "tpu.Concat"(%d, %e, %g) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x6x4x4xf32> loc("f2")
    %h = "tpu.Relu"(%g) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("h")
    %f3 = "tpu.Concat"(%d, %e, %g, %h) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x8x4x4xf32> loc("f3")
    %f3_reader = "tpu.Relu"(%f3) : (tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> loc("f3_reader")
    %f1_reader = "tpu.Relu"(%f1) : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> loc("f1_reader")
    %f2_reader = "tpu.Relu"(%f2) : (tensor<1x6x4x4xf32>) -> tensor<1x6x4x4xf32> loc("f2_reader")
    %i = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("i")
    %j = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("j")
    %fork = "tpu.Concat"(%i, %j) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> loc("fork")
    %k = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("k")
    %fork_a = "tpu.Concat"(%fork, %k) {axis = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x6x4x4xf32> loc("fork_a")
    %l = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("l")
    %fork_b = "tpu.Concat"(%fork, %l) {axis = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x6x4x4xf32> loc("fork_b")
    %fork_a_reader = "tpu.Relu"(%fork_a) : (tensor<1x6x4x4xf32>) -> tensor<1x6x4x4xf32> loc("fork_a_reader")
    %fork_b_reader = "tpu.Relu"(%fork_b) : (tensor<1x6x4x4xf32>) -> tensor<1x6x4x4xf32> loc("fork_b_reader")
    %x1 = "top.Input"(%arg1) : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> loc("x1")
    %m = "tpu.Relu"(%x1) : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> loc("m")
    %o = "tpu.Relu"(%x1) : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> loc("o")
    %ax1 = "tpu.Concat"(%m, %o) {axis = 2 : i64} : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x8x4xf32> loc("ax1")
    %ax_new = "tpu.Relu"(%ax1) : (tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32> loc("ax_new")
    %ax2 = "tpu.Concat"(%ax1, %ax_new) {axis = 1 : i64} : (tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>) -> tensor<1x2x8x4xf32> loc("ax2")
    %p = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("p")
    %q = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("q")
    %ret1 = "tpu.Concat"(%p, %q) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> loc("ret1")
    %r = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("r")
    %ret2 = "tpu.Concat"(%ret1, %r) {axis = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x6x4x4xf32> loc("ret2")
    %s = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("s")
    %t = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("t")
    %relu1 = "tpu.Concat"(%s, %t) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> loc("relu1")
    %u = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("u")
    %relu2 = "tpu.Concat"(%relu1, %u) {axis = 1 : i64, do_relu = true} : (tensor<1x4x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x6x4x4xf32> loc("relu2")
    %v = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("v")
    %in1 = "tpu.Concat"(%x, %v) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> loc("in1")
    %y = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("y")
    %in2 = "tpu.Concat"(%in1, %y) {axis = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x6x4x4xf32> loc("in2")
    %z = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("z")
    %z2 = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("z2")
    %w1 = "tpu.Concat"(%z, %z2) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> loc("w1")
    %w2 = "tpu.Concat"(%w1, %w) {axis = 1 : i64} : (tensor<1x4x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x6x4x4xf32> loc("w2")
    %s0 = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("s0")
    %s1 = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("s1")
    %sh1 = "tpu.Concat"(%s0, %s1) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x4x4x4xf32> loc("sh1")
    %s2 = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("s2")
    %s3 = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("s3")
    %s4 = "tpu.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("s4")
    %sh2 = "tpu.Concat"(%s0, %s1, %s2, %s3, %s4) {axis = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x10x4x4xf32> loc("sh2")
    %r2 = "tpu.Relu"(%s2) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("r2")
    %r3 = "tpu.Relu"(%s3) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("r3")
    %r4 = "tpu.Relu"(%s4) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("r4")
    return %n2_reader, %late, %f3_reader, %fork_a_reader, %fork_b_reader, %ax2, %ret1, %ret2, %relu2, %in2, %w2, %sh2, %r2, %r3, %r4 : tensor<1x6x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x8x4x4xf32>, tensor<1x6x4x4xf32>, tensor<1x6x4x4xf32>, tensor<1x2x8x4xf32>, tensor<1x4x4x4xf32>, tensor<1x6x4x4xf32>, tensor<1x6x4x4xf32>, tensor<1x6x4x4xf32>, tensor<1x6x4x4xf32>, tensor<1x10x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
  }
}

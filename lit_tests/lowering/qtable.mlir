// RUN: tpuc-opt %s --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu="qtable=%S/Inputs/sig_f32.qtable" | filecheck %s
// RUN: not tpuc-opt %s --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu="qtable=%S/Inputs/unknown.qtable" 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not tpuc-opt %s --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu="qtable=%S/Inputs/duplicate.qtable" 2>&1 | filecheck %s --check-prefix=DUP
// RUN: not tpuc-opt %s --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu="qtable=%S/Inputs/malformed.qtable" 2>&1 | filecheck %s --check-prefix=MALFORMED
// RUN: not tpuc-opt %s --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu="qtable=%S/Inputs/badmode.qtable" 2>&1 | filecheck %s --check-prefix=MODE

// "sig" runs in F32: its f16 operand is cast once, named after the producer; the output is
// already f32, so it is returned as it is, under its own name (no F32 -> F16 -> F32 round trip).
// CHECK: %[[P:[0-9]+]] = "tpu.Pool2D"({{.*}} -> tensor<1x2x2x2xf16> loc(#[[POOL:loc[0-9]*]])
// CHECK-NEXT: %[[C:[0-9]+]] = "tpu.Cast"(%[[P]]) : (tensor<1x2x2x2xf16>) -> tensor<1x2x2x2xf32> loc(#[[CAST:loc[0-9]*]])
// CHECK-NEXT: %[[S:[0-9]+]] = "tpu.Active"(%[[C]]) {{.*}} -> tensor<1x2x2x2xf32> loc(#[[SIG:loc[0-9]*]])
// CHECK-NEXT: return %[[S]] : tensor<1x2x2x2xf32>
// CHECK-DAG: #[[POOL]] = loc("pool")
// CHECK-DAG: #[[CAST]] = loc("pool_f32")
// CHECK-DAG: #[[SIG]] = loc("sig")

// UNKNOWN: unknown.qtable:2: error: no op of the module is named 'nope' (line 2), 'gone' (line 4)
// DUP: duplicate.qtable:2: error: 'pool' is already given on line 1
// MALFORMED: malformed.qtable:1: error: expected 'op_name MODE', got 'pool'
// MODE: badmode.qtable:1: error: mode 'F8' is not one of F32, F16, BF16, INT8
module attributes {module.name = "m", module.state = "TOP_F32"} {
  func.func @main(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("x")
    %1 = "top.MaxPool"(%0) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> loc("pool")
    %2 = "top.Sigmoid"(%1) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> loc("sig")
    return %2 : tensor<1x2x2x2xf32>
  }
}

// RUN: tpuc-opt %s --processor-assign="chip=bm1684x mode=F32" --convert-top-to-tpu --processor-tpu-optimize | filecheck %s
// RUN: tpuc-opt %s --processor-assign="chip=bm1684x mode=BF16" --convert-top-to-tpu --processor-tpu-optimize | filecheck %s --check-prefix=BF16
// RUN: tpuc-opt %s --processor-assign="chip=bm1684x mode=F32" --convert-top-to-tpu | filecheck %s --check-prefix=LOWERED
// RUN: not tpuc-opt %s --processor-assign="chip=bm1684x mode=F32" --convert-top-to-tpu --layer-group 2>&1 | filecheck %s --check-prefix=REFUSED
// --processor-tpu-optimize splits a rank-5 Permute whose dims do not fold to four groups (Swin's qkv:
// [2, 0, 3, 1, 4]) into single-dim moves, the last keeping the op's name and result; one that folds
// (ShuffleNet's [0, 2, 1, 3, 4]) and one whose size-1 dim leaves four groups stay one op. The
// lowering alone leaves every Permute whole (as TPU-MLIR's), and the backend refuses the wide one.

// CHECK:      "tpu.Permute"(%{{.*}}, %{{.*}}) {order = [2, 0, 1, 3, 4]} : (tensor<4x16x3x2x8xf32>, none) -> tensor<3x4x16x2x8xf32> loc([[MOVE:#loc[0-9]+]])
// CHECK-NEXT: "tpu.Permute"(%{{.*}}, %{{.*}}) {order = [0, 1, 3, 2, 4]} : (tensor<3x4x16x2x8xf32>, none) -> tensor<3x4x2x16x8xf32> loc([[QKV:#loc[0-9]+]])
// CHECK-NEXT: "top.Input"
// CHECK-NEXT: "tpu.Permute"(%{{.*}}, %{{.*}}) {order = [0, 2, 1, 3, 4]} : (tensor<1x2x4x3x3xf32>, none) -> tensor<1x4x2x3x3xf32>
// CHECK-NEXT: "top.Input"
// CHECK-NEXT: "tpu.Permute"(%{{.*}}, %{{.*}}) {order = [2, 0, 3, 1, 4]} : (tensor<4x16x1x2x8xf32>, none) -> tensor<1x4x2x16x8xf32>
// CHECK-NEXT: return
// CHECK:      [[MOVE]] = loc("qkv_permute_move0")
// CHECK-NEXT: [[QKV]] = loc("qkv_permute")
// CHECK-NOT:  _move
// LOWERED:     "tpu.Permute"(%{{.*}}, %{{.*}}) {order = [2, 0, 3, 1, 4]} : (tensor<4x16x3x2x8xf32>, none) -> tensor<3x4x2x16x8xf32> loc([[QKV:#loc[0-9]+]])
// LOWERED-NEXT: "top.Input"
// LOWERED-NEXT: "tpu.Permute"(%{{.*}}, %{{.*}}) {order = [0, 2, 1, 3, 4]}
// LOWERED-NEXT: "top.Input"
// LOWERED-NEXT: "tpu.Permute"(%{{.*}}, %{{.*}}) {order = [2, 0, 3, 1, 4]}
// LOWERED:      [[QKV]] = loc("qkv_permute")
// LOWERED-NOT:  _move
// REFUSED: error: backend: 'tpu.Permute' op "qkv_permute": order [2, 0, 3, 1, 4] of shape [4, 16, 3, 2, 8] does not fold to 4-D; not modelled (--processor-tpu-optimize splits it into moves that do)
// BF16:      "tpu.Permute"({{.*}}) {order = [2, 0, 1, 3, 4]} : (tensor<4x16x3x2x8xbf16>, none) -> tensor<3x4x16x2x8xbf16>
// BF16-NEXT: "tpu.Permute"({{.*}}) {order = [0, 1, 3, 2, 4]} : (tensor<3x4x16x2x8xbf16>, none) -> tensor<3x4x2x16x8xbf16>
module attributes {module.name = "m", module.state = "TOP_F32"} {
  func.func @main(%arg0: tensor<4x16x3x2x8xf32>, %arg1: tensor<1x2x4x3x3xf32>, %arg2: tensor<4x16x1x2x8xf32>) -> (tensor<3x4x2x16x8xf32>, tensor<1x4x2x3x3xf32>, tensor<1x4x2x16x8xf32>) {
    %0 = "top.Input"(%arg0) : (tensor<4x16x3x2x8xf32>) -> tensor<4x16x3x2x8xf32> loc("qkv")
    %1 = "top.Permute"(%0) {order = [2, 0, 3, 1, 4]} : (tensor<4x16x3x2x8xf32>) -> tensor<3x4x2x16x8xf32> loc("qkv_permute")
    %2 = "top.Input"(%arg1) : (tensor<1x2x4x3x3xf32>) -> tensor<1x2x4x3x3xf32> loc("x")
    %3 = "top.Permute"(%2) {order = [0, 2, 1, 3, 4]} : (tensor<1x2x4x3x3xf32>) -> tensor<1x4x2x3x3xf32> loc("shuffle")
    %4 = "top.Input"(%arg2) : (tensor<4x16x1x2x8xf32>) -> tensor<4x16x1x2x8xf32> loc("q")
    %5 = "top.Permute"(%4) {order = [2, 0, 3, 1, 4]} : (tensor<4x16x1x2x8xf32>) -> tensor<1x4x2x16x8xf32> loc("q_permute")
    return %1, %3, %5 : tensor<3x4x2x16x8xf32>, tensor<1x4x2x3x3xf32>, tensor<1x4x2x16x8xf32>
  }
}

// RUN: tpuc-opt %s --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu | filecheck %s
// RUN: tpuc-opt %s --processor-assign="chip=bm1684x mode=W8F16" --convert-top-to-tpu | filecheck %s
// RUN: tpuc-opt %s --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu="ignore_f16_overflow=true" | filecheck %s --check-prefix=IGNORED
// RUN: tpuc-opt %s --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu="qtable=%S/Inputs/pool_f16.qtable" | filecheck %s --check-prefix=IGNORED
// RUN: tpuc-opt %s --processor-assign="chip=bm1684x mode=BF16" --convert-top-to-tpu | filecheck %s --check-prefix=BF16

// F16 modes (F16, W8F16, W4F16) keep an average pool in F32, as TPU-MLIR's default
// (ignore_f16_overflow=false): it reads the f32 input itself; its result is cast to f16 for the
// next op under a derived name. The max pool, with no sum to overflow, is F16.
// CHECK: %[[X:[0-9]+]] = "top.Input"
// CHECK-NEXT: %[[P:[0-9]+]] = "tpu.Pool2D"(%[[X]]) {{.*}}pool_mode Avg{{.*}} -> tensor<1x2x2x2xf32> loc(#[[POOL:loc[0-9]*]])
// CHECK-NEXT: %[[C:[0-9]+]] = "tpu.Cast"(%[[P]]) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf16> loc(#[[CAST:loc[0-9]*]])
// CHECK-NEXT: "tpu.Pool2D"(%[[C]]) {{.*}}pool_mode Max{{.*}} -> tensor<1x2x1x1xf16>
// CHECK-DAG: #[[POOL]] = loc("pool")
// CHECK-DAG: #[[CAST]] = loc("pool_f16")

// ignore_f16_overflow=true, or a qtable line naming the pool (the qtable wins, as in TPU-MLIR): F16.
// IGNORED: "tpu.Cast"({{.*}}) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf16>
// IGNORED-NEXT: "tpu.Pool2D"({{.*}}pool_mode Avg{{.*}} -> tensor<1x2x2x2xf16>
// IGNORED-NOT: "tpu.Pool2D"{{.*}}xf32>

// BF16 has float32's range: the average pool stays BF16.
// BF16: "tpu.Pool2D"({{.*}}pool_mode Avg{{.*}} -> tensor<1x2x2x2xbf16>
module attributes {module.name = "m", module.state = "TOP_F32"} {
  func.func @main(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("x")
    %1 = "top.AvgPool"(%0) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> loc("pool")
    %2 = "top.MaxPool"(%1) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x2x2x2xf32>) -> tensor<1x2x1x1xf32> loc("max")
    return %2 : tensor<1x2x1x1xf32>
  }
}

// RUN: tpuc-opt %s --processor-assign="chip=bm1684x mode=F32" --convert-top-to-tpu | filecheck %s --check-prefix=F32
// RUN: tpuc-opt %s --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu | filecheck %s --check-prefix=F16
// RUN: tpuc-opt %s --processor-assign="chip=bm1684x mode=BF16" --convert-top-to-tpu | filecheck %s --check-prefix=BF16

// In F32, ops become Tpu ops with their names; enums print as #tpu<...>; nothing is cast.
// F32: module attributes {module.chip = "bm1684x", module.mode = "F32", module.name = "m", module.state = "TPU_LOWERED"}
// F32: "tpu.Pool2D"(%0) {kernel_shape = [2, 2], pads = [0, 0, 0, 0], pool_mode = #tpu<pool_mode Max>, strides = [2, 2]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> loc(#[[POOL:loc[0-9]*]])
// F32: "tpu.Active"(%1) {mode = #tpu<active_mode SIGMOID>} : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> loc(#[[SIG:loc[0-9]*]])
// F32-NOT: tpu.Cast
// F32: #[[POOL]] = loc("pool")
// F32: #[[SIG]] = loc("sig")

// In F16, the input is cast in (derived name), the output cast back under its Top name, and the
// op that computed it in f16 gets the derived name.
// F16: %[[IN:[0-9]+]] = "tpu.Cast"(%0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf16> loc(#[[CIN:loc[0-9]*]])
// F16: %[[P:[0-9]+]] = "tpu.Pool2D"(%[[IN]]) {{.*}} -> tensor<1x2x2x2xf16> loc(#[[POOL:loc[0-9]*]])
// F16: %[[S:[0-9]+]] = "tpu.Active"(%[[P]]) {{.*}} -> tensor<1x2x2x2xf16> loc(#[[SIG16:loc[0-9]*]])
// F16: %[[OUT:[0-9]+]] = "tpu.Cast"(%[[S]]) : (tensor<1x2x2x2xf16>) -> tensor<1x2x2x2xf32> loc(#[[SIG:loc[0-9]*]])
// F16: return %[[OUT]] : tensor<1x2x2x2xf32>
// F16-DAG: #[[CIN]] = loc("x_f16")
// F16-DAG: #[[POOL]] = loc("pool")
// F16-DAG: #[[SIG16]] = loc("sig_f16")
// F16-DAG: #[[SIG]] = loc("sig")

// In BF16, the same with bf16 tensors.
// BF16: "tpu.Pool2D"({{.*}} -> tensor<1x2x2x2xbf16>
// BF16: "tpu.Cast"({{.*}} : (tensor<1x2x2x2xbf16>) -> tensor<1x2x2x2xf32>
module attributes {module.name = "m", module.state = "TOP_F32"} {
  func.func @main(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("x")
    %1 = "top.MaxPool"(%0) {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> loc("pool")
    %2 = "top.Sigmoid"(%1) : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> loc("sig")
    return %2 : tensor<1x2x2x2xf32>
  }
}

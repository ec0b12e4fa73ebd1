// RUN: not tpuc-opt %s --processor-assign="chip=bm1684x mode=F32" --convert-top-to-tpu 2>&1 | filecheck %s
// tpu.Pool2D has no dilations: a dilated Top pool is an error naming them, never lowered undilated.

// CHECK: error: convert-top-to-tpu: 'top.MaxPool' op "pool": dilations [2, 2] are not lowered yet (tpu.Pool2D has none)
module attributes {module.name = "m", module.state = "TOP_F32"} {
  func.func @main(%arg0: tensor<1x2x7x7xf32>) -> tensor<1x2x3x3xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x2x7x7xf32>) -> tensor<1x2x7x7xf32> loc("x")
    %1 = "top.MaxPool"(%0) {kernel_shape = [3, 3], dilations = [2, 2]} : (tensor<1x2x7x7xf32>) -> tensor<1x2x3x3xf32> loc("pool")
    return %1 : tensor<1x2x3x3xf32>
  }
}

// Backend passes on input they do not model: one line naming the op and what is missing.
// RUN: not tpuc-opt %s --address-assign --layer-group --split-input-file 2>&1 | filecheck %s --check-prefix=ERR

// ERR: error: backend: module.chip is "ALL"; run --processor-assign first
module attributes {module.chip = "ALL", module.state = "TOP_F32"} {
  func.func @main(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("x")
    return %x : tensor<1x4xf32>
  }
}

// -----

// ERR: error: backend: 'tpu.Pool2D' op "pool": is_adaptive=True is not modelled
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("x")
    %p = "tpu.Pool2D"(%x) {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0], pool_mode = #tpu<pool_mode Avg>, is_adaptive = true} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> loc("pool")
    return %p : tensor<1x4x4x4xf32>
  }
}

// -----

// A Softmax's reduced elements (on C) are never sliced: too many is an error (a Relu of the same
// size is sliced along C and W, lit_tests/backend/slicing_cw.mlir).
// ERR: error: layer-group: 'tpu.Softmax' op "big" needs 131072 bytes of local memory per lane even in slices of one row; chip tiny has 16384
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x16384xf32>) -> tensor<1x16384xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x16384xf32>) -> tensor<1x16384xf32> loc("x")
    %n = "top.None"() : () -> none loc("none")
    %r = "tpu.Softmax"(%x, %n, %n, %n, %n, %n) {axis = 1 : i64} : (tensor<1x16384xf32>, none, none, none, none, none) -> tensor<1x16384xf32> loc("big")
    return %r : tensor<1x16384xf32>
  }
}

// -----

// ERR: error: backend: 'tpu.Relu' op "empty" has a zero-sized tensor (1, 0, 4); not modelled
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x0x4xf32>) -> tensor<1x0x4xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x0x4xf32>) -> tensor<1x0x4xf32> loc("x")
    %r = "tpu.Relu"(%x) : (tensor<1x0x4xf32>) -> tensor<1x0x4xf32> loc("empty")
    return %r : tensor<1x0x4xf32>
  }
}

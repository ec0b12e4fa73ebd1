module attributes {module.chip = "bm1684x", module.mode = "F16", module.name = "r", module.platform = "ONNX", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x256xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("x")
    %1 = "tpu.Reshape"(%0) {shape = [1, 256]} : (tensor<1x4x8x8xf32>) -> tensor<1x256xf32> loc("flat")
    %2 = "tpu.Cast"(%1) : (tensor<1x256xf32>) -> tensor<1x256xf16> loc("flat_f16")
    %3 = "tpu.Cast"(%2) : (tensor<1x256xf16>) -> tensor<1x256xf32> loc("out")
    return %3 : tensor<1x256xf32>
  }
}

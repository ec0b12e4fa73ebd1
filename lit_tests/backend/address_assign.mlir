// --address-assign on the tiny chip (global memory from 0x1000 = 4096, DMA alignment 64):
// coefficients first (576 + 16 bytes -> 4096, 4672), activations from the next aligned address
// (4736). The input and the returned value are never reused; %relu dies at the pool, so the add
// reuses its block (6784); an unused weight gets no address; `none` stays none.
// RUN: tpuc-opt %s --address-assign | filecheck %s

// CHECK:      module attributes {module.chip = "tiny", module.coeff_addr = 4096 : i64, module.coeff_size = 640 : i64, module.mode = "F32", module.neuron_addr = 4736 : i64, module.neuron_size = 4096 : i64, module.state = "TPU_ADDRESSED"}
// CHECK:      func.func @main(%arg0: tensor<1x4x8x8xf32, 4736 : i64>{{.*}}) -> tensor<1x4x8x8xf32, 6784 : i64>
// CHECK-NEXT:   %0 = "top.Input"(%arg0) : (tensor<1x4x8x8xf32, 4736 : i64>) -> tensor<1x4x8x8xf32, 4736 : i64>
// CHECK-NEXT:   %1 = "top.Weight"() : () -> tensor<4x4x3x3xf32, 4096 : i64>
// CHECK-NEXT:   %2 = "top.Weight"() : () -> tensor<4xf32, 4672 : i64>
// CHECK-NEXT:   %3 = "top.Weight"() : () -> tensor<4xf32>
// CHECK-NEXT:   %4 = "top.None"() : () -> none
// CHECK-NEXT:   %5 = "tpu.Conv2D"{{.*}} -> tensor<1x4x8x8xf32, 5760 : i64>
// CHECK-NEXT:   %6 = "tpu.Relu"{{.*}} -> tensor<1x4x8x8xf32, 6784 : i64>
// CHECK-NEXT:   %7 = "tpu.Pool2D"{{.*}} -> tensor<1x4x8x8xf32, 7808 : i64>
// CHECK-NEXT:   %8 = "tpu.Add"{{.*}} -> tensor<1x4x8x8xf32, 6784 : i64>
// CHECK-NEXT:   return %8 : tensor<1x4x8x8xf32, 6784 : i64>
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("x")
    %w = "top.Weight"() : () -> tensor<4x4x3x3xf32> loc("w")
    %b = "top.Weight"() : () -> tensor<4xf32> loc("b")
    %unused = "top.Weight"() : () -> tensor<4xf32> loc("unused")
    %n = "top.None"() : () -> none loc("none")
    %c = "tpu.Conv2D"(%x, %w, %b) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = true} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32> loc("conv")
    %r = "tpu.Relu"(%c) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("relu")
    %p = "tpu.Pool2D"(%r) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], pool_mode = #tpu<pool_mode Max>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("pool")
    %a = "tpu.Add"(%c, %p) : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("add")
    return %a : tensor<1x4x8x8xf32>
  }
}

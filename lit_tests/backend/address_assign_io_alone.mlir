// --address-assign with processor-assign's addr_mode=io_alone (module.addr_mode), on the tiny chip
// (global memory from 0x1000 = 4096, DMA alignment 64, no coefficients here): the input %x (read by
// two ops) and the outputs %b (also read by %c) and %c get an IO region of their own from 4096, in
// input then output order, 1024 bytes each: io_size 3072; the activation %a goes to the neuron region
// that starts where it ends (7168), never inside it.
// RUN: tpuc-opt %s --address-assign | filecheck %s
// Without module.addr_mode (auto, basic's one region) the same module gets the addresses it always
// got: the outputs among the activations by liveness (%c reuses %a's block once %a died at %b).
// RUN: sed 's/module.addr_mode = "io_alone", //' %s | tpuc-opt --address-assign | filecheck %s --check-prefix=AUTO

// CHECK:      module attributes {module.addr_mode = "io_alone", module.chip = "tiny", module.coeff_addr = 4096 : i64, module.coeff_size = 0 : i64, module.io_addr = 4096 : i64, module.io_size = 3072 : i64, module.mode = "F32", module.neuron_addr = 7168 : i64, module.neuron_size = 1024 : i64, module.state = "TPU_ADDRESSED"}
// CHECK:      %0 = "top.Input"(%arg0) : (tensor<1x4x8x8xf32, 4096 : i64>) -> tensor<1x4x8x8xf32, 4096 : i64>
// CHECK-NEXT: %1 = "tpu.Relu"{{.*}} -> tensor<1x4x8x8xf32, 7168 : i64>
// CHECK-NEXT: %2 = "tpu.Add"{{.*}} -> tensor<1x4x8x8xf32, 5120 : i64>
// CHECK-NEXT: %3 = "tpu.Relu"{{.*}} -> tensor<1x4x8x8xf32, 6144 : i64>
// CHECK-NEXT: return %2, %3

// AUTO:      module attributes {module.chip = "tiny", module.coeff_addr = 4096 : i64, module.coeff_size = 0 : i64, module.mode = "F32", module.neuron_addr = 4096 : i64, module.neuron_size = 3072 : i64, module.state = "TPU_ADDRESSED"}
// AUTO:      %0 = "top.Input"(%arg0) : (tensor<1x4x8x8xf32, 4096 : i64>) -> tensor<1x4x8x8xf32, 4096 : i64>
// AUTO-NEXT: %1 = "tpu.Relu"{{.*}} -> tensor<1x4x8x8xf32, 5120 : i64>
// AUTO-NEXT: %2 = "tpu.Add"{{.*}} -> tensor<1x4x8x8xf32, 6144 : i64>
// AUTO-NEXT: %3 = "tpu.Relu"{{.*}} -> tensor<1x4x8x8xf32, 5120 : i64>
// AUTO-NEXT: return %2, %3
module attributes {module.addr_mode = "io_alone", module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x4x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) {
    %x = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("x")
    %a = "tpu.Relu"(%x) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("a")
    %b = "tpu.Add"(%x, %a) : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("b")
    %c = "tpu.Relu"(%b) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("c")
    return %b, %c : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
  }
}

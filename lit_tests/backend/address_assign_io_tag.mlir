// --address-assign with processor-assign's addr_mode=io_tag and io_tag_fuse (module.addr_mode), on
// the tiny chip (it has memory tags; global memory from 0x1000 = 4096, DMA alignment 64, no
// coefficients here). A memory tag t's byte 0 is address t << 36 (3 << 36 = 206158430208, 4 << 36 =
// 274877906944, 5 << 36 = 343597383680, 6 << 36 = 412316860416, 7 << 36 = 481036337152).
// Inputs %x (1024 bytes), %z (36), %y (1024); outputs %b (1024, also read by %c), %e (36), %c (1024).
//
// io_tag with six IO tensors: the five largest get tags 3..7, largest first (x, y, b, c of 1024
// bytes in IO order, then z, the first of the 36-byte ones), each at its tag's byte 0; e, the sixth,
// stays among the activations, from 4096: a (dies at b), then e in a's freed block.
// RUN: tpuc-opt %s --address-assign | filecheck %s
// io_tag with five (%e not returned): each input and output its own tag in IO order, x z y b c; e
// (dead) takes a's freed block.
// RUN: sed -e 's/return %b, %e, %c : tensor<1x4x8x8xf32>, tensor<1x1x3x3xf32>, tensor<1x4x8x8xf32>/return %b, %c : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>/' -e 's/-> (tensor<1x4x8x8xf32>, tensor<1x1x3x3xf32>, tensor<1x4x8x8xf32>) {/-> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) {/' %s | tpuc-opt --address-assign | filecheck %s --check-prefix=FIVE
// io_tag_fuse: the inputs one after another from tag 3's byte 0, the outputs from tag 4's, their
// sizes added unaligned (x +0, z +1024, y +1060; b +0, e +1024, c +1060: the runtime binds one
// contiguous buffer to each tag); only a among the activations.
// RUN: sed 's/"io_tag"/"io_tag_fuse"/' %s | tpuc-opt --address-assign | filecheck %s --check-prefix=FUSE
// The tag modes record no io_addr/io_size: the tags are in the types; the neuron region is auto's.

// CHECK:      module attributes {module.addr_mode = "io_tag", module.chip = "tiny", module.coeff_addr = 4096 : i64, module.coeff_size = 0 : i64, module.mode = "F32", module.neuron_addr = 4096 : i64, module.neuron_size = 1024 : i64, module.state = "TPU_ADDRESSED"}
// CHECK:      %0 = "top.Input"(%arg0) : (tensor<1x4x8x8xf32, 206158430208 : i64>) -> tensor<1x4x8x8xf32, 206158430208 : i64>
// CHECK-NEXT: %1 = "top.Input"(%arg1) : (tensor<1x1x3x3xf32, 481036337152 : i64>) -> tensor<1x1x3x3xf32, 481036337152 : i64>
// CHECK-NEXT: %2 = "top.Input"(%arg2) : (tensor<1x4x8x8xf32, 274877906944 : i64>) -> tensor<1x4x8x8xf32, 274877906944 : i64>
// CHECK-NEXT: %3 = "tpu.Relu"{{.*}} -> tensor<1x4x8x8xf32, 4096 : i64>
// CHECK-NEXT: %4 = "tpu.Add"{{.*}} -> tensor<1x4x8x8xf32, 343597383680 : i64>
// CHECK-NEXT: %5 = "tpu.Relu"{{.*}} -> tensor<1x4x8x8xf32, 412316860416 : i64>
// CHECK-NEXT: %6 = "tpu.Relu"{{.*}} -> tensor<1x1x3x3xf32, 4096 : i64>

// FIVE:      module.neuron_addr = 4096 : i64, module.neuron_size = 1024 : i64
// FIVE:      %0 = "top.Input"(%arg0) : (tensor<1x4x8x8xf32, 206158430208 : i64>)
// FIVE-NEXT: %1 = "top.Input"(%arg1) : (tensor<1x1x3x3xf32, 274877906944 : i64>)
// FIVE-NEXT: %2 = "top.Input"(%arg2) : (tensor<1x4x8x8xf32, 343597383680 : i64>)
// FIVE-NEXT: %3 = "tpu.Relu"{{.*}} -> tensor<1x4x8x8xf32, 4096 : i64>
// FIVE-NEXT: %4 = "tpu.Add"{{.*}} -> tensor<1x4x8x8xf32, 412316860416 : i64>
// FIVE-NEXT: %5 = "tpu.Relu"{{.*}} -> tensor<1x4x8x8xf32, 481036337152 : i64>
// FIVE-NEXT: %6 = "tpu.Relu"{{.*}} -> tensor<1x1x3x3xf32, 4096 : i64>

// FUSE:      module attributes {module.addr_mode = "io_tag_fuse", module.chip = "tiny", module.coeff_addr = 4096 : i64, module.coeff_size = 0 : i64, module.mode = "F32", module.neuron_addr = 4096 : i64, module.neuron_size = 1024 : i64, module.state = "TPU_ADDRESSED"}
// FUSE:      %0 = "top.Input"(%arg0) : (tensor<1x4x8x8xf32, 206158430208 : i64>)
// FUSE-NEXT: %1 = "top.Input"(%arg1) : (tensor<1x1x3x3xf32, 206158431232 : i64>)
// FUSE-NEXT: %2 = "top.Input"(%arg2) : (tensor<1x4x8x8xf32, 206158431268 : i64>)
// FUSE-NEXT: %3 = "tpu.Relu"{{.*}} -> tensor<1x4x8x8xf32, 4096 : i64>
// FUSE-NEXT: %4 = "tpu.Add"{{.*}} -> tensor<1x4x8x8xf32, 274877906944 : i64>
// FUSE-NEXT: %5 = "tpu.Relu"{{.*}} -> tensor<1x4x8x8xf32, 274877908004 : i64>
// FUSE-NEXT: %6 = "tpu.Relu"{{.*}} -> tensor<1x1x3x3xf32, 274877907968 : i64>
module attributes {module.addr_mode = "io_tag", module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x4x8x8xf32>, %arg1: tensor<1x1x3x3xf32>, %arg2: tensor<1x4x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x1x3x3xf32>, tensor<1x4x8x8xf32>) {
    %x = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("x")
    %z = "top.Input"(%arg1) : (tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> loc("z")
    %y = "top.Input"(%arg2) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("y")
    %a = "tpu.Relu"(%x) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("a")
    %b = "tpu.Add"(%y, %a) : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("b")
    %c = "tpu.Relu"(%b) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("c")
    %e = "tpu.Relu"(%z) : (tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> loc("e")
    return %b, %e, %c : tensor<1x4x8x8xf32>, tensor<1x1x3x3xf32>, tensor<1x4x8x8xf32>
  }
}

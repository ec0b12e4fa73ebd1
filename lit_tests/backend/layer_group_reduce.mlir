// --layer-group of the ops that reduce along an axis, on the tiny chip (4 lanes x 16384 bytes,
// rows aligned to 16 bytes). Their tensor is viewed as (outer, reduced, inner, 1): the reduced
// elements on C (never sliced), the dims before on N, after on H.
// Softmax axis 1 of 1x8x64x32: (1, 8, 2048, 1); N cannot split, so H does: 2 halves of 1024
// rows, 2 channel groups x 4096 bytes, input and output: 16384 (the output from bank 2: tiny's bank
// rule keeps an op's output out of its inputs' 4096-byte banks, weights aside).
// LayerNorm over the last dim of 2x4x4x8: (32, 8, 1, 1), 32 x 2 groups x 16 bytes in and out,
// weight and bias 2 x 32, then the input: 1088; the output from the next bank: 4096 + 1024 = 5120,
// not split. tpu.Pad (one more column): 2 x 128 bytes in, 2 x 144 out from 4096: 4384.
// RUN: tpuc-opt %s --layer-group | filecheck %s
// RUN: tpuc-opt %s --layer-group | tpuc-opt | filecheck %s

// CHECK: "tpu.Softmax"{{.*}}hsecs = 2 : i64, {{.*}}lmem_bytes = 16384 : i64{{.*}}nsecs = 1 : i64
// CHECK: "tpu.LayerNorm"{{.*}}hsecs = 1 : i64, {{.*}}lmem_bytes = 5120 : i64{{.*}}nsecs = 1 : i64
// CHECK: "tpu.Pad"({{.*}}) {hsecs = 1 : i64, lmem_bytes = 4384 : i64, nsecs = 1 : i64, paddings = [0, 0, 0, 0, 0, 0, 0, 1]} :
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x8x64x32xf32>, %arg1: tensor<2x4x4x8xf32>) -> (tensor<1x8x64x32xf32>, tensor<2x4x4x8xf32>, tensor<2x4x4x9xf32>) {
    %x = "top.Input"(%arg0) : (tensor<1x8x64x32xf32>) -> tensor<1x8x64x32xf32> loc("x")
    %y = "top.Input"(%arg1) : (tensor<2x4x4x8xf32>) -> tensor<2x4x4x8xf32> loc("y")
    %w = "top.Weight"() : () -> tensor<8xf32> loc("w")
    %b = "top.Weight"() : () -> tensor<8xf32> loc("b")
    %n = "top.None"() : () -> none loc("none")
    %s = "tpu.Softmax"(%x, %n, %n, %n, %n, %n) {axis = 1 : i64} : (tensor<1x8x64x32xf32>, none, none, none, none, none) -> tensor<1x8x64x32xf32> loc("softmax")
    %l = "tpu.LayerNorm"(%y, %w, %b, %n, %n) {normalized_shape = [8], axis = 3 : i64, eps = 1.0e-05 : f64} : (tensor<2x4x4x8xf32>, tensor<8xf32>, tensor<8xf32>, none, none) -> tensor<2x4x4x8xf32> loc("ln")
    %c = "tpu.Pad"(%y, %n, %n, %n, %n) {paddings = [0, 0, 0, 0, 0, 0, 0, 1]} : (tensor<2x4x4x8xf32>, none, none, none, none) -> tensor<2x4x4x9xf32> loc("pad")
    return %s, %l, %c : tensor<1x8x64x32xf32>, tensor<2x4x4x8xf32>, tensor<2x4x4x9xf32>
  }
}

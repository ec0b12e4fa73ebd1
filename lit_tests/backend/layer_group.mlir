// --layer-group="opt=1" (groups of one) on the tiny chip (4 lanes x 16384 bytes, rows aligned to 16 bytes).
// The conv's output (2x4x64x32 f32) is split along N first: one image needs its 64 input rows
// (8192 bytes a lane), its 64 output rows (8192) and the weights (144 + 16): 16544 > 16384, so
// H is split too. Each half reads 33 input rows (its 32 rows and one halo row; the tensor's edge
// is a pad row): weights 160 and input 4224 bytes, then (tiny has the bank rule: an op's output
// tile shares no bank of 4096 bytes with its input tiles, weights aside) the output's 4096 from the
// next bank, 8192: 12288 bytes. The big relu needs 2 x 8192 bytes per image: one image per slice
// fills local memory exactly (16384 is allowed; its output starts on bank 2). The small relu is not
// split: its input's 512 bytes in bank 0, its output at 4096: 4608.
// RUN: tpuc-opt %s --layer-group="opt=1" | filecheck %s
// RUN: tpuc-opt %s --layer-group="opt=1" | tpuc-opt | filecheck %s

// CHECK: "tpu.Conv2D"{{.*}}hsecs = 2 : i64, {{.*}}lmem_bytes = 12288 : i64, nsecs = 2 : i64
// CHECK: "tpu.Relu"(%{{.*}}) {hsecs = 1 : i64, lmem_bytes = 16384 : i64, nsecs = 2 : i64}
// CHECK: "tpu.Relu"(%{{.*}}) {hsecs = 1 : i64, lmem_bytes = 4608 : i64, nsecs = 1 : i64}
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<2x4x64x32xf32>, %arg1: tensor<2x4x8x8xf32>) -> (tensor<2x4x64x32xf32>, tensor<2x4x8x8xf32>) {
    %x = "top.Input"(%arg0) : (tensor<2x4x64x32xf32>) -> tensor<2x4x64x32xf32> loc("x")
    %y = "top.Input"(%arg1) : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32> loc("y")
    %w = "top.Weight"() : () -> tensor<4x4x3x3xf32> loc("w")
    %b = "top.Weight"() : () -> tensor<4xf32> loc("b")
    %c = "tpu.Conv2D"(%x, %w, %b) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = true} : (tensor<2x4x64x32xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>) -> tensor<2x4x64x32xf32> loc("conv")
    %r = "tpu.Relu"(%c) : (tensor<2x4x64x32xf32>) -> tensor<2x4x64x32xf32> loc("big_relu")
    %s = "tpu.Relu"(%y) : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32> loc("small_relu")
    return %r, %s : tensor<2x4x64x32xf32>, tensor<2x4x8x8xf32>
  }
}

// --layer-group of a Deconv on the tiny chip (4 lanes x 16384 bytes, rows aligned to 16 bytes).
// ConvTranspose 3x3, stride 2, pads 1, output_padding 1: 1x4x64x16 -> 1x4x128x32. The filter
// (ONNX [ic, oc, 3, 3], read as (1, oc, ic, 9)) is a whole tile of 4 x 9 x 4 = 144 bytes. The
// output alone (128 rows x 128 bytes) fills a lane, so H splits in 2. Output rows [h0, h1) are a
// stride-1 conv over the zero-inserted input with d*(k-1) - pad = 1 zero row before it: they read
// input rows [ceil((h0 - 1) / 2), floor(h1 / 2)]. First half: 144 + rows 0..32 (33 x 64 bytes),
// then 64 output rows (8192) from the next 4096-byte bank (tiny's bank rule): 4096 + 8192 = 12288;
// second half: rows 32..63 (144 + 2048, then the same 12288).
// RUN: tpuc-opt %s --layer-group | filecheck %s
// RUN: tpuc-opt %s --layer-group | tpuc-opt | filecheck %s

// CHECK: "tpu.Deconv"{{.*}}hsecs = 2 : i64, {{.*}}lmem_bytes = 12288 : i64, nsecs = 1 : i64
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x4x64x16xf32>) -> tensor<1x4x128x32xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x4x64x16xf32>) -> tensor<1x4x64x16xf32> loc("x")
    %w = "top.Weight"() : () -> tensor<4x4x3x3xf32> loc("w")
    %n = "top.None"() : () -> none loc("none")
    %d = "tpu.Deconv"(%x, %w, %n) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], dilations = [1, 1], output_padding = [1, 1], group = 1 : i64, with_bias = false} : (tensor<1x4x64x16xf32>, tensor<4x4x3x3xf32>, none) -> tensor<1x4x128x32xf32> loc("deconv")
    return %d : tensor<1x4x128x32xf32>
  }
}

// --layer-group="slice_weights=true" is TEST-ONLY: it budgets a dynamic filter like an activation
// (cut along its first dim and H like the output slice) to reproduce the DragGAN failure; codegen
// still loads the filter whole, so the plan is short and the cmodel reports the overflow
// (tests/test_backend_ops.py). A static filter is budgeted whole either way.
// Tiny chip (4 lanes x 16384 bytes in 4 banks, rows aligned to 16; its bank rule puts an op's
// output from the bank after its inputs'). The dynamic filter 32x32x3x3 f32 loaded whole is
// (1, 32, 32, 9): 8 channel groups x 1152 = 9216 bytes a lane. Default: 20 slices of 2 output rows
// (4 input rows with halos: 9216 + 8 x 320 = 11776, the output from 12288: + 8 x 160 = 13568); 10
// slices of 4 would need the output from 16384. With the switch the filter's part is at most
// (1, 32, 3, 3): 8 x 48 = 384, so 4 slices of 10 rows (12 input rows 8 x 960 = 7680, the output
// from 8192: + 8 x 800, + 384 = 14976) seem to fit.
// RUN: tpuc-opt %s --layer-group | filecheck %s --check-prefix=WHOLE
// RUN: tpuc-opt %s --layer-group="slice_weights=true" | filecheck %s --check-prefix=SLICED

// WHOLE: "tpu.Conv2D"{{.*}}hsecs = 20 : i64, {{.*}}lmem_bytes = 13568 : i64, nsecs = 1 : i64
// WHOLE: "tpu.Conv2D"{{.*}}hsecs = 20 : i64, {{.*}}lmem_bytes = 13568 : i64, nsecs = 1 : i64
// SLICED: "tpu.Conv2D"{{.*}}hsecs = 4 : i64, {{.*}}lmem_bytes = 14976 : i64, nsecs = 1 : i64
// SLICED: "tpu.Conv2D"{{.*}}hsecs = 20 : i64, {{.*}}lmem_bytes = 13568 : i64, nsecs = 1 : i64
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x32x40x20xf32>, %arg1: tensor<32x32x3x3xf32>) -> (tensor<1x32x40x20xf32>, tensor<1x32x40x20xf32>) {
    %x = "top.Input"(%arg0) : (tensor<1x32x40x20xf32>) -> tensor<1x32x40x20xf32> loc("x")
    %f = "top.Input"(%arg1) : (tensor<32x32x3x3xf32>) -> tensor<32x32x3x3xf32> loc("f")
    %w = "top.Weight"() : () -> tensor<32x32x3x3xf32> loc("w")
    %n = "top.None"() : () -> none loc("none")
    %d = "tpu.Conv2D"(%x, %f, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = false} : (tensor<1x32x40x20xf32>, tensor<32x32x3x3xf32>, none) -> tensor<1x32x40x20xf32> loc("dynamic")
    %s = "tpu.Conv2D"(%x, %w, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = false} : (tensor<1x32x40x20xf32>, tensor<32x32x3x3xf32>, none) -> tensor<1x32x40x20xf32> loc("static")
    return %d, %s : tensor<1x32x40x20xf32>, tensor<1x32x40x20xf32>
  }
}

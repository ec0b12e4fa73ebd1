// --layer-group on a module that already carries an earlier run's slicing (tpuc-opt run twice, or a
// module edited by hand): the new decision replaces every slicing attribute, and a csecs/wsecs the
// new decision does not need goes (absent is 1), instead of slicing the op along C and W against the
// new lmem_bytes. The small relu fits whole on tiny (512 bytes in, its output at 4096: 4608).
// RUN: tpuc-opt %s --layer-group="opt=1" | filecheck %s
// RUN: tpuc-opt %s --layer-group="opt=1" | tpuc-opt --layer-group="opt=1" | filecheck %s

// CHECK: "tpu.Relu"(%{{.*}}) {hsecs = 1 : i64, lmem_bytes = 4608 : i64, nsecs = 1 : i64} :
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32> {
    %y = "top.Input"(%arg0) : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32> loc("y")
    %s = "tpu.Relu"(%y) {csecs = 2 : i64, hsecs = 2 : i64, lmem_bytes = 100 : i64, nsecs = 2 : i64, wsecs = 2 : i64} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32> loc("small_relu")
    return %s : tensor<2x4x8x8xf32>
  }
}

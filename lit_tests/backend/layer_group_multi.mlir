// --layer-group's group search (opt=2, the default) on the tiny chip (4 lanes x 16384 bytes, rows
// aligned to 16 bytes): where a group of several ops forms, and where it must not.
// RUN: tpuc-opt %s --layer-group --split-input-file --mlir-print-debuginfo | filecheck %s
// RUN: tpuc-opt %s --layer-group --split-input-file --mlir-print-debuginfo | tpuc-opt --split-input-file --mlir-print-debuginfo | filecheck %s
// RUN: tpuc-opt %s --layer-group="opt=1" --split-input-file | filecheck %s --check-prefix=ONE
// RUN: not tpuc-opt %s --layer-group="opt=4" --split-input-file 2>&1 | filecheck %s --check-prefix=BAD

// BAD: error: layer-group: opt=4 is not one of 1 (groups of one), 2, 3 (group search)
// ONE-NOT: tpu.Group
// ONE-NOT: ginfo

// A residual block: two 3x3 convs and the Add of the block's input, one group sliced on the Add's
// output. The Add's rows of x lie inside the first conv's (its rows with both convs' halos) in every
// slice, and x's 4 channels are one plane per lane, so x is loaded once per slice, the conv's part,
// and the Add reads its rows at an offset in that buffer (plan._shared_loads). Local memory per lane
// (4 banks of 4096 bytes; tiny has the bank rule: an op's output tile lies in no bank its input
// tiles touch): the filters (1, 4, 4, 9), 144 bytes each, at 0 and 144; then x's two buffers
// (slices alternate) of 50 rows, 3200 bytes (x rows [0, 50) and [46, 96)), at 288 and 3488, banks
// 0-1; the first conv's tile (49 rows) at 8192, bank 2; the second conv's avoids bank 2: 12288,
// bank 3; the Add's avoids bank 3 and banks 0-1 (x's buffers): 8192, where the first conv's tile,
// free once the second has run, was. hsecs = 2 (before: two loads of x, hsecs = 4, and 13824 bytes).
// In the IR: a tpu.Group after the Add (its operands the tensors it loads), each tensor read from
// outside through one tpu.Load (load_<name>; the second buffer is buffer_addr), which feeds both
// the first conv and the Add, the Add's result through a tpu.Store named as the Add, and flow: the
// time steps (-k) with the ids of their Loads, op, Store.
// CHECK-LABEL: func.func @main
// CHECK: %[[G:.*]] = "tpu.Group"(%{{.*}}, %[[X:[0-9]+]], %{{.*}}) ({
// CHECK-NEXT: "tpu.Load"{{.*}}ginfo = #tpu.lg<out_addr = 0, out_size = 144, buffer_addr = 0, buffer_size = 0, eu_align = true, can_merge = false, in_hslice_offset = [], n_idx = [0], n_slice = [1], c_idx = [0], c_slice = [4], d_idx = [0], d_slice = [1], h_idx = [0], h_slice = [4], w_idx = [0], w_slice = [9], id = 0, stage = 0, slice_idx = 0, group_type = 0>}{{.*}} loc([[LLOAD_W0:#loc[0-9]+]])
// CHECK-NEXT: %[[LX:[0-9]+]] = "tpu.Load"(%[[X]]) {ginfo = #tpu.lg<out_addr = 288, out_size = 3200, buffer_addr = 3488, buffer_size = 3200, eu_align = true, can_merge = false, in_hslice_offset = [], n_idx = [0], n_slice = [1], c_idx = [0], c_slice = [4], d_idx = [0], d_slice = [1], h_idx = [0, 46], h_slice = [50, 50], w_idx = [0], w_slice = [16], id = 1, stage = 0, slice_idx = 0, group_type = 0>}{{.*}} loc([[LLOAD_X:#loc[0-9]+]])
// CHECK-NEXT: "tpu.Conv2D"(%[[LX]], {{.*}}ginfo = #tpu.lg<out_addr = 8192, out_size = 3136, buffer_addr = 0, buffer_size = 0, {{.*}}, h_idx = [0, 47], h_slice = [49, 49], {{.*}}, id = 2, {{.*}}>{{.*}} loc([[LA:#loc[0-9]+]])
// CHECK-NEXT: "tpu.Load"{{.*}} loc([[LLOAD_W1:#loc[0-9]+]])
// CHECK-NEXT: "tpu.Conv2D"{{.*}}out_addr = 12288,{{.*}} loc([[LB:#loc[0-9]+]])
// CHECK-NEXT: %[[S:.*]] = "tpu.Add"(%{{[0-9]+}}, %[[LX]]) {{.*}}out_addr = 8192,{{.*}} loc([[LS:#loc[0-9]+]])
// CHECK-NEXT: %[[ST:.*]] = "tpu.Store"(%[[S]]) {ginfo = #tpu.lg<out_addr = 8192, {{.*}} id = 6, {{.*}} loc([[LS]])
// CHECK-NEXT: "tpu.Yield"(%[[ST]])
// CHECK-NEXT: }) {flow = [-1, 0, 1, 2, -2, 3, 4, -3, 5, 6], hsecs = 2 : i64, lmem_bytes = 15360 : i64, nsecs = 1 : i64}{{.*}} loc([[LS]])
// CHECK-NEXT: return %[[G]]
// CHECK-DAG: [[LLOAD_W0]] = loc("load_w0")
// CHECK-DAG: [[LLOAD_X]] = loc("load_x")
// CHECK-DAG: [[LA]] = loc("a")
// CHECK-DAG: [[LLOAD_W1]] = loc("load_w1")
// CHECK-DAG: [[LB]] = loc("b")
// CHECK-DAG: [[LS]] = loc("s")
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x4x96x16xf32>) -> tensor<1x4x96x16xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x4x96x16xf32>) -> tensor<1x4x96x16xf32> loc("x")
    %w0 = "top.Weight"() : () -> tensor<4x4x3x3xf32> loc("w0")
    %w1 = "top.Weight"() : () -> tensor<4x4x3x3xf32> loc("w1")
    %n = "top.None"() : () -> none loc("none")
    %a = "tpu.Conv2D"(%x, %w0, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = false} : (tensor<1x4x96x16xf32>, tensor<4x4x3x3xf32>, none) -> tensor<1x4x96x16xf32> loc("a")
    %b = "tpu.Conv2D"(%a, %w1, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = false} : (tensor<1x4x96x16xf32>, tensor<4x4x3x3xf32>, none) -> tensor<1x4x96x16xf32> loc("b")
    %s = "tpu.Add"(%b, %x) : (tensor<1x4x96x16xf32>, tensor<1x4x96x16xf32>) -> tensor<1x4x96x16xf32> loc("s")
    return %s : tensor<1x4x96x16xf32>
  }
}

// -----

// The same block on 8 channels 8 columns wide: two channel groups per lane, so the Add's 24-row part
// inside the first conv's 28-row one is not addressable in place (its planes would be read
// 768 bytes apart, the loaded ones lie 896 apart): x is loaded for each reader, load_x with both
// convs' halo rows, load_x_1 with the Add's rows, each with its own two buffers, hsecs = 4.
// Local memory: the filters (1, 8, 8, 9) at 0 and 576; load_x's buffers of 28 rows x 2 channel
// groups (1792 bytes) at 1152 and 2944, load_x_1's (1536) at 4736 and 6272; the first conv's tile
// (26 rows) at 8192, bank 2; the second conv's at 12288, bank 3; the Add's at 8192.
// CHECK-LABEL: func.func @main
// CHECK: %[[G:.*]] = "tpu.Group"(%{{.*}}, %[[X:[0-9]+]], %{{.*}}) ({
// CHECK-NEXT: "tpu.Load"
// CHECK-NEXT: %[[LX:[0-9]+]] = "tpu.Load"(%[[X]]) {ginfo = #tpu.lg<out_addr = 1152, out_size = 1792, buffer_addr = 2944, buffer_size = 1792,{{.*}} h_idx = [0, 22, 46, 70], h_slice = [26, 28, 28, 26],{{.*}} loc([[LLOAD_X:#loc[0-9]+]])
// CHECK-NEXT: "tpu.Conv2D"(%[[LX]], {{.*}}out_addr = 8192,{{.*}} h_idx = [0, 23, 47, 71], h_slice = [25, 26, 26, 25],
// CHECK-NEXT: "tpu.Load"
// CHECK-NEXT: "tpu.Conv2D"{{.*}}out_addr = 12288,
// CHECK-NEXT: %[[LX1:[0-9]+]] = "tpu.Load"(%[[X]]) {ginfo = #tpu.lg<out_addr = 4736, out_size = 1536, buffer_addr = 6272, buffer_size = 1536,{{.*}} h_idx = [0, 24, 48, 72], h_slice = [24, 24, 24, 24],{{.*}} loc([[LLOAD_X_1:#loc[0-9]+]])
// CHECK-NEXT: "tpu.Add"(%{{[0-9]+}}, %[[LX1]]) {{.*}}out_addr = 8192,
// CHECK-NEXT: "tpu.Store"
// CHECK-NEXT: "tpu.Yield"
// CHECK-NEXT: }) {flow = [-1, 0, 1, 2, -2, 3, 4, -3, 5, 6, 7], hsecs = 4 : i64, lmem_bytes = 13824 : i64, nsecs = 1 : i64}
// CHECK-DAG: [[LLOAD_X]] = loc("load_x")
// CHECK-DAG: [[LLOAD_X_1]] = loc("load_x_1")
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x8x96x8xf32>) -> tensor<1x8x96x8xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x8x96x8xf32>) -> tensor<1x8x96x8xf32> loc("x")
    %w0 = "top.Weight"() : () -> tensor<8x8x3x3xf32> loc("w0")
    %w1 = "top.Weight"() : () -> tensor<8x8x3x3xf32> loc("w1")
    %n = "top.None"() : () -> none loc("none")
    %a = "tpu.Conv2D"(%x, %w0, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = false} : (tensor<1x8x96x8xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x96x8xf32> loc("a")
    %b = "tpu.Conv2D"(%a, %w1, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = false} : (tensor<1x8x96x8xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x96x8xf32> loc("b")
    %s = "tpu.Add"(%b, %x) : (tensor<1x8x96x8xf32>, tensor<1x8x96x8xf32>) -> tensor<1x8x96x8xf32> loc("s")
    return %s : tensor<1x8x96x8xf32>
  }
}

// -----

// A 1x1 conv and the Add of x, sliced along H (hsecs = 3): both read x's rows of the slice and no
// halo, the same part in every slice, so x is loaded once per slice into one pair of buffers
// (16 and 3472, 54 rows of 64 bytes each) that both read (plan._shared_loads). The bank rule
// counts the shared buffers as the Add's input too: the conv writes bank 2 (8192), the Add, whose
// inputs touch banks 0, 1 and 2, bank 3 (12288), not the first fit at 6928 in bank 1.
// CHECK-LABEL: func.func @main
// CHECK: "tpu.Group"
// CHECK-NEXT: "tpu.Load"
// CHECK-NEXT: %[[LX:[0-9]+]] = "tpu.Load"(%{{[0-9]+}}) {ginfo = #tpu.lg<out_addr = 16, out_size = 3456, buffer_addr = 3472, buffer_size = 3456,{{.*}} h_idx = [0, 54, 108], h_slice = [54, 54, 52],{{.*}} loc([[LLOAD_X:#loc[0-9]+]])
// CHECK-NEXT: %[[A:[0-9]+]] = "tpu.Conv2D"(%[[LX]], {{.*}}out_addr = 8192,
// CHECK-NEXT: "tpu.Add"(%[[A]], %[[LX]]) {ginfo = #tpu.lg<out_addr = 12288,
// CHECK-NEXT: "tpu.Store"
// CHECK-NEXT: "tpu.Yield"
// CHECK-NEXT: }) {flow = [-1, 0, 1, 2, -2, 3, 4], hsecs = 3 : i64, lmem_bytes = 15744 : i64, nsecs = 1 : i64}
// CHECK-DAG: [[LLOAD_X]] = loc("load_x")
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x4x160x16xf32>) -> tensor<1x4x160x16xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x4x160x16xf32>) -> tensor<1x4x160x16xf32> loc("x")
    %w0 = "top.Weight"() : () -> tensor<4x4x1x1xf32> loc("w0")
    %n = "top.None"() : () -> none loc("none")
    %a = "tpu.Conv2D"(%x, %w0, %n) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], with_bias = false} : (tensor<1x4x160x16xf32>, tensor<4x4x1x1xf32>, none) -> tensor<1x4x160x16xf32> loc("a")
    %s = "tpu.Add"(%a, %x) : (tensor<1x4x160x16xf32>, tensor<1x4x160x16xf32>) -> tensor<1x4x160x16xf32> loc("s")
    return %s : tensor<1x4x160x16xf32>
  }
}

// -----

// A consumer outside: the conv's result is also returned, so the group stores it too, from every
// slice (its parts cover the whole tensor).
// CHECK-LABEL: func.func @main
// CHECK: %[[G:.*]]:2 = "tpu.Group"
// CHECK: %[[A:.*]] = "tpu.Conv2D"
// CHECK-NEXT: %[[SA:.*]] = "tpu.Store"(%[[A]]){{.*}} loc([[LA:#loc[0-9]+]])
// CHECK-NEXT: %[[B:.*]] = "tpu.Relu"
// CHECK-NEXT: %[[SB:.*]] = "tpu.Store"(%[[B]]){{.*}} loc([[LB:#loc[0-9]+]])
// CHECK-NEXT: "tpu.Yield"(%[[SA]], %[[SB]])
// CHECK: return %[[G]]#0, %[[G]]#1
// CHECK-DAG: [[LA]] = loc("a")
// CHECK-DAG: [[LB]] = loc("b")
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x4x32x16xf32>) -> (tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>) {
    %x = "top.Input"(%arg0) : (tensor<1x4x32x16xf32>) -> tensor<1x4x32x16xf32> loc("x")
    %w0 = "top.Weight"() : () -> tensor<4x4x3x3xf32> loc("w0")
    %n = "top.None"() : () -> none loc("none")
    %a = "tpu.Conv2D"(%x, %w0, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = false} : (tensor<1x4x32x16xf32>, tensor<4x4x3x3xf32>, none) -> tensor<1x4x32x16xf32> loc("a")
    %b = "tpu.Relu"(%a) : (tensor<1x4x32x16xf32>) -> tensor<1x4x32x16xf32> loc("b")
    return %a, %b : tensor<1x4x32x16xf32>, tensor<1x4x32x16xf32>
  }
}

// -----

// A consumer outside, but the group would not compute all of it: the 1x1 pool with stride 2
// reads the conv's rows 0..30 only (even rows, as one contiguous part), so row 31 would never be
// stored: no group.
// CHECK-LABEL: func.func @main
// CHECK-NOT: tpu.Group
// CHECK: return
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x4x32x16xf32>) -> (tensor<1x4x32x16xf32>, tensor<1x4x16x8xf32>) {
    %x = "top.Input"(%arg0) : (tensor<1x4x32x16xf32>) -> tensor<1x4x32x16xf32> loc("x")
    %w0 = "top.Weight"() : () -> tensor<4x4x3x3xf32> loc("w0")
    %n = "top.None"() : () -> none loc("none")
    %a = "tpu.Conv2D"(%x, %w0, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = false} : (tensor<1x4x32x16xf32>, tensor<4x4x3x3xf32>, none) -> tensor<1x4x32x16xf32> loc("a")
    %b = "tpu.Pool2D"(%a) {kernel_shape = [1, 1], strides = [2, 2], pads = [0, 0, 0, 0], pool_mode = #tpu<pool_mode Max>} : (tensor<1x4x32x16xf32>) -> tensor<1x4x16x8xf32> loc("b")
    return %a, %b : tensor<1x4x32x16xf32>, tensor<1x4x16x8xf32>
  }
}

// -----

// Weights are held whole for the whole group: each filter here takes 8640 bytes a lane
// ((1, 60, 16, 9): 15 channel groups x 576; (1, 16, 60, 9): 4 x 2160), both 17280 > 16384,
// so the two convs, which fit alone, do not form a group.
// CHECK-LABEL: func.func @main
// CHECK-NOT: tpu.Group
// CHECK: return
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> loc("x")
    %w0 = "top.Weight"() : () -> tensor<60x16x3x3xf32> loc("w0")
    %w1 = "top.Weight"() : () -> tensor<16x60x3x3xf32> loc("w1")
    %n = "top.None"() : () -> none loc("none")
    %a = "tpu.Conv2D"(%x, %w0, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = false} : (tensor<1x16x8x8xf32>, tensor<60x16x3x3xf32>, none) -> tensor<1x60x8x8xf32> loc("a")
    %b = "tpu.Conv2D"(%a, %w1, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = false} : (tensor<1x60x8x8xf32>, tensor<16x60x3x3xf32>, none) -> tensor<1x16x8x8xf32> loc("b")
    return %b : tensor<1x16x8x8xf32>
  }
}

// -----

// A dynamic filter computed by an op just before the conv: the filter is read whole, so its
// producer cannot be in the conv's group (it would be sliced with it): no group.
// CHECK-LABEL: func.func @main
// CHECK-NOT: tpu.Group
// CHECK: return
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x4x32x16xf32>, %arg1: tensor<4x4x3x3xf32>) -> tensor<1x4x32x16xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x4x32x16xf32>) -> tensor<1x4x32x16xf32> loc("x")
    %f = "top.Input"(%arg1) : (tensor<4x4x3x3xf32>) -> tensor<4x4x3x3xf32> loc("f")
    %n = "top.None"() : () -> none loc("none")
    %r = "tpu.Relu"(%f) : (tensor<4x4x3x3xf32>) -> tensor<4x4x3x3xf32> loc("filter")
    %a = "tpu.Conv2D"(%x, %r, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = false} : (tensor<1x4x32x16xf32>, tensor<4x4x3x3xf32>, none) -> tensor<1x4x32x16xf32> loc("a")
    return %a : tensor<1x4x32x16xf32>
  }
}

// -----

// A whole basic block whose input is computed in the group (ResNet's blocks after the first): the
// stem conv a feeds the block's first conv b (its rows plus two halo rows for b and c) and the Add
// (its rows only). a is computed as the union of both parts and the Add reads its rows in place.
// hsecs = 1 needs 16816 bytes (filters 3 x 144, x 4096, then a, b, c 4096 each, all live when c
// runs). hsecs = 2, output rows [0, 32) and [32, 64): a's union is [0, 34) and [30, 64), 34 rows,
// 2176 bytes; filters at 0..432, x's two buffers of 35 rows (2240) up to 4912 (banks 0 and 1),
// a at 8192 (bank 2), b (33 rows) at 4912 (bank 1, not a's), c (32 rows) at 10368 (banks 2-3, not
// b's) ending at 12416; the Add (inputs in banks 2-3) reuses b's place, the Relu a's.
// CHECK-LABEL: func.func @main
// CHECK: "tpu.Group"
// CHECK: %[[A:.*]] = "tpu.Conv2D"{{.*}}ginfo = #tpu.lg<out_addr = 8192, {{.*}} h_idx = [0, 30], h_slice = [34, 34], {{.*}} loc([[LA:#loc[0-9]+]])
// CHECK: "tpu.Conv2D"{{.*}}out_addr = 4912,{{.*}} loc([[LB:#loc[0-9]+]])
// CHECK: "tpu.Conv2D"{{.*}}out_addr = 10368,{{.*}} loc([[LC:#loc[0-9]+]])
// CHECK-NEXT: "tpu.Add"(%{{.*}}, %[[A]]) {ginfo = #tpu.lg<out_addr = 4912, {{.*}} loc([[LS:#loc[0-9]+]])
// CHECK-NEXT: "tpu.Relu"{{.*}}out_addr = 8192,{{.*}} loc([[LR:#loc[0-9]+]])
// CHECK: hsecs = 2 : i64, lmem_bytes = 12416 : i64, nsecs = 1 : i64
// CHECK-DAG: [[LA]] = loc("a")
// CHECK-DAG: [[LB]] = loc("b")
// CHECK-DAG: [[LC]] = loc("c")
// CHECK-DAG: [[LS]] = loc("s")
// CHECK-DAG: [[LR]] = loc("r")
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x4x64x16xf32>) -> tensor<1x4x64x16xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x4x64x16xf32>) -> tensor<1x4x64x16xf32> loc("x")
    %w0 = "top.Weight"() : () -> tensor<4x4x3x3xf32> loc("w0")
    %w1 = "top.Weight"() : () -> tensor<4x4x3x3xf32> loc("w1")
    %w2 = "top.Weight"() : () -> tensor<4x4x3x3xf32> loc("w2")
    %n = "top.None"() : () -> none loc("none")
    %a = "tpu.Conv2D"(%x, %w0, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = false} : (tensor<1x4x64x16xf32>, tensor<4x4x3x3xf32>, none) -> tensor<1x4x64x16xf32> loc("a")
    %b = "tpu.Conv2D"(%a, %w1, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = false, do_relu = true} : (tensor<1x4x64x16xf32>, tensor<4x4x3x3xf32>, none) -> tensor<1x4x64x16xf32> loc("b")
    %c = "tpu.Conv2D"(%b, %w2, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = false} : (tensor<1x4x64x16xf32>, tensor<4x4x3x3xf32>, none) -> tensor<1x4x64x16xf32> loc("c")
    %s = "tpu.Add"(%c, %a) : (tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>) -> tensor<1x4x64x16xf32> loc("s")
    %r = "tpu.Relu"(%s) : (tensor<1x4x64x16xf32>) -> tensor<1x4x64x16xf32> loc("r")
    return %r : tensor<1x4x64x16xf32>
  }
}

// -----

// The same block with 8 channels: two channel groups per lane, so a's 18-row tile would lay its
// planes 1152 bytes apart while the Add's 16-row part would be read 1024 apart: not addressable in
// place, so a and the Add are in no group sliced along H together. With the bank rule the cheapest
// grouping is a alone, then (b, c, the Add, the Relu) unsliced: b and the Add both read all of a,
// the same tile in the one slice, so a is loaded once (load_a, no load_a_1) and both read its
// buffer (plan._shared_loads). Local memory: filters [0, 1152), a's part [1152, 5248) (banks 0-1),
// b at 8192 (bank 2), c at 12288 (bank 3), the Add (inputs in banks 0, 1, 3) at 8192 where b was,
// the Relu at 12288. (Before loads were shared: (a, b) then (c, the Add, the Relu) with a prefetch,
// now lit_tests/backend/layer_group_prefetch.mlir's case.)
// CHECK-LABEL: func.func @main
// CHECK: %[[A:[0-9]+]] = "tpu.Conv2D"(%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) {hsecs = 1 : i64,{{.*}} loc([[LA:#loc[0-9]+]])
// CHECK-NEXT: %[[G:[0-9]+]] = "tpu.Group"(%[[W1:[0-9]+]], %[[A]], %[[W2:[0-9]+]]) ({
// CHECK-NEXT: "tpu.Load"(%[[W1]])
// CHECK-NEXT: %[[LOAD_A:[0-9]+]] = "tpu.Load"(%[[A]]) {ginfo = #tpu.lg<out_addr = 1152, out_size = 4096, buffer_addr = 0, buffer_size = 0,{{.*}} loc([[LLOAD_A:#loc[0-9]+]])
// CHECK-NEXT: %[[B:[0-9]+]] = "tpu.Conv2D"(%[[LOAD_A]], {{.*}}out_addr = 8192,{{.*}} loc([[LB:#loc[0-9]+]])
// CHECK-NEXT: "tpu.Load"(%[[W2]])
// CHECK-NEXT: %[[C:[0-9]+]] = "tpu.Conv2D"(%[[B]], {{.*}}out_addr = 12288,{{.*}} loc([[LC:#loc[0-9]+]])
// CHECK-NEXT: "tpu.Add"(%[[C]], %[[LOAD_A]]) {ginfo = #tpu.lg<out_addr = 8192,{{.*}} loc([[LS:#loc[0-9]+]])
// CHECK-NEXT: "tpu.Relu"{{.*}}out_addr = 12288,{{.*}} loc([[LR:#loc[0-9]+]])
// CHECK-NEXT: "tpu.Store"
// CHECK-NEXT: "tpu.Yield"
// CHECK-NEXT: }) {flow = [-1, 0, 1, 2, -2, 3, 4, -3, 5, -4, 6, 7], hsecs = 1 : i64, lmem_bytes = 16384 : i64, nsecs = 1 : i64}{{.*}} loc([[LR]])
// CHECK-NEXT: return %[[G]]
// CHECK-DAG: [[LA]] = loc("a")
// CHECK-DAG: [[LLOAD_A]] = loc("load_a")
// CHECK-DAG: [[LB]] = loc("b")
// CHECK-DAG: [[LC]] = loc("c")
// CHECK-DAG: [[LS]] = loc("s")
// CHECK-DAG: [[LR]] = loc("r")
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x8x32x16xf32>) -> tensor<1x8x32x16xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x8x32x16xf32>) -> tensor<1x8x32x16xf32> loc("x")
    %w0 = "top.Weight"() : () -> tensor<8x8x3x3xf32> loc("w0")
    %w1 = "top.Weight"() : () -> tensor<8x8x3x3xf32> loc("w1")
    %w2 = "top.Weight"() : () -> tensor<8x8x3x3xf32> loc("w2")
    %n = "top.None"() : () -> none loc("none")
    %a = "tpu.Conv2D"(%x, %w0, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = false} : (tensor<1x8x32x16xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x32x16xf32> loc("a")
    %b = "tpu.Conv2D"(%a, %w1, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = false, do_relu = true} : (tensor<1x8x32x16xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x32x16xf32> loc("b")
    %c = "tpu.Conv2D"(%b, %w2, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = false} : (tensor<1x8x32x16xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x32x16xf32> loc("c")
    %s = "tpu.Add"(%c, %a) : (tensor<1x8x32x16xf32>, tensor<1x8x32x16xf32>) -> tensor<1x8x32x16xf32> loc("s")
    %r = "tpu.Relu"(%s) : (tensor<1x8x32x16xf32>) -> tensor<1x8x32x16xf32> loc("r")
    return %r : tensor<1x8x32x16xf32>
  }
}

// -----

// A downsampling block on 8 channels (two channel groups per lane): the 1x1 stride-2 conv d reads
// rows 0, 2, 4, 6 of a's 8-row tile. Its part, rows 0 .. 6, is not addressable in place (7-row
// planes in a tile of 8-row ones), so it reads a's whole tile, row 7 unused by its windows
// (plan._to_tile_end): the block is one group, d reading a in place (no Load of a).
// CHECK-LABEL: func.func @main
// CHECK: "tpu.Group"
// CHECK: %[[A:[0-9]+]] = "tpu.Conv2D"(%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) {ginfo = #tpu.lg<out_addr = 4096,
// CHECK: "tpu.Conv2D"(%[[A]], {{.*}}kernel_shape = [3, 3], {{.*}}strides = [2, 2]
// CHECK-NOT: "tpu.Load"(%[[A]])
// CHECK: "tpu.Conv2D"(%[[A]], {{.*}}kernel_shape = [1, 1], {{.*}}strides = [2, 2]
// CHECK: flow = [-1, 0, 1, 2, -2, 3, 4, -3, 5, 6, -4, 7, 8], hsecs = 1 : i64, lmem_bytes = 4608 : i64, nsecs = 1 : i64
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x8x8x8xf32>) -> tensor<1x8x4x4xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> loc("x")
    %w0 = "top.Weight"() : () -> tensor<8x8x3x3xf32> loc("w0")
    %w1 = "top.Weight"() : () -> tensor<8x8x3x3xf32> loc("w1")
    %w2 = "top.Weight"() : () -> tensor<8x8x1x1xf32> loc("w2")
    %n = "top.None"() : () -> none loc("none")
    %a = "tpu.Conv2D"(%x, %w0, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = false} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x8x8xf32> loc("a")
    %b = "tpu.Conv2D"(%a, %w1, %n) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], with_bias = false} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x4x4xf32> loc("b")
    %d = "tpu.Conv2D"(%a, %w2, %n) {kernel_shape = [1, 1], strides = [2, 2], pads = [0, 0, 0, 0], with_bias = false} : (tensor<1x8x8x8xf32>, tensor<8x8x1x1xf32>, none) -> tensor<1x8x4x4xf32> loc("d")
    %s = "tpu.Add"(%b, %d) : (tensor<1x8x4x4xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> loc("s")
    return %s : tensor<1x8x4x4xf32>
  }
}

// Two cores (module.cores = 2, processor-assign num_core=2 on bm1688; docs/backend.md "Several
// cores"): --layer-group gives the group (and, with opt=1, each op) at least one slice per core
// (hsecs 2, where one core takes one slice: ONE), --codegen deals them to the cores, one stream
// each with a barrier after every op and group; the Reshape, emitted unsliced, runs on core 0.
// The cmodel runs both cores, each with its own local memory; every tensor, read from the header's
// tensor locations (core 1's slices from its own local memory), equals the Tpu interpreter's.
// The timeline has a GDMA and a BDC lane per core, a line per barrier, and core 1 waiting at the
// second barrier (the Reshape's) until the end, where core 0 ends it.
// More cores than the chip has: one error naming the chip and its count.
// RUN: tpuc-opt %s --address-assign --layer-group | filecheck %s --check-prefix=GROUP
// RUN: tpuc-opt %s --address-assign --layer-group="opt=1" | filecheck %s --check-prefix=ALONE
// RUN: sed -e 's/module.cores = 2 : i64, //' %s > %t.one.mlir
// RUN: tpuc-opt %t.one.mlir --address-assign --layer-group | filecheck %s --check-prefix=ONE
// RUN: rm -f %t.bmodel && tpuc-opt %s --address-assign --layer-group --codegen="model_file=%t.bmodel embed_debug_info=true" -o %t.mlir
// RUN: model_tool --info %t.bmodel | filecheck %s --check-prefix=INFO
// RUN: model_tool --timeline %t.bmodel -o %t.svg && filecheck %s --check-prefix=SVG < %t.svg
// RUN: python -c "import numpy as np; np.savez('%t.in.npz', x=np.random.default_rng(0).standard_normal((1, 4, 96, 16)).astype(np.float32))"
// RUN: model_runner --input %t.in.npz --model %s --dump_all_tensors --output %t.tpu.npz
// RUN: model_runner --input %t.in.npz --model %t.bmodel --dump_all_tensors --output %t.all.npz
// RUN: npz_tool compare %t.all.npz %t.tpu.npz -v | filecheck %s --check-prefix=SAME
// RUN: bmodel_checker %t.bmodel %t.tpu.npz | filecheck %s --check-prefix=CHECKER
// RUN: sed -e 's/module.cores = 2/module.cores = 3/' %s > %t.three.mlir
// RUN: not tpuc-opt %t.three.mlir --address-assign --layer-group 2>&1 | filecheck %s --check-prefix=THREE

// GROUP: "tpu.Group"
// GROUP: hsecs = 2 : i64, lmem_bytes = {{[0-9]+}} : i64, nsecs = 1 : i64
// ALONE-COUNT-3: hsecs = 2 : i64
// ONE: hsecs = 1 : i64, lmem_bytes = {{[0-9]+}} : i64, nsecs = 1 : i64
// The slowest core (core 0: the Reshape too) is busy the whole overlapped time.
// INFO: instructions: 9 GDMA, 6 BDC
// INFO: with GDMA and BDC overlapped: [[BUSY:[0-9]+]] cycles
// INFO: cores: 2, instructions per core: 8, 7, busy cycles per core: [[BUSY]], {{[0-9]+}}
// INFO: layer group 0: a, b, s (1x2 slices), instructions 0..4
// SVG: (F32, 2 cores): [[TOTAL:[0-9]+]] cycles
// SVG: >GDMA 0<
// SVG-NEXT: >BDC 0<
// SVG-NEXT: >GDMA 1<
// SVG-NEXT: >BDC 1<
// SVG: <rect class="wait" {{.*}} data-core="1" data-t0="{{[0-9]+}}" data-t1="[[TOTAL]]" data-barrier="1">
// SVG-NOT: class="wait"
// SVG: core 0: local memory per lane
// SVG: core 1: local memory per lane
// SVG: <line class="barrier" {{.*}} data-barrier="0" data-cycle="{{[0-9]+}}">
// SVG-NEXT: <line class="barrier" {{.*}} data-barrier="1" data-cycle="[[TOTAL]]">
// SVG-NOT: class="barrier"
// SAME: 5 compared
// SAME: 0 failed
// CHECKER: a {{ *}}tpu.Pool2D {{ *}}PASSED  EQUAL
// CHECKER-NEXT: b {{ *}}tpu.Pool2D {{ *}}PASSED  EQUAL
// CHECKER-NEXT: s {{ *}}tpu.Add {{ *}}PASSED  EQUAL
// CHECKER-NEXT: r {{ *}}tpu.Reshape {{ *}}PASSED  EQUAL
// CHECKER-NEXT: 4 tensors checked (F32: 1e-5 relative): 4 passed, 0 failed
// THREE: error: backend: module.cores is 3, but chip bm1688 has 2 cores (processor-assign num_core=1..2)
module attributes {module.chip = "bm1688", module.cores = 2 : i64, module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x4x96x16xf32>) -> tensor<1x4x96x16xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x4x96x16xf32>) -> tensor<1x4x96x16xf32> loc("x")
    %a = "tpu.Pool2D"(%x) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], pool_mode = #tpu<pool_mode Max>} : (tensor<1x4x96x16xf32>) -> tensor<1x4x96x16xf32> loc("a")
    %b = "tpu.Pool2D"(%a) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], pool_mode = #tpu<pool_mode Max>} : (tensor<1x4x96x16xf32>) -> tensor<1x4x96x16xf32> loc("b")
    %s = "tpu.Add"(%b, %x) : (tensor<1x4x96x16xf32>, tensor<1x4x96x16xf32>) -> tensor<1x4x96x16xf32> loc("s")
    %r = "tpu.Reshape"(%s) : (tensor<1x4x96x16xf32>) -> tensor<1x4x96x16xf32> loc("r")
    return %r : tensor<1x4x96x16xf32>
  }
}

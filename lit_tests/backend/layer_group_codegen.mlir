// --codegen of a group of several ops (a tpu.Group region): the bmodel is written; a region whose
// attributes no longer describe its plan (edited by hand, or addresses changed since --layer-group)
// is one error line naming the group and what is wrong, and no .bmodel is written. Two 3x3 max pools
// and the Add of x: the Add's rows of x lie inside the first pool's (its rows and both pools' halo
// rows), so x is loaded once per slice, the pool's part, and the Add reads its rows in that buffer
// (plan._shared_loads). At hsecs = 2 the loads take 2 x 3200 bytes (x rows [0, 50) and [46, 96)),
// the second slice's Add reading rows [48, 96) 2 rows (128 bytes) into the second buffer; the first
// pool's tile starts at 8192 (in bank 2 of tiny's four 4096-byte banks: its input's buffers touch
// banks 0 and 1, and the bank rule keeps an op's output out of its inputs' banks); unsliced
// (hsecs = 1, one buffer), the tiles need more than the 16384 bytes of a lane. A flow that is not the
// plan's order is refused. The bmodel's header names the group (model_tool --info): 2 loads and 2
// stores (loading the Add's part too: 4 loads); groups of one (opt=1) are not listed. The cmodel
// running the bmodel equals the Tpu interpreter (max pools and one Add: exactly).
// RUN: rm -f %t.bmodel && tpuc-opt %s --address-assign --layer-group --codegen="model_file=%t.bmodel" -o %t.mlir
// RUN: filecheck %s --check-prefix=IR < %t.mlir
// RUN: test -s %t.bmodel
// RUN: model_tool --info %t.bmodel | filecheck %s --check-prefix=INFO
// RUN: rm -f %t.one.bmodel && tpuc-opt %s --address-assign --layer-group="opt=1" --codegen="model_file=%t.one.bmodel" -o %t.one.mlir
// RUN: model_tool --info %t.one.bmodel | filecheck %s --check-prefix=ONE
// RUN: python -c "import numpy as np; np.savez('%t.in.npz', x=np.random.default_rng(0).standard_normal((1, 4, 96, 16)).astype(np.float32))"
// RUN: model_runner --input %t.in.npz --model %s --output %t.tpu.npz
// RUN: model_runner --input %t.in.npz --model %t.bmodel --output %t.bmodel.npz
// RUN: npz_tool compare %t.bmodel.npz %t.tpu.npz -v | filecheck %s --check-prefix=SAME
// RUN: rm -f %t.bad.bmodel && sed -e 's/out_addr = 8192/out_addr = 6000/' %t.mlir > %t.bad.mlir
// RUN: not tpuc-opt %t.bad.mlir --codegen="model_file=%t.bad.bmodel" 2>&1 | filecheck %s --check-prefix=STALE
// RUN: not test -e %t.bad.bmodel
// RUN: sed -e 's/hsecs = 2 : i64, lmem_bytes/hsecs = 1 : i64, lmem_bytes/g' %t.mlir > %t.big.mlir
// RUN: not tpuc-opt %t.big.mlir --codegen="model_file=%t.bad.bmodel" 2>&1 | filecheck %s --check-prefix=BIG
// RUN: sed -e 's/flow = \[-1, 0, 1, -2, 2/flow = [-1, 0, -2, 1, 2/' %t.mlir > %t.flow.mlir
// RUN: not tpuc-opt %t.flow.mlir --codegen="model_file=%t.bad.bmodel" 2>&1 | filecheck %s --check-prefix=FLOW

// IR-COUNT-1: "tpu.Group"
// IR: "tpu.Load"{{.*}}out_addr = 0, out_size = 3200, buffer_addr = 3200, buffer_size = 3200,{{.*}}h_idx = [0, 46], h_slice = [50, 50],
// IR-NOT: "tpu.Load"
// IR: }) {flow = [-1, 0, 1, -2, 2, -3, 3, 4], hsecs = 2 : i64, lmem_bytes = 15360 : i64, nsecs = 1 : i64}
// INFO: instructions: 4 GDMA, 6 BDC
// INFO: layer group 0: a, b, s (1x2 slices), instructions 0..{{[0-9]+}}
// INFO-NOT: layer group
// ONE: instructions:
// ONE-NOT: layer group
// SAME: s {{.*}} EQUAL
// STALE: error: codegen: group 'tpu.Group' op "s": 'tpu.Pool2D' op "a" has another layer_group than the plan's (the plan's: out_addr = 8192); run --layer-group again
// FLOW: error: codegen: group 'tpu.Group' op "s": its flow or lmem_bytes differ from its plan's; run --layer-group again
// BIG: error: codegen: group 'tpu.Group' op "s": its tiles need 22528 bytes per lane; chip tiny has 16384; run --layer-group again
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x4x96x16xf32>) -> tensor<1x4x96x16xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x4x96x16xf32>) -> tensor<1x4x96x16xf32> loc("x")
    %a = "tpu.Pool2D"(%x) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], pool_mode = #tpu<pool_mode Max>} : (tensor<1x4x96x16xf32>) -> tensor<1x4x96x16xf32> loc("a")
    %b = "tpu.Pool2D"(%a) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], pool_mode = #tpu<pool_mode Max>} : (tensor<1x4x96x16xf32>) -> tensor<1x4x96x16xf32> loc("b")
    %s = "tpu.Add"(%b, %x) : (tensor<1x4x96x16xf32>, tensor<1x4x96x16xf32>) -> tensor<1x4x96x16xf32> loc("s")
    return %s : tensor<1x4x96x16xf32>
  }
}

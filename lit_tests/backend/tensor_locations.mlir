// --codegen with embed_debug_info=true writes where each tensor can be read during a run (the
// header's tensor_locations): model_runner --dump_all_tensors on the .bmodel gives every tensor of
// the Tpu module by name, equal to the Tpu interpreter's (max pools and one Add: exactly), the two
// pools' results read from local memory in each of the group's two H slices; bmodel_checker passes
// each op in execution order. Without embed_debug_info (where it must not be written) the dump is
// one error line.
// RUN: rm -f %t.bmodel && tpuc-opt %s --address-assign --layer-group --codegen="model_file=%t.bmodel embed_debug_info=true" -o %t.mlir
// RUN: python -c "import numpy as np; np.savez('%t.in.npz', x=np.random.default_rng(0).standard_normal((1, 4, 96, 16)).astype(np.float32))"
// RUN: model_runner --input %t.in.npz --model %s --dump_all_tensors --output %t.tpu.npz
// RUN: model_runner --input %t.in.npz --model %t.bmodel --dump_all_tensors --output %t.all.npz
// RUN: npz_tool compare %t.all.npz %t.tpu.npz -v | filecheck %s --check-prefix=SAME
// RUN: python -c "from tpudsl.backend.bmodel import read_bmodel; [print(t['name'], t['op'], *(p['space'] for p in t['pieces'])) for t in read_bmodel('%t.bmodel').header['tensor_locations']]" | filecheck %s --check-prefix=WHERE
// RUN: bmodel_checker %t.bmodel %t.tpu.npz | filecheck %s --check-prefix=CHECKER
// RUN: rm -f %t.bare.bmodel && tpuc-opt %s --address-assign --layer-group --codegen="model_file=%t.bare.bmodel" -o /dev/null
// RUN: not model_runner --input %t.in.npz --model %t.bare.bmodel --dump_all_tensors --output %t.bare.npz 2>&1 | filecheck %s --check-prefix=BARE
// RUN: not test -e %t.bare.npz

// SAME: x {{.*}} EQUAL
// SAME: a {{.*}} EQUAL
// SAME: b {{.*}} EQUAL
// SAME: s {{.*}} EQUAL
// SAME: 4 compared
// SAME: 0 failed
// WHERE: a tpu.Pool2D local local
// WHERE-NEXT: b tpu.Pool2D local local
// WHERE-NEXT: s tpu.Add global global
// CHECKER: a {{ *}}tpu.Pool2D {{ *}}PASSED  EQUAL
// CHECKER-NEXT: b {{ *}}tpu.Pool2D {{ *}}PASSED  EQUAL
// CHECKER-NEXT: s {{ *}}tpu.Add {{ *}}PASSED  EQUAL
// CHECKER-NEXT: 3 tensors checked (F32: 1e-5 relative): 3 passed, 0 failed
// CHECKER-NEXT: bmodel_checker PASSED.
// BARE: bare.bmodel: error: the bmodel has no tensor locations (debug info): compile it with --codegen="... embed_debug_info=true" (model_deploy does)
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x4x96x16xf32>) -> tensor<1x4x96x16xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x4x96x16xf32>) -> tensor<1x4x96x16xf32> loc("x")
    %a = "tpu.Pool2D"(%x) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], pool_mode = #tpu<pool_mode Max>} : (tensor<1x4x96x16xf32>) -> tensor<1x4x96x16xf32> loc("a")
    %b = "tpu.Pool2D"(%a) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], pool_mode = #tpu<pool_mode Max>} : (tensor<1x4x96x16xf32>) -> tensor<1x4x96x16xf32> loc("b")
    %s = "tpu.Add"(%b, %x) : (tensor<1x4x96x16xf32>, tensor<1x4x96x16xf32>) -> tensor<1x4x96x16xf32> loc("s")
    return %s : tensor<1x4x96x16xf32>
  }
}

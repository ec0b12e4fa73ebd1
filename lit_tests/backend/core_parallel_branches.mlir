// --core-parallel's identical branches (TPU-MLIR's CommonMatch, docs/backend.md "Several cores"): A16MatMuls that
// read one value with the same operand and result shapes, 2 up to the cores of them, are placed whole on core 0,
// 1, ... (core_id), the later ones moved right after the first (their constants before it), so that codegen runs
// them in one phase; they are not split. Must not fire: a MatMul of other shapes (split by columns instead),
// three identical MatMuls on two cores (each split), one core.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; r = np.random.default_rng(1); np.savez('%t/m_weight.npz', wa=r.standard_normal((8, 4), np.float32), wb=r.standard_normal((8, 4), np.float32), **{n: r.standard_normal((4, 4), np.float32) for n in ('wc', 'wd', 'we')}, wo=r.standard_normal((4, 6), np.float32))"
// RUN: cd %t && tpuc-opt m.mlir --processor-assign="chip=bm1688 mode=W8BF16 num_core=2" --convert-top-to-tpu -o w8.mlir
// RUN: cd %t && tpuc-opt w8.mlir --core-parallel --mlir-print-debuginfo -o placed.mlir
// RUN: filecheck %s < %t/placed.mlir
// a and b: whole, on cores 0 and 1, next to each other (b moved up past the Relu of a).
// CHECK: "tpu.A16MatMul"({{.*}}) {core_id = 0 : i64, {{.*}}} : ({{.*}}) -> tensor<1x1x4xbf16> loc(#[[A:loc[0-9]*]])
// CHECK-NEXT: "tpu.A16MatMul"({{.*}}) {core_id = 1 : i64, {{.*}}} : ({{.*}}) -> tensor<1x1x4xbf16> loc(#[[B:loc[0-9]*]])
// CHECK-NEXT: "tpu.Relu"
// o (other shapes) and c, d, e (three on two cores): split by columns.
// CHECK-DAG: #[[A]] = loc("a")
// CHECK-DAG: #[[B]] = loc("b")
// RUN: python -c "from tpudsl.ir.module import load_module; from tpudsl.dialects.opdef import loc_name; m = load_module('%t/placed.mlir'); print('PLACED', sorted((loc_name(o), o.attributes['core_id'].value.data) for o in m.module.walk() if 'core_id' in o.attributes))" | filecheck %s --check-prefix=PLACED
// PLACED: PLACED [('a', 0), ('b', 1), ('c_bf16_core0', 0), ('c_bf16_core1', 1), ('d_bf16_core0', 0), ('d_bf16_core1', 1), ('e_bf16_core0', 0), ('e_bf16_core1', 1), ('o_bf16_core0', 0), ('o_bf16_core1', 1)]
// The bmodel: a and b one phase, a on core 0, b on core 1; after the Relus the parts of o, c, d and e one phase
// (independent: each core one part of each); bit-exact to the Tpu interpreter (model_deploy's check, by hand).
// RUN: cd %t && tpuc-opt placed.mlir --address-assign --layer-group --codegen="model_file=m.bmodel embed_debug_info=true" -o final.mlir
// RUN: python -c "from tpudsl.backend import isa; from tpudsl.backend.bmodel import read_bmodel; from tpudsl.backend.cores import streams_of, phase_bounds; b = read_bmodel('%t/m.bmodel'); s = streams_of(isa.decode(b.commands), b.header['core_instructions']); print('PHASES', [c for c in ([sum(isinstance(r, isa.BdcMatMulA16) for r in st[x:y]) for st, (x, y) in zip(s, p)] for p in zip(*(phase_bounds(st) for st in s))) if any(c)])" | filecheck %s --check-prefix=PHASES
// PHASES: PHASES {{\[}}[1, 1], [4, 4]]
// RUN: python -c "import numpy as np; np.savez('%t/in.npz', x=np.random.default_rng(2).standard_normal((1, 1, 8)).astype(np.float32))"
// RUN: model_runner --model %t/w8.mlir --input %t/in.npz --output %t/tpu.npz
// RUN: model_runner --model %t/m.bmodel --input %t/in.npz --output %t/bm.npz
// RUN: python -c "import numpy as np; a, b = np.load('%t/tpu.npz'), np.load('%t/bm.npz'); print('SAME', sorted(b), all(np.array_equal(a[k], b[k]) for k in b))" | filecheck %s --check-prefix=SAME
// SAME: SAME ['c', 'd', 'e', 'o', 'ra', 'rb'] True
module attributes {module.name = "m", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x1x8xf32>) -> (tensor<1x1x4xf32>, tensor<1x1x4xf32>, tensor<1x1x6xf32>, tensor<1x1x4xf32>, tensor<1x1x4xf32>, tensor<1x1x4xf32>) {
    %0 = "top.Input"(%arg0) : (tensor<1x1x8xf32>) -> tensor<1x1x8xf32> loc("x")
    %wa = "top.Weight"() : () -> tensor<8x4xf32> loc("wa")
    %wb = "top.Weight"() : () -> tensor<8x4xf32> loc("wb")
    %wc = "top.Weight"() : () -> tensor<4x4xf32> loc("wc")
    %wd = "top.Weight"() : () -> tensor<4x4xf32> loc("wd")
    %we = "top.Weight"() : () -> tensor<4x4xf32> loc("we")
    %wo = "top.Weight"() : () -> tensor<4x6xf32> loc("wo")
    %n = "top.None"() : () -> none loc(unknown)
    %1 = "top.MatMul"(%0, %wa, %n) : (tensor<1x1x8xf32>, tensor<8x4xf32>, none) -> tensor<1x1x4xf32> loc("a")
    %2 = "top.Relu"(%1) : (tensor<1x1x4xf32>) -> tensor<1x1x4xf32> loc("ra")
    %3 = "top.MatMul"(%0, %wb, %n) : (tensor<1x1x8xf32>, tensor<8x4xf32>, none) -> tensor<1x1x4xf32> loc("b")
    %4 = "top.Relu"(%3) : (tensor<1x1x4xf32>) -> tensor<1x1x4xf32> loc("rb")
    %5 = "top.MatMul"(%2, %wo, %n) : (tensor<1x1x4xf32>, tensor<4x6xf32>, none) -> tensor<1x1x6xf32> loc("o")
    %6 = "top.MatMul"(%4, %wc, %n) : (tensor<1x1x4xf32>, tensor<4x4xf32>, none) -> tensor<1x1x4xf32> loc("c")
    %7 = "top.MatMul"(%4, %wd, %n) : (tensor<1x1x4xf32>, tensor<4x4xf32>, none) -> tensor<1x1x4xf32> loc("d")
    %8 = "top.MatMul"(%4, %we, %n) : (tensor<1x1x4xf32>, tensor<4x4xf32>, none) -> tensor<1x1x4xf32> loc("e")
    return %2, %4, %5, %6, %7, %8 : tensor<1x1x4xf32>, tensor<1x1x4xf32>, tensor<1x1x6xf32>, tensor<1x1x4xf32>, tensor<1x1x4xf32>, tensor<1x1x4xf32>
  }
}

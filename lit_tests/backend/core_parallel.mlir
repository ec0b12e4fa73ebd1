// --core-parallel on bm1688 with 2 cores (TPU-MLIR's A16MatMulMatch, docs/backend.md "Several cores"): a
// weight-only A16MatMul whose N output columns the cores divide becomes one A16MatMul per core on its columns
// (`<name>_core<k>`, core_id = k: weight rows, scales, zero points and bias cut), joined by a Concat on the last
// axis that keeps the op's name. Must not fire: N = 3 (the cores do not divide it), one core, an addressed module.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; r = np.random.default_rng(0); np.savez('%t/m_weight.npz', w=r.standard_normal((8, 4), np.float32), b=r.standard_normal(4, np.float32), w3=r.standard_normal((8, 3), np.float32))"
// RUN: cd %t && tpuc-opt m.mlir --processor-assign="chip=bm1688 mode=W8BF16 num_core=2" --convert-top-to-tpu -o w8.mlir
// RUN: cd %t && tpuc-opt w8.mlir --core-parallel --mlir-print-debuginfo -o split.mlir
// RUN: filecheck %s < %t/split.mlir
// CHECK-DAG: %[[W0:[0-9]+]] = "top.Weight"() : () -> tensor<2x8xi8> loc(#[[W0LOC:loc[0-9]*]])
// CHECK-DAG: %[[S0:[0-9]+]] = "top.Weight"() : () -> tensor<2x1xbf16> loc(#[[S0LOC:loc[0-9]*]])
// CHECK-DAG: %[[B0:[0-9]+]] = "top.Weight"() : () -> tensor<2xf32> loc(#[[B0LOC:loc[0-9]*]])
// CHECK: %[[P0:[0-9]+]] = "tpu.A16MatMul"(%[[X:[0-9]+]], %[[W0]], %[[S0]], %{{[0-9]+}}, %[[B0]]) {core_id = 0 : i64, sign = true, w_transpose = true, weight_bits = 8 : i64} : (tensor<1x1x8xbf16>, tensor<2x8xi8>, tensor<2x1xbf16>, none, tensor<2xf32>) -> tensor<1x1x2xbf16> loc(#[[P0LOC:loc[0-9]*]])
// CHECK: %[[W1:[0-9]+]] = "top.Weight"() : () -> tensor<2x8xi8> loc(#[[W1LOC:loc[0-9]*]])
// CHECK: %[[P1:[0-9]+]] = "tpu.A16MatMul"(%[[X]], %[[W1]], {{.*}}) {core_id = 1 : i64, {{.*}}} : ({{.*}}) -> tensor<1x1x2xbf16> loc(#[[P1LOC:loc[0-9]*]])
// CHECK: "tpu.Concat"(%[[P0]], %[[P1]]) {axis = 2 : i64} : (tensor<1x1x2xbf16>, tensor<1x1x2xbf16>) -> tensor<1x1x4xbf16> loc(#[[MMLOC:loc[0-9]*]])
// N = 3 does not divide: left whole, unplaced.
// CHECK: "tpu.A16MatMul"({{.*}}) {sign = true, w_transpose = true, weight_bits = 8 : i64} : ({{.*}}) -> tensor<1x1x3xbf16> loc(#[[ODDLOC:loc[0-9]*]])
// CHECK-DAG: #[[P0LOC]] = loc("mm_bf16_core0")
// CHECK-DAG: #[[P1LOC]] = loc("mm_bf16_core1")
// CHECK-DAG: #[[MMLOC]] = loc("mm_bf16")
// CHECK-DAG: #[[ODDLOC]] = loc("mm3_bf16")
// CHECK-DAG: #[[W0LOC]] = loc("w_int8_core0")
// CHECK-DAG: #[[W1LOC]] = loc("w_int8_core1")
// CHECK-DAG: #[[S0LOC]] = loc("w_scale_bf16_core0")
// CHECK-DAG: #[[B0LOC]] = loc("b_core0")
// The parts' constants put back together are the original ones (an independent check of the cut), and the
// original constants no op reads any more are gone.
// RUN: python -c "import numpy as np; a = np.load('%t/w8_weight.npz'); b = np.load('%t/split_weight.npz'); print('EQ', [np.array_equal(np.concatenate([b[k + '_core0'], b[k + '_core1']], axis=-1 if k == 'b' else 0), a[k]) for k in ('w_int8', 'w_scale_bf16', 'b')], sorted(k for k in ('w_int8', 'b') if k in b))" | filecheck %s --check-prefix=EQ
// EQ: EQ [True, True, True] []
// Per group, 4 bits: the zero points [N, G] are cut by rows as the scales (a group runs along K: never cut).
// RUN: cd %t && tpuc-opt m.mlir --processor-assign="chip=bm1688 mode=W4BF16 num_core=2" --convert-top-to-tpu="q_group_size=4" --core-parallel -o w4.mlir
// RUN: filecheck %s --check-prefix=W4 < %t/w4.mlir
// W4: "tpu.A16MatMul"({{.*}}) {core_id = 0 : i64, q_group_size = 4 : i64, sign = true, w_transpose = true, weight_bits = 4 : i64} : (tensor<1x1x8xbf16>, tensor<2x4xui8>, tensor<2x2xbf16>, tensor<2x2xui8>, tensor<2xf32>) -> tensor<1x1x2xbf16>
// W4: "tpu.A16MatMul"({{.*}}) {core_id = 1 : i64, {{.*}}} : (tensor<1x1x8xbf16>, tensor<2x4xui8>, tensor<2x2xbf16>, tensor<2x2xui8>, tensor<2xf32>) -> tensor<1x1x2xbf16>
// W4: "tpu.Concat"
// After --layer-group (TPU-MLIR's place) the new ops get their slicing (each part sliced for its one core).
// RUN: cd %t && tpuc-opt w8.mlir --layer-group --core-parallel -o grouped.mlir && filecheck %s --check-prefix=LG < %t/grouped.mlir
// LG: "tpu.A16MatMul"({{.*}}) {core_id = 0 : i64, hsecs = 1 : i64, lmem_bytes = {{[0-9]+}} : i64, nsecs = 1 : i64, {{.*}}}
// LG: "tpu.Concat"({{.*}}) {axis = 2 : i64, hsecs = 1 : i64, lmem_bytes = {{[0-9]+}} : i64, nsecs = 1 : i64}
// TPU-MLIR's order (--layer-group, --core-parallel, --address-assign) through codegen: the bmodel equals the Tpu
// interpreter of the unsplit module bit for bit.
// RUN: cd %t && tpuc-opt w8.mlir --layer-group --core-parallel --address-assign --codegen="model_file=lg.bmodel" -o lg_final.mlir
// RUN: python -c "import numpy as np; np.savez('%t/in.npz', x=np.random.default_rng(3).standard_normal((1, 1, 8)).astype(np.float32))"
// RUN: model_runner --model %t/w8.mlir --input %t/in.npz --output %t/tpu.npz
// RUN: model_runner --model %t/lg.bmodel --input %t/in.npz --output %t/lg.npz
// RUN: python -c "import numpy as np; a, b = np.load('%t/tpu.npz'), np.load('%t/lg.npz'); print('SAME', sorted(b), all(np.array_equal(a[k], b[k]) for k in b))" | filecheck %s --check-prefix=SAME
// SAME: SAME ['mm', 'mm3'] True
// One core: nothing to split.
// RUN: cd %t && tpuc-opt m.mlir --processor-assign="chip=bm1688 mode=W8BF16 num_core=1" --convert-top-to-tpu -o one.mlir
// RUN: cd %t && tpuc-opt one.mlir --core-parallel -o one_split.mlir && diff one.mlir one_split.mlir
// --address-assign merges the Concat in place (only_merge, TPU-MLIR's ConcatFusePattern): part k's result is
// its k-th run of 2 bf16 columns (4 bytes).
// RUN: cd %t && tpuc-opt split.mlir --address-assign -o addressed.mlir
// RUN: filecheck %s --check-prefix=ADDR < %t/addressed.mlir
// ADDR: "tpu.Concat"({{.*}}) {axis = 2 : i64, only_merge = true} : (tensor<1x1x2xbf16, [[A:[0-9]+]] : i64>, tensor<1x1x2xbf16, [[B:[0-9]+]] : i64>) -> tensor<1x1x4xbf16, [[A]] : i64>
// RUN: python -c "import re; t = open('%t/addressed.mlir').read(); a, b = (int(x) for x in re.search(r'tpu.Concat.*tensor<1x1x2xbf16, (\d+) : i64>, tensor<1x1x2xbf16, (\d+) : i64>', t).groups()); print('RUN', b - a)" | filecheck %s --check-prefix=RUNS
// RUNS: RUN 4
// A merged Concat whose inputs are not its runs (here swapped by hand) is refused, no bmodel written.
// RUN: sed -E 's/"tpu.Concat"\(%%([0-9]+), %%([0-9]+)\)(.*) : \((tensor<[^>]*>), (tensor<[^>]*>)\)/"tpu.Concat"(%%\2, %%\1)\3 : (\5, \4)/' %t/addressed.mlir > %t/swapped.mlir
// RUN: cd %t && not tpuc-opt swapped.mlir --layer-group --codegen="model_file=bad.bmodel" 2>&1 | filecheck %s --check-prefix=SWAP
// RUN: test ! -e %t/bad.bmodel
// SWAP: error: codegen: 'tpu.Concat' op "mm_bf16" is only_merge, but its input from 'tpu.A16MatMul' op "mm_bf16_core1" is at {{[0-9]+}}, not at {{[0-9]+}} inside its result; run --address-assign again
// SWAP-NOT: Traceback
module attributes {module.name = "m", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x1x8xf32>) -> (tensor<1x1x4xf32>, tensor<1x1x3xf32>) {
    %0 = "top.Input"(%arg0) : (tensor<1x1x8xf32>) -> tensor<1x1x8xf32> loc("x")
    %1 = "top.Weight"() : () -> tensor<8x4xf32> loc("w")
    %2 = "top.Weight"() : () -> tensor<4xf32> loc("b")
    %3 = "top.Weight"() : () -> tensor<8x3xf32> loc("w3")
    %n = "top.None"() : () -> none loc(unknown)
    %4 = "top.MatMul"(%0, %1, %2) : (tensor<1x1x8xf32>, tensor<8x4xf32>, tensor<4xf32>) -> tensor<1x1x4xf32> loc("mm")
    %5 = "top.MatMul"(%0, %3, %n) : (tensor<1x1x8xf32>, tensor<8x3xf32>, none) -> tensor<1x1x3xf32> loc("mm3")
    return %4, %5 : tensor<1x1x4xf32>, tensor<1x1x3xf32>
  }
}

// Issue 11's index records through tpuc-opt on the tiny chip in F16 (sliced along N and H): ArgMax
// with select_last_index (BdcArg), TopK of the smallest (BdcTopK: values and f32 indices), CumSum
// (BdcCumSum: each partial sum rounded to f16), Trilu below the diagonal (BdcTrilu, told its
// slice's first row) and Reverse along H (GDMA loads through a negative stride, no BDC record).
// The .bmodel on the cmodel equals the Tpu interpreter bit for bit; the SVG timeline names the records.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; r = np.random.default_rng(0); np.savez('%t/in.npz', x=(r.integers(-3, 4, (2, 6, 40, 24)) * 0.37).astype(np.float32))"
// RUN: tpuc-opt %t/m.mlir --processor-assign="chip=tiny mode=F16" --convert-top-to-tpu -o %t/tpu.mlir
// RUN: tpuc-opt %t/tpu.mlir --address-assign --layer-group --codegen="model_file=%t/m.bmodel embed_debug_info=true" -o %t/final.mlir
// RUN: filecheck %s --check-prefix=FINAL < %t/final.mlir
// The debug info names an op of several named results by its results' names (timelines show them).
// RUN: python -c "from tpudsl.backend.bmodel import read_bmodel; print('\n'.join(n for _, n in read_bmodel('%t/m.bmodel').debug))" | filecheck %s --check-prefix=DEBUG
// DEBUG: {{^}}tv_f16, ti{{$}}
// RUN: model_runner --input %t/in.npz --model %t/tpu.mlir --output %t/tpu_out.npz
// RUN: model_runner --input %t/in.npz --model %t/m.bmodel --output %t/bmodel_out.npz
// RUN: npz_tool compare %t/bmodel_out.npz %t/tpu_out.npz --tolerance 0.99999,0.99999 -v | filecheck %s --check-prefix=SAME
// RUN: model_tool --timeline %t/m.bmodel -o %t/m.svg && filecheck %s --check-prefix=SVG < %t/m.svg
// Where it must not run: TopK's replace_topk_indices is not modelled, an error naming it.
// RUN: sed 's/largest = false/largest = false, replace_topk_indices = true/' %t/tpu.mlir > %t/replace.mlir
// RUN: not tpuc-opt %t/replace.mlir --address-assign --layer-group --codegen="model_file=%t/replace.bmodel" 2>&1 | filecheck %s --check-prefix=REPLACE

// FINAL: "tpu.Arg"{{.*}}nsecs = [[#]]
// FINAL: "tpu.TopK"
// FINAL: "tpu.CumSum"{{.*}}hsecs = [[#]]
// FINAL: "tpu.Trilu"{{.*}}hsecs = [[#]]{{.*}}nsecs = [[#]]
// FINAL: "tpu.Reverse"
// SAME-DAG: arg {{.*}} EQUAL
// SAME-DAG: tv {{.*}} EQUAL
// SAME-DAG: ti {{.*}} EQUAL
// SAME-DAG: rev {{.*}} EQUAL
// SAME: npz compare PASSED.
// SVG-DAG: arg: instruction {{[0-9]+}} BdcArg
// SVG-DAG: instruction {{[0-9]+}} BdcTopK
// SVG-DAG: cs: instruction {{[0-9]+}} BdcCumSum
// SVG-DAG: tri: instruction {{[0-9]+}} BdcTrilu
// SVG-DAG: rev{{(_f16)?}}: instruction {{[0-9]+}} GdmaLoad
// REPLACE: error: backend: 'tpu.TopK' op{{.*}}: replace_topk_indices=True is not modelled
module attributes {module.chip = "ALL", module.name = "index", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "w.npz"} {
  func.func @main(%arg0: tensor<2x6x40x24xf32>) -> (tensor<2x40x24xf32>, tensor<2x6x40x3xf32>, tensor<2x6x40x3xf32>, tensor<2x6x40x24xf32>) {
    %x = "top.Input"(%arg0) : (tensor<2x6x40x24xf32>) -> tensor<2x6x40x24xf32> loc("x")
    %arg:2 = "top.Arg"(%x) {axis = 1 : i64, keepdims = false, mode = "ArgMax", select_last_index = true} : (tensor<2x6x40x24xf32>) -> (tensor<2x40x24xf32>, none) loc("arg")
    %tk:2 = "top.TopK"(%x) {axis = 3 : i64, K = 3 : i64, largest = false} : (tensor<2x6x40x24xf32>) -> (tensor<2x6x40x3xf32>, tensor<2x6x40x3xf32>) loc(fused["tv", "ti"])
    %cs = "top.CumSum"(%x) {axis = 2 : i64} : (tensor<2x6x40x24xf32>) -> tensor<2x6x40x24xf32> loc("cs")
    %tri = "top.Trilu"(%cs) {upper = false, diagonal = -2 : i64} : (tensor<2x6x40x24xf32>) -> tensor<2x6x40x24xf32> loc("tri")
    %rev = "top.Reverse"(%tri) {axis = 2 : i64} : (tensor<2x6x40x24xf32>) -> tensor<2x6x40x24xf32> loc("rev")
    return %arg#0, %tk#0, %tk#1, %rev : tensor<2x40x24xf32>, tensor<2x6x40x3xf32>, tensor<2x6x40x3xf32>, tensor<2x6x40x24xf32>
  }
}

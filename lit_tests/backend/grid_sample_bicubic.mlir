// GridSample bicubic (mode 2) with reflection padding and align_corners through tpuc-opt to the
// .bmodel on bm1684x: one BdcGridSample (record 98) whose fields say bicubic, reflection, align 1
// and the op's sizes; model_tool --info counts it; the .bmodel on the cmodel matches the Tpu
// interpreter (grid points past the corners included: reflection mirrors the taps).
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; r = np.random.default_rng(0); np.savez('%t/in.npz', x=r.standard_normal((1, 2, 5, 6)).astype(np.float32), grid=r.uniform(-1.3, 1.3, (1, 3, 4, 2)).astype(np.float32))"
// RUN: tpuc-opt %t/m.mlir --processor-assign="chip=bm1684x mode=F32" --convert-top-to-tpu -o %t/tpu.mlir
// RUN: filecheck %s --check-prefix=TPU < %t/tpu.mlir
// RUN: tpuc-opt %t/tpu.mlir --address-assign --layer-group --codegen="model_file=%t/m.bmodel embed_debug_info=true" -o %t/final.mlir
// RUN: python -c "import sys; sys.path.insert(0, '%S/../..'); from tpudsl.backend import isa; from tpudsl.backend.bmodel import read_bmodel; rs = isa.decode(read_bmodel('%t/m.bmodel').commands); print(*sorted({type(r).__name__ for r in rs})); print(*[(r.OPCODE, r.mode, r.padding, r.align, r.n, r.c, r.h, r.w, r.oh, r.ow) for r in rs if isinstance(r, isa.BdcGridSample)])" | filecheck %s --check-prefix=RECORD
// RUN: model_tool --info %t/m.bmodel | filecheck %s --check-prefix=INFO
// RUN: model_runner --input %t/in.npz --model %t/tpu.mlir --output %t/tpu_out.npz
// RUN: model_runner --input %t/in.npz --model %t/m.bmodel --output %t/bmodel_out.npz
// RUN: npz_tool compare %t/bmodel_out.npz %t/tpu_out.npz --tolerance 0.999999,0.999999 -v | filecheck %s --check-prefix=SAME

// TPU: "tpu.GridSampler"({{.*}}) {align_corners = true, mode = 2 : i64, padding_mode = 2 : i64} : (tensor<1x2x5x6xf32>, tensor<1x3x4x2xf32>) -> tensor<1x2x3x4xf32> loc(#[[LOC:loc[0-9]*]])
// TPU: #[[LOC]] = loc("warp")
// RECORD: BdcGridSample
// RECORD-NEXT: (98, 2, 2, 1, 1, 2, 5, 6, 3, 4)
// INFO: instructions: {{[0-9]+}} GDMA, 1 BDC
// SAME: warp {{.*}} {{EQUAL|CLOSE}}
// SAME: npz compare PASSED.
module attributes {module.chip = "ALL", module.name = "grid", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "w.npz"} {
  func.func @main(%arg0: tensor<1x2x5x6xf32>, %arg1: tensor<1x3x4x2xf32>) -> tensor<1x2x3x4xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x2x5x6xf32>) -> tensor<1x2x5x6xf32> loc("x")
    %grid = "top.Input"(%arg1) : (tensor<1x3x4x2xf32>) -> tensor<1x3x4x2xf32> loc("grid")
    %0 = "top.GridSampler"(%x, %grid) {mode = 2 : i64, padding_mode = 2 : i64, align_corners = true} : (tensor<1x2x5x6xf32>, tensor<1x3x4x2xf32>) -> tensor<1x2x3x4xf32> loc("warp")
    return %0 : tensor<1x2x3x4xf32>
  }
}

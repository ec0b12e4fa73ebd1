// LSTM and GRU through tpuc-opt on the tiny chip: one BdcRecurrent (record 99) each, on the layer's
// f32 tensors in global memory (a forward LSTM with a bias and no initial state, its Y_h unused; a
// batch-first bidirectional GRU with an initial state; an LSTM with peepholes: BdcRecurrentPeephole,
// record 102). The .bmodel on the cmodel matches the Tpu
// interpreter; the timeline shows each op's record.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; r = np.random.default_rng(0); u = lambda *s: r.uniform(-0.4, 0.4, s).astype(np.float32); np.savez('%t/w.npz', w=u(1, 24, 4), r=u(1, 24, 6), b=u(1, 48), gw=u(2, 18, 4), gr=u(2, 18, 6), p=u(1, 18)); np.savez('%t/in.npz', x=r.standard_normal((5, 3, 4)).astype(np.float32), xb=r.standard_normal((3, 5, 4)).astype(np.float32), h0=r.standard_normal((3, 2, 6)).astype(np.float32))"
// RUN: tpuc-opt %t/m.mlir --processor-assign="chip=tiny mode=F32" --convert-top-to-tpu -o %t/tpu.mlir
// RUN: tpuc-opt %t/tpu.mlir --address-assign --layer-group --codegen="model_file=%t/m.bmodel embed_debug_info=true" -o %t/final.mlir
// RUN: model_runner --input %t/in.npz --model %t/tpu.mlir --output %t/tpu_out.npz
// RUN: model_runner --input %t/in.npz --model %t/m.bmodel --output %t/bmodel_out.npz
// RUN: npz_tool compare %t/bmodel_out.npz %t/tpu_out.npz --tolerance 0.999999,0.999999 -v | filecheck %s --check-prefix=SAME
// RUN: model_tool --timeline %t/m.bmodel -o %t/m.svg && filecheck %s --check-prefix=SVG < %t/m.svg
// Where the record must not run: an f16 operand (a hand-written module; the lowering keeps them f32)
// is an error naming the op and the types, and no .bmodel is written.
// RUN: sed -e 's/5x3x4xf32/5x3x4xf16/g' %t/tpu.mlir > %t/f16.mlir
// RUN: not tpuc-opt %t/f16.mlir --address-assign --layer-group --codegen="model_file=%t/f16.bmodel" 2>&1 | filecheck %s --check-prefix=F16
// RUN: not ls %t/f16.bmodel

// SAME: y {{.*}} {{EQUAL|CLOSE}}
// SAME: y_c {{.*}} {{EQUAL|CLOSE}}
// SAME: g {{.*}} {{EQUAL|CLOSE}}
// SAME: g_h {{.*}} {{EQUAL|CLOSE}}
// SAME: yp {{.*}} {{EQUAL|CLOSE}}
// SAME: npz compare PASSED.
// SVG-DAG: y, y_h, y_c: instruction 0 BdcRecurrent
// SVG-DAG: g, g_h: instruction 1 BdcRecurrent
// SVG-DAG: yp, yp_h, yp_c: instruction 2 BdcRecurrentPeephole
// F16: error: backend: 'tpu.LSTM' op "y, y_h, y_c": tensors of types ['f16', 'f32'] are not modelled (BdcRecurrent reads and writes f32)
module attributes {module.chip = "ALL", module.name = "rnn", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "w.npz"} {
  func.func @main(%arg0: tensor<5x3x4xf32>, %arg1: tensor<3x5x4xf32>, %arg2: tensor<3x2x6xf32>) -> (tensor<5x1x3x6xf32>, tensor<1x3x6xf32>, tensor<3x5x2x6xf32>, tensor<3x2x6xf32>, tensor<5x1x3x6xf32>) {
    %none = "top.None"() : () -> none loc("none")
    %x = "top.Input"(%arg0) : (tensor<5x3x4xf32>) -> tensor<5x3x4xf32> loc("x")
    %xb = "top.Input"(%arg1) : (tensor<3x5x4xf32>) -> tensor<3x5x4xf32> loc("xb")
    %h0 = "top.Input"(%arg2) : (tensor<3x2x6xf32>) -> tensor<3x2x6xf32> loc("h0")
    %w = "top.Weight"() : () -> tensor<1x24x4xf32> loc("w")
    %r = "top.Weight"() : () -> tensor<1x24x6xf32> loc("r")
    %b = "top.Weight"() : () -> tensor<1x48xf32> loc("b")
    %gw = "top.Weight"() : () -> tensor<2x18x4xf32> loc("gw")
    %gr = "top.Weight"() : () -> tensor<2x18x6xf32> loc("gr")
    %p = "top.Weight"() : () -> tensor<1x18xf32> loc("p")
    %0:3 = "top.LSTM"(%x, %w, %r, %b, %none, %none, %none) {hidden_size = 6 : i64, bidirectional = false} : (tensor<5x3x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>, tensor<1x48xf32>, none, none, none) -> (tensor<5x1x3x6xf32>, none, tensor<1x3x6xf32>) loc(fused["y", "y_h", "y_c"])
    %1:2 = "top.GRU"(%xb, %gw, %gr, %none, %h0) {hidden_size = 6 : i64, bidirectional = true, batch_first = true, linear_before_reset = true} : (tensor<3x5x4xf32>, tensor<2x18x4xf32>, tensor<2x18x6xf32>, none, tensor<3x2x6xf32>) -> (tensor<3x5x2x6xf32>, tensor<3x2x6xf32>) loc(fused["g", "g_h"])
    %2:3 = "top.LSTM"(%x, %w, %r, %b, %none, %none, %none, %p) {hidden_size = 6 : i64, bidirectional = false} : (tensor<5x3x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>, tensor<1x48xf32>, none, none, none, tensor<1x18xf32>) -> (tensor<5x1x3x6xf32>, none, none) loc(fused["yp", "yp_h", "yp_c"])
    return %0#0, %0#2, %1#0, %1#1, %2#0 : tensor<5x1x3x6xf32>, tensor<1x3x6xf32>, tensor<3x5x2x6xf32>, tensor<3x2x6xf32>, tensor<5x1x3x6xf32>
  }
}

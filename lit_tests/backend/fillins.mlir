// The records added for issue 11 through tpuc-opt on the tiny chip (4 lanes x 16 KiB, so the ops
// are sliced): Scale (BdcScale), HardSigmoid (BdcActiveX), Clip (BdcConstX), a reflect Pad
// (BdcPadReflect), RMSNorm without gamma (BdcRMSNorm), a Div (BdcBinaryX) and a Gather whose
// indices are an input (GdmaGather, negative ones count from the end). The .bmodel on the cmodel matches the Tpu interpreter; the SVG timeline
// names each op's records.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; r = np.random.default_rng(0); np.savez('%t/w.npz', sc=r.uniform(0.5, 2, 3).astype(np.float32), b=r.standard_normal(3).astype(np.float32)); np.savez('%t/in.npz', x=r.standard_normal((2, 3, 20, 30)).astype(np.float32), idx=np.array([0, -1, 34, 7], np.float32)); np.savez('%t/bad.npz', x=np.zeros((2, 3, 20, 30), np.float32), idx=np.array([0, 35, 1, 2], np.float32))"
// RUN: tpuc-opt %t/m.mlir --processor-assign="chip=tiny mode=F32" --convert-top-to-tpu -o %t/tpu.mlir
// RUN: tpuc-opt %t/tpu.mlir --address-assign --layer-group --codegen="model_file=%t/m.bmodel embed_debug_info=true" -o %t/final.mlir
// RUN: filecheck %s --check-prefix=FINAL < %t/final.mlir
// RUN: model_runner --input %t/in.npz --model %t/tpu.mlir --output %t/tpu_out.npz
// RUN: model_runner --input %t/in.npz --model %t/m.bmodel --output %t/bmodel_out.npz
// RUN: npz_tool compare %t/bmodel_out.npz %t/tpu_out.npz --tolerance 0.999999,0.999999 -v | filecheck %s --check-prefix=SAME
// RUN: model_tool --timeline %t/m.bmodel -o %t/m.svg && filecheck %s --check-prefix=SVG < %t/m.svg
// Where they must not run: an index outside the axis stops the cmodel naming it; an Active mode
// with coeffs it does not take is an error naming them.
// RUN: not model_runner --input %t/bad.npz --model %t/m.bmodel --output %t/bad_out.npz 2>&1 | filecheck %s --check-prefix=BAD
// RUN: sed 's/coeffs = \[[^]]*\]/coeffs = [3.000000e-01]/' %t/tpu.mlir > %t/coeffs.mlir
// RUN: not tpuc-opt %t/coeffs.mlir --address-assign --layer-group --codegen="model_file=%t/coeffs.bmodel" 2>&1 | filecheck %s --check-prefix=COEFFS

// FINAL: "tpu.Scale"{{.*}}hsecs = [[#]]
// FINAL: "tpu.Active"{{.*}}mode = #tpu<active_mode HSIGMOID>
// FINAL: "tpu.Clip"
// FINAL: "tpu.Pad"{{.*}}mode = #tpu<Pad_Mode reflect>
// FINAL: "tpu.RMSNorm"
// FINAL: "tpu.Div"
// FINAL: "tpu.Gather"
// SAME: y {{.*}} {{EQUAL|CLOSE|SIMILAR}}
// SAME: npz compare PASSED.
// SVG-DAG: scale: instruction {{[0-9]+}} BdcScale
// SVG-DAG: hsig: instruction {{[0-9]+}} BdcActiveX
// SVG-DAG: clip: instruction {{[0-9]+}} BdcConstX
// SVG-DAG: div: instruction {{[0-9]+}} BdcBinaryX
// SVG-DAG: pad: instruction {{[0-9]+}} BdcPadReflect
// SVG-DAG: rms: instruction {{[0-9]+}} BdcRMSNorm
// SVG-DAG: y: instruction {{[0-9]+}} GdmaGather
// BAD: error: cmodel: gdma: gather: index 35 is outside [-35, 35) at instruction {{[0-9]+}} (y)
// COEFFS: error: backend: 'tpu.Active' op "hsig": mode HSIGMOID with coeffs=[0.3] is not modelled
module attributes {module.chip = "ALL", module.name = "fillins", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "w.npz"} {
  func.func @main(%arg0: tensor<2x3x20x30xf32>, %arg1: tensor<4xf32>) -> tensor<2x3x23x4xf32> {
    %x = "top.Input"(%arg0) : (tensor<2x3x20x30xf32>) -> tensor<2x3x20x30xf32> loc("x")
    %i = "top.Input"(%arg1) : (tensor<4xf32>) -> tensor<4xf32> loc("idx")
    %sc = "top.Weight"() : () -> tensor<3xf32> loc("sc")
    %b = "top.Weight"() : () -> tensor<3xf32> loc("b")
    %s = "top.Scale"(%x, %sc, %b) : (tensor<2x3x20x30xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x20x30xf32> loc("scale")
    %h = "top.HardSigmoid"(%s) {alpha = 0.3 : f64, beta = 0.4 : f64} : (tensor<2x3x20x30xf32>) -> tensor<2x3x20x30xf32> loc("hsig")
    %c = "top.Clip"(%h) {min = 0.1 : f64, max = 0.9 : f64} : (tensor<2x3x20x30xf32>) -> tensor<2x3x20x30xf32> loc("clip")
    %a = "top.Pad"(%c) {mode = "reflect", paddings = [0, 0, 2, 3, 0, 0, 1, 2]} : (tensor<2x3x20x30xf32>) -> tensor<2x3x23x35xf32> loc("pad")
    %n = "top.None"() : () -> none loc("none")
    %r = "top.RMSNorm"(%a, %n) {eps = 1.000000e-05 : f64} : (tensor<2x3x23x35xf32>, none) -> tensor<2x3x23x35xf32> loc("rms")
    %d = "top.Div"(%r, %a) : (tensor<2x3x23x35xf32>, tensor<2x3x23x35xf32>) -> tensor<2x3x23x35xf32> loc("div")
    %y = "top.Gather"(%d, %i) {axis = 3 : i64} : (tensor<2x3x23x35xf32>, tensor<4xf32>) -> tensor<2x3x23x4xf32> loc("y")
    return %y : tensor<2x3x23x4xf32>
  }
}

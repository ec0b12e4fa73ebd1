// Issue 11's third round through tpuc-opt on the tiny chip: MaxPoolWithMask (BdcPoolMask, sliced
// along N, its mask stored from every slice), LRN (BdcLRN), GatherElements, ScatterND and GatherND
// with batch_dims (one global record each, indices read at run time, negative ones among them)
// and Einsum (strided loads around a BdcMatMul). The .bmodel on the cmodel matches the Tpu
// interpreter, the mask exactly; the SVG timeline names each op's records.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; r = np.random.default_rng(0); np.savez('%t/in.npz', x=r.standard_normal((2, 4, 120, 16)).astype(np.float32), gi=r.integers(-8, 8, (2, 4, 60, 3)).astype(np.float32), si=np.array([[0, 1], [1, -1], [0, 1]], np.float32), su=r.standard_normal((3, 60, 3)).astype(np.float32), ni=r.integers(-60, 60, (2, 4, 1)).astype(np.float32))"
// RUN: tpuc-opt %t/m.mlir --processor-assign="chip=tiny mode=F32" --convert-top-to-tpu -o %t/tpu.mlir
// RUN: tpuc-opt %t/tpu.mlir --address-assign --layer-group --codegen="model_file=%t/m.bmodel embed_debug_info=true" -o %t/final.mlir
// RUN: filecheck %s --check-prefix=FINAL < %t/final.mlir
// RUN: model_runner --input %t/in.npz --model %t/tpu.mlir --output %t/tpu_out.npz
// RUN: model_runner --input %t/in.npz --model %t/m.bmodel --output %t/bmodel_out.npz
// RUN: npz_tool compare %t/bmodel_out.npz %t/tpu_out.npz --tolerance 0.999999,0.999999 -v | filecheck %s --check-prefix=SAME
// RUN: model_tool --timeline %t/m.bmodel -o %t/m.svg && filecheck %s --check-prefix=SVG < %t/m.svg
// The ScatterND adding (reduction 1) and multiplying (5): the bmodel's record 79 combines as the Tpu interpreter.
// RUN: sed -e 's/reduction = 0/reduction = 1/' %t/tpu.mlir > %t/add.mlir
// RUN: tpuc-opt %t/add.mlir --address-assign --layer-group --codegen="model_file=%t/add.bmodel" -o %t/add_final.mlir
// RUN: model_runner --input %t/in.npz --model %t/add.mlir --output %t/add_tpu.npz
// RUN: model_runner --input %t/in.npz --model %t/add.bmodel --output %t/add_bmodel.npz
// RUN: npz_tool compare %t/add_bmodel.npz %t/add_tpu.npz --tolerance 0.999999,0.999999 -v | filecheck %s --check-prefix=SAME
// RUN: sed -e 's/reduction = 0/reduction = 5/' %t/tpu.mlir > %t/mul.mlir
// RUN: tpuc-opt %t/mul.mlir --address-assign --layer-group --codegen="model_file=%t/mul.bmodel" -o %t/mul_final.mlir
// RUN: model_runner --input %t/in.npz --model %t/mul.mlir --output %t/mul_tpu.npz
// RUN: model_runner --input %t/in.npz --model %t/mul.bmodel --output %t/mul_bmodel.npz
// RUN: npz_tool compare %t/mul_bmodel.npz %t/mul_tpu.npz --tolerance 0.999999,0.999999 -v | filecheck %s --check-prefix=SAME
// Where they must not run: a reduction code ONNX has not (TPU-MLIR's 2, subtract) and an Einsum
// that sums over one operand are errors naming the attribute and the equation.
// RUN: sed -e 's/reduction = 0/reduction = 2/' %t/tpu.mlir > %t/reduce.mlir
// RUN: not tpuc-opt %t/reduce.mlir --address-assign --layer-group --codegen="model_file=%t/r.bmodel" 2>&1 | filecheck %s --check-prefix=REDUCTION
// RUN: sed -e 's/bchw,bcw->bch/bchw,bcv->bch/' %t/tpu.mlir > %t/einsum.mlir
// RUN: not tpuc-opt %t/einsum.mlir --address-assign --layer-group --codegen="model_file=%t/e.bmodel" 2>&1 | filecheck %s --check-prefix=EINSUM

// FINAL: "tpu.MaxPoolWithMask"{{.*[nh]secs = [2-9]}}
// FINAL: "tpu.LRN"
// FINAL: "tpu.GatherElements"
// SAME: y {{.*}} {{EQUAL|CLOSE|SIMILAR}}
// SAME: mask {{.*}} EQUAL
// SAME: npz compare PASSED.
// SVG-DAG: pool, mask: instruction {{[0-9]+}} BdcPoolMask
// SVG-DAG: lrn: instruction {{[0-9]+}} BdcLRN
// SVG-DAG: ge: instruction {{[0-9]+}} GdmaGatherElements
// SVG-DAG: snd: instruction {{[0-9]+}} GdmaScatterND
// SVG-DAG: gnd: instruction {{[0-9]+}} GdmaGatherND
// SVG-DAG: y: instruction {{[0-9]+}} BdcMatMul
// REDUCTION: reduce.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'tpu.ScatterND' op "snd" attribute 'reduction' = 2 is not supported (supported: 0, 1, 3, 4, 5)
// EINSUM: error: backend: 'tpu.Einsum' op "y": equation 'bchw,bcv->bch' is not modelled (a letter summed over one operand only)
module attributes {module.chip = "ALL", module.name = "gs", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "w.npz"} {
  func.func @main(%arg0: tensor<2x4x120x16xf32>, %arg1: tensor<2x4x60x3xf32>, %arg2: tensor<3x2xf32>, %arg3: tensor<3x60x3xf32>, %arg4: tensor<2x4x1xf32>) -> (tensor<2x4x60xf32>, tensor<2x4x60x8xf32>) {
    %x = "top.Input"(%arg0) : (tensor<2x4x120x16xf32>) -> tensor<2x4x120x16xf32> loc("x")
    %gi = "top.Input"(%arg1) : (tensor<2x4x60x3xf32>) -> tensor<2x4x60x3xf32> loc("gi")
    %si = "top.Input"(%arg2) : (tensor<3x2xf32>) -> tensor<3x2xf32> loc("si")
    %su = "top.Input"(%arg3) : (tensor<3x60x3xf32>) -> tensor<3x60x3xf32> loc("su")
    %ni = "top.Input"(%arg4) : (tensor<2x4x1xf32>) -> tensor<2x4x1xf32> loc("ni")
    %p:2 = "top.MaxPoolWithMask"(%x) {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0]} : (tensor<2x4x120x16xf32>) -> (tensor<2x4x60x8xf32>, tensor<2x4x60x8xf32>) loc(fused["pool", "mask"])
    %l = "top.LRN"(%p#0) {size = 4 : i64, alpha = 1.000000e-01 : f64} : (tensor<2x4x60x8xf32>) -> tensor<2x4x60x8xf32> loc("lrn")
    %g = "top.GatherElements"(%l, %gi) {axis = 3 : i64} : (tensor<2x4x60x8xf32>, tensor<2x4x60x3xf32>) -> tensor<2x4x60x3xf32> loc("ge")
    %s = "top.ScatterND"(%g, %si, %su) {reduction = 0 : i64} : (tensor<2x4x60x3xf32>, tensor<3x2xf32>, tensor<3x60x3xf32>) -> tensor<2x4x60x3xf32> loc("snd")
    %n = "top.GatherND"(%g, %ni) {batch_dims = 2 : i64} : (tensor<2x4x60x3xf32>, tensor<2x4x1xf32>) -> tensor<2x4x3xf32> loc("gnd")
    %y = "top.Einsum"(%s, %n) {mode = "bchw,bcw->bch"} : (tensor<2x4x60x3xf32>, tensor<2x4x3xf32>) -> tensor<2x4x60xf32> loc("y")
    return %y, %p#1 : tensor<2x4x60xf32>, tensor<2x4x60x8xf32>
  }
}

// The INT8 records of opcodes 53-55 through the backend on the tiny chip: a Deconv (stride 2;
// --weight-reorder merges its bias, multipliers and shifts into one [1, oc, 1, 3] int32 weight,
// coeff_merged), a Softmax along C (its int32 exp table a whole tile, BdcSoftmaxQ) and a MatMul
// quantized per output column (--weight-reorder gives it a `multi` operand [1, n, 1, 2] of
// (multiplier, rshift) per column, BdcMatMulQZ); the .bmodel computes on the cmodel exactly what the
// Tpu interpreter computes (npz_tool: EQUAL).
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; r = np.random.default_rng(0); np.savez('%t/m_weight.npz', w=r.standard_normal((2, 3, 3, 3)).astype(np.float32), b=r.standard_normal(3).astype(np.float32), r=r.standard_normal((9, 4)).astype(np.float32)); np.savez('%t/in.npz', x=r.standard_normal((1, 2, 6, 5)).astype(np.float32))"
// RUN: printf '# op_name threshold min max\nx 3.0 -3.0 3.0\ndeconv 6.0 -6.0 6.0\nsoftmax 1.0 0.0 1.0\ny 2.0 -2.0 2.0\n' > %t/table
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%t/table asymmetric=false" --processor-assign="chip=tiny mode=INT8" --convert-top-to-tpu="matmul_perchannel=true" -o %t/tpu.mlir
// RUN: tpuc-opt %t/tpu.mlir --weight-reorder --address-assign --layer-group --codegen="model_file=%t/m.bmodel" -o %t/final.mlir
// RUN: filecheck %s --check-prefix=FINAL < %t/final.mlir
// RUN: tpuc-opt %t/final.mlir --mlir-print-debuginfo | filecheck %s --check-prefix=LOC
// RUN: python -c "import sys; sys.path.insert(0, '%S/../..'); from tpudsl.backend import isa; from tpudsl.backend.bmodel import read_bmodel; print(*sorted({type(r).__name__ for r in isa.decode(read_bmodel('%t/m.bmodel').commands)}))" | filecheck %s --check-prefix=RECORDS
// RUN: model_runner --input %t/in.npz --model %t/tpu.mlir --output %t/tpu_out.npz
// RUN: model_runner --input %t/in.npz --model %t/m.bmodel --output %t/bmodel_out.npz
// RUN: npz_tool compare %t/bmodel_out.npz %t/tpu_out.npz --tolerance 1,1 -v | filecheck %s --check-prefix=SAME
// Where it must not run: a MatMul with one (multiplier, rshift) gets no multi operand and stays
// BdcMatMulQ; an INT8 Deconv whose coefficients are not merged is an error naming it.
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%t/table asymmetric=false" --processor-assign="chip=tiny mode=INT8" --convert-top-to-tpu --weight-reorder --address-assign --layer-group --codegen="model_file=%t/t.bmodel" -o %t/tensor.mlir
// RUN: filecheck %s --check-prefix=TENSOR < %t/tensor.mlir
// RUN: python -c "import sys; sys.path.insert(0, '%S/../..'); from tpudsl.backend import isa; from tpudsl.backend.bmodel import read_bmodel; print(*sorted({type(r).__name__ for r in isa.decode(read_bmodel('%t/t.bmodel').commands)}))" | filecheck %s --check-prefix=TRECORDS
// RUN: not tpuc-opt %t/tpu.mlir --address-assign --layer-group 2>&1 | filecheck %s --check-prefix=NOMERGE

// FINAL: "top.Weight"() : () -> tensor<1x3x1x3xi32, {{[0-9]+}} : i64>
// FINAL: "tpu.Deconv"{{.*}}coeff_merged = true{{.*}}tensor<1x3x1x3xi32
// FINAL: "top.Weight"() : () -> tensor<256xi32
// FINAL: "tpu.Softmax"
// FINAL: "top.Weight"() : () -> tensor<1x4x1x2xi32
// FINAL: "tpu.MatMul"{{.*}}multipliers = [{{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}]
// LOC-DAG: loc("deconv")
// LOC-DAG: loc("deconv_coeff_merged")
// LOC-DAG: loc("softmax")
// LOC-DAG: loc("y_int8_multi")
// RECORDS: BdcDeconvQ BdcMatMulQZ BdcQuantCast BdcSoftmaxQ GdmaLoad GdmaStore
// SAME: y {{.*}} EQUAL
// SAME: npz compare PASSED.
// TENSOR-NOT: _multi
// TENSOR: "tpu.MatMul"{{.*}}multipliers = [{{[0-9]+}}]
// TRECORDS: BdcDeconvQ BdcMatMulQ BdcQuantCast BdcSoftmaxQ GdmaLoad GdmaStore
// NOMERGE: error: backend: 'tpu.Deconv' op "deconv": an INT8 deconv's bias, multipliers and shifts are one merged coefficient; run --weight-reorder first
module attributes {module.chip = "ALL", module.name = "int8_records", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x2x6x5xf32>) -> tensor<1x3x11x4xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x2x6x5xf32>) -> tensor<1x2x6x5xf32> loc("x")
    %w = "top.Weight"() : () -> tensor<2x3x3x3xf32> loc("w")
    %b = "top.Weight"() : () -> tensor<3xf32> loc("b")
    %none = "top.None"() : () -> none loc("none")
    %d = "top.Deconv"(%x, %w, %b) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]} : (tensor<1x2x6x5xf32>, tensor<2x3x3x3xf32>, tensor<3xf32>) -> tensor<1x3x11x9xf32> loc("deconv")
    %s = "top.Softmax"(%d) {axis = 1 : i64} : (tensor<1x3x11x9xf32>) -> tensor<1x3x11x9xf32> loc("softmax")
    %r = "top.Weight"() : () -> tensor<9x4xf32> loc("r")
    %y = "top.MatMul"(%s, %r, %none) : (tensor<1x3x11x9xf32>, tensor<9x4xf32>, none) -> tensor<1x3x11x4xf32> loc("y")
    return %y : tensor<1x3x11x4xf32>
  }
}

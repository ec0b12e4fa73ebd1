// Asymmetric INT8 through the backend on the tiny chip: uint8 ReLU outputs and int8 tensors with zero
// points. The conv (BdcConvQZ), the average pool whose pads are not counted (BdcPoolQZ), the Sub
// and the Add of two int8 tensors with zero points (BdcBinaryQZ), the MulConst, the RequantInt before the max pool and the quantizing casts (BdcRequantZ)
// carry their zero points; the Sigmoid's table holds uint8 (BdcLut). The .bmodel computes on the
// cmodel exactly what the Tpu interpreter computes (npz_tool: EQUAL).
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; r = np.random.default_rng(0); np.savez('%t/m_weight.npz', w=r.standard_normal((3, 2, 3, 3)).astype(np.float32), b=r.standard_normal(3).astype(np.float32)); np.savez('%t/in.npz', x=r.standard_normal((1, 2, 9, 7)).astype(np.float32))"
// RUN: printf '# op_name threshold min max\nx 3.0 -3.0 2.5\nconv 6.0 0.0 6.0\nmax 5.0 0.0 5.0\navg 4.5 0.0 4.5\nsub 3.0 -3.0 1.0\nmc 1.5 -0.5 1.5\nadd 2.5 -2.0 2.5\ny 1.0 0.0 1.0\n' > %t/table
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%t/table asymmetric=true" --processor-assign="chip=tiny mode=INT8" --convert-top-to-tpu="asymmetric=true" -o %t/tpu.mlir
// RUN: filecheck %s --check-prefix=TPU < %t/tpu.mlir
// RUN: tpuc-opt %t/tpu.mlir --weight-reorder --address-assign --layer-group --codegen="model_file=%t/m.bmodel" -o %t/final.mlir
// RUN: tpuc-opt %t/final.mlir --mlir-print-debuginfo | filecheck %s --check-prefix=LOC
// RUN: python -c "import sys; sys.path.insert(0, '%S/../..'); from tpudsl.backend import isa; from tpudsl.backend.bmodel import read_bmodel; print(*sorted({type(r).__name__ for r in isa.decode(read_bmodel('%t/m.bmodel').commands)}))" | filecheck %s --check-prefix=RECORDS
// RUN: model_runner --input %t/in.npz --model %t/tpu.mlir --output %t/tpu_out.npz
// RUN: model_runner --input %t/in.npz --model %t/m.bmodel --output %t/bmodel_out.npz
// RUN: npz_tool compare %t/bmodel_out.npz %t/tpu_out.npz --tolerance 1,1 -v | filecheck %s --check-prefix=SAME
// Where they must not fire: the same model in symmetric INT8 has none of the zero-point records.
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%t/table asymmetric=false" --processor-assign="chip=tiny mode=INT8" --convert-top-to-tpu --weight-reorder --address-assign --layer-group --codegen="model_file=%t/s.bmodel" -o %t/sym.mlir
// RUN: python -c "import sys; sys.path.insert(0, '%S/../..'); from tpudsl.backend import isa; from tpudsl.backend.bmodel import read_bmodel; print(*sorted({type(r).__name__ for r in isa.decode(read_bmodel('%t/s.bmodel').commands)}))" | filecheck %s --check-prefix=SYM

// TPU: "tpu.Conv2D"{{.*}}-> tensor<1x3x9x7x!quant.uniform<u8:f32, {{[0-9.e-]+}}>>
// TPU: "tpu.RequantInt"
// TPU: "tpu.Sub"{{.*}}-> tensor<1x3x5x4x!quant.uniform<i8:f32, {{[0-9.e-]+}}:{{-?[0-9]+}}>>
// LOC-DAG: loc("conv")
// LOC-DAG: loc("avg")
// LOC-DAG: loc("sub")
// LOC-DAG: loc("mc")
// LOC-DAG: loc("add")
// LOC-DAG: loc("y_int8")
// RECORDS: BdcBinaryQZ BdcConvQZ BdcLut BdcPool BdcPoolQZ BdcRequantZ GdmaLoad GdmaStore
// SAME: y {{.*}} EQUAL
// SAME: npz compare PASSED.
// SYM: BdcBinaryQ BdcConstQ BdcConvQ BdcLut BdcPool BdcPoolQ BdcQuantCast BdcRequant GdmaLoad GdmaStore
module attributes {module.chip = "ALL", module.name = "int8_asym", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x2x9x7xf32>) -> tensor<1x3x5x4xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x2x9x7xf32>) -> tensor<1x2x9x7xf32> loc("x")
    %w = "top.Weight"() : () -> tensor<3x2x3x3xf32> loc("w")
    %b = "top.Weight"() : () -> tensor<3xf32> loc("b")
    %c = "top.Conv"(%x, %w, %b) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], do_relu = true} : (tensor<1x2x9x7xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x9x7xf32> loc("conv")
    %m = "top.MaxPool"(%c) {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 1, 1]} : (tensor<1x3x9x7xf32>) -> tensor<1x3x5x4xf32> loc("max")
    %a = "top.AvgPool"(%m) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1]} : (tensor<1x3x5x4xf32>) -> tensor<1x3x5x4xf32> loc("avg")
    %s = "top.Sub"(%a, %m) : (tensor<1x3x5x4xf32>, tensor<1x3x5x4xf32>) -> tensor<1x3x5x4xf32> loc("sub")
    %k = "top.MulConst"(%s) {const_val = -0.5 : f64} : (tensor<1x3x5x4xf32>) -> tensor<1x3x5x4xf32> loc("mc")
    %d = "top.Add"(%k, %s) : (tensor<1x3x5x4xf32>, tensor<1x3x5x4xf32>) -> tensor<1x3x5x4xf32> loc("add")
    %y = "top.Sigmoid"(%d) : (tensor<1x3x5x4xf32>) -> tensor<1x3x5x4xf32> loc("y")
    return %y : tensor<1x3x5x4xf32>
  }
}

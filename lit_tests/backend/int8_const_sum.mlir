// INT8 AddConst and reversed SubConst through the backend on the tiny chip, symmetric and
// asymmetric: each is one BdcConstSumQ (opcode 67: op, reverse, zero points, multiplier, rshift and
// the integer constant C of the lowering's const_val), in one layer group with the casts; the
// .bmodel computes on the cmodel exactly what the Tpu interpreter computes (npz_tool: EQUAL).
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; r = np.random.default_rng(0); np.savez('%t/m_weight.npz', z=np.zeros(1, np.float32)); np.savez('%t/in.npz', x=r.standard_normal((1, 3, 8, 5)).astype(np.float32))"
// RUN: printf '# op_name threshold min max\nx 3.0 -3.0 3.0\nplus 4.0 -2.5 4.0\nminus 5.5 -1.5 5.5\n' > %t/table
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%t/table asymmetric=false" --processor-assign="chip=tiny mode=INT8" --convert-top-to-tpu -o %t/sym.mlir
// RUN: tpuc-opt %t/sym.mlir --weight-reorder --address-assign --layer-group --codegen="model_file=%t/sym.bmodel" -o %t/sym_final.mlir
// RUN: filecheck %s --check-prefix=FINAL < %t/sym_final.mlir
// RUN: tpuc-opt %t/sym_final.mlir --mlir-print-debuginfo | filecheck %s --check-prefix=LOC
// RUN: python -c "import sys; sys.path.insert(0, '%S/../..'); from tpudsl.backend import isa; from tpudsl.backend.bmodel import read_bmodel; rs = isa.decode(read_bmodel('%t/sym.bmodel').commands); print(*sorted({type(r).__name__ for r in rs})); print(*[(r.op, r.reverse, r.in_zp, r.out_zp, r.const) for r in rs if isinstance(r, isa.BdcConstSumQ)])" | filecheck %s --check-prefix=SYMRECORDS
// RUN: model_runner --input %t/in.npz --model %t/sym.mlir --output %t/sym_tpu.npz
// RUN: model_runner --input %t/in.npz --model %t/sym.bmodel --output %t/sym_bmodel.npz
// RUN: npz_tool compare %t/sym_bmodel.npz %t/sym_tpu.npz --tolerance 1,1 -v | filecheck %s --check-prefix=SAME
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%t/table asymmetric=true" --processor-assign="chip=tiny mode=INT8" --convert-top-to-tpu="asymmetric=true" -o %t/asym.mlir
// RUN: tpuc-opt %t/asym.mlir --weight-reorder --address-assign --layer-group --codegen="model_file=%t/asym.bmodel" -o %t/asym_final.mlir
// RUN: python -c "import sys; sys.path.insert(0, '%S/../..'); from tpudsl.backend import isa; from tpudsl.backend.bmodel import read_bmodel; rs = isa.decode(read_bmodel('%t/asym.bmodel').commands); print(*sorted({type(r).__name__ for r in rs})); print(*[(r.op, r.reverse, r.in_zp, r.out_zp) for r in rs if isinstance(r, isa.BdcConstSumQ)])" | filecheck %s --check-prefix=ASYMRECORDS
// RUN: model_runner --input %t/in.npz --model %t/asym.mlir --output %t/asym_tpu.npz
// RUN: model_runner --input %t/in.npz --model %t/asym.bmodel --output %t/asym_bmodel.npz
// RUN: npz_tool compare %t/asym_bmodel.npz %t/asym_tpu.npz --tolerance 1,1 -v | filecheck %s --check-prefix=SAME
// Where it must not run: a const_val that is not an integer (the record holds an int64) is an error
// naming the op and the value.
// RUN: sed 's/const_val = 9.500000e+01/const_val = 9.550000e+01/' %t/sym.mlir > %t/frac.mlir
// RUN: not tpuc-opt %t/frac.mlir --address-assign --layer-group 2>&1 | filecheck %s --check-prefix=FRAC

// FINAL: "tpu.Group"
// FINAL: "tpu.AddConst"{{.*}}const_val = 9.500000e+01
// FINAL: "tpu.SubConst"{{.*}}is_reverse = true
// LOC-DAG: loc("plus")
// LOC-DAG: loc("minus_int8")
// SYMRECORDS: BdcConstSumQ BdcQuantCast GdmaLoad GdmaStore
// SYMRECORDS-NEXT: (0, 0, 0, 0, 95) (1, 1, 0, 0, {{[0-9]+}})
// ASYMRECORDS: BdcConstSumQ BdcRequantZ GdmaLoad GdmaStore
// ASYMRECORDS-NEXT: (0, 0, -1, -30) (1, 1, -30, -73)
// SAME: minus {{.*}} EQUAL
// SAME: npz compare PASSED.
// FRAC: error: backend: 'tpu.AddConst' op "plus": INT8 AddConst needs an integer const_val below 2^53 and 0 <= rshift < 64, has 95.5, 2
module attributes {module.chip = "ALL", module.name = "int8_const_sum", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x3x8x5xf32>) -> tensor<1x3x8x5xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x3x8x5xf32>) -> tensor<1x3x8x5xf32> loc("x")
    %a = "top.AddConst"(%x) {const_val = 0.75 : f64} : (tensor<1x3x8x5xf32>) -> tensor<1x3x8x5xf32> loc("plus")
    %s = "top.SubConst"(%a) {const_val = 2.5 : f64, is_reverse = true} : (tensor<1x3x8x5xf32>) -> tensor<1x3x8x5xf32> loc("minus")
    return %s : tensor<1x3x8x5xf32>
  }
}

// The newer INT8 forms through the backend: Sub (BdcBinaryQ, Sub code), MulConst (BdcConstQ, a
// negative constant) and an average pool whose pads are not counted (BdcPoolQ, per-position
// divisor); the .bmodel computes on the cmodel exactly what the Tpu interpreter computes.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; r = np.random.default_rng(0); np.savez('%t/in.npz', x=r.standard_normal((1, 3, 7, 7)).astype(np.float32))"
// RUN: printf '# op_name threshold min max\nx 3.0 -3.0 3.0\navg 2.0 -2.0 2.0\nmax 3.0 -3.0 3.0\nsub 4.0 -4.0 4.0\ny 3.0 -3.0 3.0\n' > %t/table
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%t/table asymmetric=false" --processor-assign="chip=tiny mode=INT8" --convert-top-to-tpu -o %t/tpu.mlir
// RUN: tpuc-opt %t/tpu.mlir --weight-reorder --address-assign --layer-group --codegen="model_file=%t/m.bmodel" -o %t/final.mlir
// RUN: filecheck %s --check-prefix=TPU < %t/final.mlir
// RUN: model_runner --input %t/in.npz --model %t/tpu.mlir --output %t/tpu_out.npz
// RUN: model_runner --input %t/in.npz --model %t/m.bmodel --output %t/bmodel_out.npz
// RUN: npz_tool compare %t/bmodel_out.npz %t/tpu_out.npz --tolerance 1,1 -v | filecheck %s --check-prefix=SAME
// Where it must not run: a reversed INT8 Sub (made by hand) is an error naming the attribute.
// RUN: sed 's/"tpu.Sub"(\(.*\)) {/"tpu.Sub"(\1) {is_reverse = true, /' %t/tpu.mlir > %t/rev.mlir
// RUN: not tpuc-opt %t/rev.mlir --weight-reorder --address-assign --layer-group --codegen="model_file=%t/rev.bmodel" 2>&1 | filecheck %s --check-prefix=REV

// TPU: "tpu.Pool2D"{{.*}}pads = [1, 1, 1, 1], pool_mode = #tpu<pool_mode Avg>{{.*}}scale = 1.500000e+00
// TPU: "tpu.Sub"
// TPU: "tpu.MulConst"{{.*}}multiplier = -{{[0-9]+}}
// TPU-DAG: loc("avg")
// TPU-DAG: loc("sub")
// TPU-DAG: loc("y")
// SAME: y {{.*}} EQUAL
// SAME: npz compare PASSED.
// REV: error: backend: 'tpu.Sub' op "sub": is_reverse=True is not modelled
module attributes {module.chip = "ALL", module.name = "int8_forms", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "none.npz"} {
  func.func @main(%arg0: tensor<1x3x7x7xf32>) -> tensor<1x3x4x4xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x3x7x7xf32>) -> tensor<1x3x7x7xf32> loc("x")
    %a = "top.AvgPool"(%x) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]} : (tensor<1x3x7x7xf32>) -> tensor<1x3x4x4xf32> loc("avg")
    %m = "top.MaxPool"(%x) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]} : (tensor<1x3x7x7xf32>) -> tensor<1x3x4x4xf32> loc("max")
    %s = "top.Sub"(%a, %m) : (tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> loc("sub")
    %y = "top.MulConst"(%s) {const_val = -0.75 : f64} : (tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32> loc("y")
    return %y : tensor<1x3x4x4xf32>
  }
}

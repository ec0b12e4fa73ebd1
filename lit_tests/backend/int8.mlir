// INT8 through the backend: --weight-reorder merges each INT8 conv's int32 bias, multipliers and
// shifts into one [1, oc, 1, 3] int32 coefficient (coeff_merged, as TPU-MLIR), the int8 filter keeps
// its plain layout; the .bmodel's INT8 records then compute on the cmodel exactly what the Tpu
// interpreter computes (npz_tool: EQUAL, every tensor bit for bit).
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; r = np.random.default_rng(0); np.savez('%t/m_weight.npz', w=r.standard_normal((3, 2, 3, 3)).astype(np.float32), b=r.standard_normal(3).astype(np.float32)); np.savez('%t/in.npz', x=r.standard_normal((1, 2, 6, 6)).astype(np.float32))"
// RUN: printf '# op_name threshold min max\nx 3.0 -3.0 3.0\nconv 6.0 -6.0 6.0\nsig 1.0 0.0 1.0\nmax 1.0 0.0 1.0\navg 0.9 0.0 0.9\ny 2.0 0.0 2.0\n' > %t/table
// RUN: tpuc-opt %t/m.mlir --import-calibration-table="file=%t/table asymmetric=false" --processor-assign="chip=tiny mode=INT8" --convert-top-to-tpu -o %t/tpu.mlir
// RUN: tpuc-opt %t/tpu.mlir --weight-reorder -o %t/merged.mlir
// RUN: filecheck %s --check-prefix=MERGED < %t/merged.mlir
// RUN: tpuc-opt %t/merged.mlir --mlir-print-debuginfo | filecheck %s --check-prefix=LOC
// A second run finds nothing to merge: the module is unchanged.
// RUN: tpuc-opt %t/merged.mlir --weight-reorder -o %t/twice.mlir
// RUN: diff %t/merged.mlir %t/twice.mlir
// RUN: tpuc-opt %t/merged.mlir --address-assign --layer-group --codegen="model_file=%t/m.bmodel" -o %t/final.mlir
// RUN: model_runner --input %t/in.npz --model %t/tpu.mlir --output %t/tpu_out.npz
// RUN: model_runner --input %t/in.npz --model %t/m.bmodel --output %t/bmodel_out.npz
// RUN: npz_tool compare %t/bmodel_out.npz %t/tpu_out.npz --tolerance 1,1 -v | filecheck %s --check-prefix=SAME
// Where it must not run: an INT8 conv whose coefficients are not merged.
// RUN: not tpuc-opt %t/tpu.mlir --address-assign --layer-group 2>&1 | filecheck %s --check-prefix=NOMERGE

// MERGED: "top.Weight"() : () -> tensor<1x3x1x3xi32>
// MERGED: "tpu.Conv2D"(%{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}) {{{.*}}coeff_merged = true{{.*}} : (tensor<1x2x6x6x!quant.uniform<i8:f32, {{.*}}>>, tensor<3x2x3x3x!quant.uniform<i8<-127:127>:f32:0, {{.*}}>>, tensor<1x3x1x3xi32>) -> tensor<1x3x6x6x!quant.uniform<i8:f32, {{.*}}>>
// MERGED-NOT: tensor<3xi32>
// LOC: loc("conv_coeff_merged")
// SAME: y {{.*}} EQUAL
// SAME: npz compare PASSED.
// NOMERGE: error: backend: 'tpu.Conv2D' op "conv": an INT8 conv's bias, multipliers and shifts are one merged coefficient; run --weight-reorder first
module attributes {module.chip = "ALL", module.name = "int8", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x2x6x6xf32>) -> tensor<1x3x3x3xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32> loc("x")
    %w = "top.Weight"() : () -> tensor<3x2x3x3xf32> loc("w")
    %b = "top.Weight"() : () -> tensor<3xf32> loc("b")
    %c = "top.Conv"(%x, %w, %b) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x2x6x6xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x6x6xf32> loc("conv")
    %s = "top.Sigmoid"(%c) : (tensor<1x3x6x6xf32>) -> tensor<1x3x6x6xf32> loc("sig")
    %m = "top.MaxPool"(%s) {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0]} : (tensor<1x3x6x6xf32>) -> tensor<1x3x3x3xf32> loc("max")
    %a = "top.AvgPool"(%s) {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0]} : (tensor<1x3x6x6xf32>) -> tensor<1x3x3x3xf32> loc("avg")
    %y = "top.Add"(%m, %a) : (tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>) -> tensor<1x3x3x3xf32> loc("y")
    return %y : tensor<1x3x3x3xf32>
  }
}

// TPU-MLIR's Top-stage command lines (python/utils/mlir_shell.py, mlir_opt_for_top) run unchanged.
// init and deinit load and save the weight file: TPU-MLIR's tpuc-opt adds them around the passes
// when they are not given, and so does ours, so both lines give the same module.
// RUN: rm -rf %t && mkdir %t && cp %s %t/x_origin.mlir
// RUN: python %S/../rewrites/Inputs/make_weights.py %s %t/x_origin_weight.npz --inputs %t/in.npz
// RUN: tpuc-opt %t/x_origin.mlir --struct-optimize --shape-infer --canonicalize --extra-optimize -o %t/x.mlir
// RUN: filecheck %s < %t/x.mlir
// RUN: tpuc-opt %t/x_origin.mlir --init --shape-infer --canonicalize --extra-optimize --deinit -o %t/y.mlir
// RUN: sed -e s/y_weight/x_weight/ %t/y.mlir > %t/y_renamed.mlir
// RUN: diff %t/x.mlir %t/y_renamed.mlir
// init read the weights (Conv + BatchNorm fused, the Permute of a weight folded), deinit saved the
// changed ones next to the output; the result computes what the original did.
// RUN: model_runner --input %t/in.npz --model %t/x_origin.mlir --output %t/before.npz
// RUN: model_runner --input %t/in.npz --model %t/x.mlir --output %t/after.npz
// RUN: npz_tool compare %t/after.npz %t/before.npz --tolerance 0.99999,0.9999 | filecheck %s --check-prefix=SAME
// deinit must not write a weight file when the passes changed no weight (no_save_weight is then
// no error either), and with no_save_weight=True changed weights are an error: they would be lost.
// RUN: tpuc-opt %t/x.mlir --shape-infer --deinit="no_save_weight=True" -o %t/z.mlir
// RUN: not ls %t/z_weight.npz
// RUN: not tpuc-opt %t/x_origin.mlir --canonicalize --deinit="no_save_weight=True" -o %t/w.mlir 2>&1 | filecheck %s --check-prefix=NOSAVE
// RUN: not ls %t/w.mlir

// CHECK:      module attributes {{{.*}}module.weight_file = "x_weight.npz"}
// CHECK:      %[[X:.*]] = "top.Input"
// CHECK:      %[[C:.*]] = "top.Conv"(%[[X]], %{{.*}}, %{{.*}}) {do_relu = true, {{.*}}} : ({{.*}}, tensor<2x2x1x1xf32>, tensor<2xf32>)
// CHECK-NOT:  "top.BatchNorm"
// CHECK-NOT:  "top.Relu"
// CHECK-NOT:  "top.Permute"
// CHECK:      return %[[C]], %{{.*}} :
// SAME-NOT:   FAILED
// SAME:       PASSED
// NOSAVE:     error: the passes changed the weights read from '{{.*}}x_origin_weight.npz', and deinit no_save_weight=true would lose them

module attributes {module.chip = "ALL", module.name = "x", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "x_origin_weight.npz"} {
  func.func @main(%arg0: tensor<1x2x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<3x3xf32>) {
    %n = "top.None"() : () -> none loc("none")
    %0 = "top.Input"(%arg0) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> loc("x")
    %w = "top.Weight"() : () -> tensor<2x2x1x1xf32> loc("w")
    %m = "top.Weight"() : () -> tensor<2xf32> loc("mean")
    %v = "top.Weight"() : () -> tensor<2xf32> loc("var")
    %1 = "top.Conv"(%0, %w, %n) {kernel_shape = [1, 1]} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, none) -> tensor<*xf32> loc("conv")
    %2 = "top.BatchNorm"(%1, %m, %v, %n, %n) : (tensor<*xf32>, tensor<2xf32>, tensor<2xf32>, none, none) -> tensor<*xf32> loc("bn")
    %3 = "top.Relu"(%2) : (tensor<*xf32>) -> tensor<1x2x3x3xf32> loc("relu")
    %k = "top.Weight"() : () -> tensor<3x3xf32> loc("k")
    %4 = "top.Permute"(%k) {order = [1, 0]} : (tensor<3x3xf32>) -> tensor<3x3xf32> loc("k_T")
    return %3, %4 : tensor<1x2x3x3xf32>, tensor<3x3xf32>
  }
}

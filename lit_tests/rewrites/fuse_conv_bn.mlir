// Conv + BatchNorm and Conv + Scale fold into the Conv when tpuc-opt has the weights: the input names
// a weight npz (written by Inputs/make_weights.py), and the changed weights go to <output stem>_weight.npz.
// RUN: rm -rf %t && mkdir %t && cp %s %t/in.mlir
// RUN: python %S/Inputs/make_weights.py %s %t/fuse_conv_bn_weight.npz --inputs %t/inputs.npz
// RUN: tpuc-opt %t/in.mlir --fuse-conv-bn -o %t/out.mlir
// RUN: filecheck %s < %t/out.mlir
// RUN: tpuc-opt %t/in.mlir --fuse-conv-bn --mlir-print-debuginfo -o %t/loc.mlir
// RUN: filecheck %s --check-prefix=LOC < %t/loc.mlir
// The fused model computes what the original did (the Top interpreter on both).
// RUN: model_runner --input %t/inputs.npz --model %t/in.mlir --output %t/before.npz
// RUN: model_runner --input %t/inputs.npz --model %t/out.mlir --output %t/after.npz
// RUN: npz_tool compare %t/after.npz %t/before.npz --tolerance 0.99999,0.9999 | filecheck %s --check-prefix=SAME
// The output carries locations (its new weights are keyed by them). A second run changes nothing,
// so it writes no new weights and keeps the weight file it names.
// RUN: tpuc-opt %t/out.mlir --fuse-conv-bn --mlir-print-debuginfo -o %t/twice.mlir
// RUN: diff %t/out.mlir %t/twice.mlir
// RUN: not ls %t/twice_weight.npz

// CHECK:      module attributes {{{.*}}module.weight_file = "out_weight.npz"}
// CHECK:      %[[X:.*]] = "top.Input"
// The fused Convs read new weights, with a bias: (x, filter, bias).
// CHECK:      %[[BN:.*]] = "top.Conv"(%[[X]], %{{.*}}, %{{.*}}) {do_relu = false, kernel_shape = [1, 1], {{.*}} : ({{.*}}, tensor<2x2x1x1xf32>, tensor<2xf32>)
// CHECK-NOT:  top.BatchNorm
// CHECK:      %[[SC:.*]] = "top.Conv"(%[[X]], %{{.*}}, %{{.*}}) {do_relu = true, kernel_shape = [1, 1], {{.*}} : ({{.*}}, tensor<2x2x1x1xf32>, tensor<2xf32>)
// CHECK-NOT:  top.Scale
// Must not fire: the Conv feeds something else too.
// CHECK:      %[[SH:.*]] = "top.Conv"
// CHECK-NEXT: "top.BatchNorm"(%[[SH]],
// CHECK:      return %[[BN]], %[[SC]],
// LOC-DAG:    loc("bn_merged_to_weight")
// LOC-DAG:    loc("bn_merged_to_bias")
// LOC-DAG:    = loc("bn")
// LOC-DAG:    = loc("scale")
// SAME:       npz compare PASSED.
module attributes {module.chip = "ALL", module.name = "fuse", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "fuse_conv_bn_weight.npz"} {
  func.func @main(%arg0: tensor<1x2x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
    %n = "top.None"() : () -> none loc("none")
    %0 = "top.Input"(%arg0) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> loc("x")
    %w = "top.Weight"() : () -> tensor<2x2x1x1xf32> loc("w")
    %cb = "top.Weight"() : () -> tensor<2xf32> loc("conv_bias")
    %m = "top.Weight"() : () -> tensor<2xf32> loc("mean")
    %v = "top.Weight"() : () -> tensor<2xf32> loc("var")
    %g = "top.Weight"() : () -> tensor<2xf32> loc("gamma")
    %b = "top.Weight"() : () -> tensor<2xf32> loc("beta")
    %1 = "top.Conv"(%0, %w, %cb) {kernel_shape = [1, 1]} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32> loc("conv")
    %2 = "top.BatchNorm"(%1, %m, %v, %g, %b) {epsilon = 1.0e-05 : f64} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32> loc("bn")
    %s = "top.Weight"() : () -> tensor<1x2x1x1xf32> loc("s")
    %t = "top.Weight"() : () -> tensor<1x2x1x1xf32> loc("t")
    %3 = "top.Conv"(%0, %w, %n) {kernel_shape = [1, 1]} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x3x3xf32> loc("conv2")
    %4 = "top.Scale"(%3, %s, %t) {do_relu = true} : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x3x3xf32> loc("scale")
    %5 = "top.Conv"(%0, %w, %n) {kernel_shape = [1, 1]} : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x3x3xf32> loc("shared")
    %6 = "top.BatchNorm"(%5, %m, %v, %n, %n) : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, none, none) -> tensor<1x2x3x3xf32> loc("bn_shared")
    return %2, %4, %6, %5 : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
  }
}

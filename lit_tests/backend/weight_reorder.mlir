// --weight-reorder gives static tpu.Conv2D filters the backend's layout (docs/bmodel.md):
// [1, oc, ceil(ic/g / P), kh*kw*P], P = 1 in F32 and for depthwise filters, eu_bytes/2 = 32 in F16
// on bm1684x. A filter computed by earlier ops keeps its plain layout. The Tpu interpreter reads
// either layout, so each model computes exactly what it computed before the reorder.
// RUN: rm -rf %t && mkdir %t && cp %s %t/in.mlir
// RUN: python %S/../rewrites/Inputs/make_weights.py %s %t/weight_reorder_weight.npz --inputs %t/inputs.npz
// RUN: tpuc-opt %t/in.mlir --processor-assign="chip=bm1684x mode=F32" --convert-top-to-tpu -o %t/f32.mlir
// RUN: tpuc-opt %t/f32.mlir --weight-reorder -o %t/f32_reordered.mlir
// RUN: filecheck %s --check-prefix=F32 < %t/f32_reordered.mlir
// RUN: tpuc-opt %t/f32_reordered.mlir --weight-reorder --mlir-print-debuginfo | filecheck %s --check-prefix=LOC
// RUN: model_runner --input %t/inputs.npz --model %t/f32.mlir --output %t/f32_before.npz
// RUN: model_runner --input %t/inputs.npz --model %t/f32_reordered.mlir --output %t/f32_after.npz
// RUN: npz_tool compare %t/f32_after.npz %t/f32_before.npz --tolerance 1,1 -v | filecheck %s --check-prefix=SAME
// RUN: tpuc-opt %t/in.mlir --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu -o %t/f16.mlir
// RUN: tpuc-opt %t/f16.mlir --weight-reorder -o %t/f16_reordered.mlir
// RUN: filecheck %s --check-prefix=F16 < %t/f16_reordered.mlir
// RUN: model_runner --input %t/inputs.npz --model %t/f16.mlir --output %t/f16_before.npz
// RUN: model_runner --input %t/inputs.npz --model %t/f16_reordered.mlir --output %t/f16_after.npz
// RUN: npz_tool compare %t/f16_after.npz %t/f16_before.npz --tolerance 1,1 -v | filecheck %s --check-prefix=SAME
// A second run finds nothing to reorder: the module is unchanged.
// RUN: tpuc-opt %t/f16_reordered.mlir --weight-reorder -o %t/twice.mlir
// RUN: diff %t/f16_reordered.mlir %t/twice.mlir

// F32: module attributes {{{.*}}module.mode = "F32"
// In F32, 3x3 over 40 channels: [1, 3, 40, 9], the bytes of the plain filter.
// F32: "tpu.Conv2D"({{.*}}) {{.*}} : (tensor<1x40x5x5xf32>, tensor<1x3x40x9xf32>, tensor<3xf32>) -> tensor<1x3x3x3xf32>
// Depthwise: [1, 40, 1, 9].
// F32: "tpu.Conv2D"({{.*}}) {{.*}}group = 40 : i64{{.*}} : (tensor<1x40x5x5xf32>, tensor<1x40x1x9xf32>, none) -> tensor<1x40x3x3xf32>
// Computed filter (a Relu of a weight): not reordered.
// F32: %[[F:.*]] = "tpu.Relu"
// F32: "tpu.Conv2D"(%{{.*}}, %[[F]], %{{.*}}) {{.*}} : (tensor<1x40x5x5xf32>, tensor<4x40x1x1xf32>, none) -> tensor<1x4x5x5xf32>
// A 1x3 depthwise filter: [1, 40, 1, 3], whose last two dims equal kernel_shape (the shape rule
// must still read it as reordered, with oc = 40).
// F32: "tpu.Conv2D"({{.*}}) {{.*}} : (tensor<1x40x5x5xf32>, tensor<1x40x1x3xf32>, none) -> tensor<1x40x5x3xf32>
// F32-NOT: tensor<3x40x3x3xf32>

// The new weights are named after their Conv; the old ones are gone.
// LOC-DAG: loc("conv_filter_reorderd")
// LOC-DAG: loc("dw_filter_reorderd")
// LOC-NOT: loc("w")

// In F16, 40 input channels in 2 blocks of 32 (zero-padded to 64), 9 positions of 32 channels each.
// F16: "tpu.Conv2D"({{.*}}) {{.*}} : (tensor<1x40x5x5xf16>, tensor<1x3x2x288xf16>, tensor<3xf32>) -> tensor<1x3x3x3xf16>
// F16: "tpu.Conv2D"({{.*}}) {{.*}}group = 40 : i64{{.*}} : (tensor<1x40x5x5xf16>, tensor<1x40x1x9xf16>, none) -> tensor<1x40x3x3xf16>
// F16: "tpu.Conv2D"({{.*}}) {{.*}} : (tensor<1x40x5x5xf16>, tensor<4x40x1x1xf16>, none) -> tensor<1x4x5x5xf16>
// F16: "tpu.Conv2D"({{.*}}) {{.*}} : (tensor<1x40x5x5xf16>, tensor<1x40x1x3xf16>, none) -> tensor<1x40x5x3xf16>

// SAME-NOT: SIMILAR
// SAME-NOT: CLOSE
// SAME: npz compare PASSED.
module attributes {module.chip = "ALL", module.name = "reorder", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "weight_reorder_weight.npz"} {
  func.func @main(%arg0: tensor<1x40x5x5xf32>) -> (tensor<1x3x3x3xf32>, tensor<1x40x3x3xf32>, tensor<1x4x5x5xf32>, tensor<1x40x5x3xf32>) {
    %n = "top.None"() : () -> none loc("none")
    %x = "top.Input"(%arg0) : (tensor<1x40x5x5xf32>) -> tensor<1x40x5x5xf32> loc("x")
    %w = "top.Weight"() : () -> tensor<3x40x3x3xf32> loc("w")
    %b = "top.Weight"() : () -> tensor<3xf32> loc("b")
    %dw = "top.Weight"() : () -> tensor<40x1x3x3xf32> loc("dw_w")
    %wd = "top.Weight"() : () -> tensor<4x40x1x1xf32> loc("wd")
    %row = "top.Weight"() : () -> tensor<40x1x1x3xf32> loc("row_w")
    %0 = "top.Conv"(%x, %w, %b) {kernel_shape = [3, 3]} : (tensor<1x40x5x5xf32>, tensor<3x40x3x3xf32>, tensor<3xf32>) -> tensor<1x3x3x3xf32> loc("conv")
    %1 = "top.Conv"(%x, %dw, %n) {kernel_shape = [3, 3], group = 40 : i64} : (tensor<1x40x5x5xf32>, tensor<40x1x3x3xf32>, none) -> tensor<1x40x3x3xf32> loc("dw")
    %f = "top.Relu"(%wd) : (tensor<4x40x1x1xf32>) -> tensor<4x40x1x1xf32> loc("computed_filter")
    %2 = "top.Conv"(%x, %f, %n) {kernel_shape = [1, 1]} : (tensor<1x40x5x5xf32>, tensor<4x40x1x1xf32>, none) -> tensor<1x4x5x5xf32> loc("dyn")
    %3 = "top.Conv"(%x, %row, %n) {kernel_shape = [1, 3], group = 40 : i64} : (tensor<1x40x5x5xf32>, tensor<40x1x1x3xf32>, none) -> tensor<1x40x5x3xf32> loc("row")
    return %0, %1, %2, %3 : tensor<1x3x3x3xf32>, tensor<1x40x3x3xf32>, tensor<1x4x5x5xf32>, tensor<1x40x5x3xf32>
  }
}

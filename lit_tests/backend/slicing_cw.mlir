// Slicing along C and W (docs/backend.md, "Groups of one"): on the tiny chip (4 lanes x 16 KiB)
// an op that no N x H split makes fit is cut along C (parts of whole lanes) and then W, where its
// kind allows: a Relu and a depthwise conv of one row and 4096 columns (C and W), a conv of
// group 2 on the same rows (not C: only W), a conv whose filter (48 x 64 x 3 x 3) needs 27 KiB
// per lane (C: the filter loaded per part; 3 parts of 16 channels, 9 KiB, since the bank rule puts the output at the next bank), a MatMul by a 512 x 64 weight (32 KiB per
// lane: C, its output columns, the weight's columns loaded per part). A Relu that fits gets neither attribute. The .bmodel
// on the cmodel matches the Tpu interpreter.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; r = np.random.default_rng(0); np.savez('%t/w.npz', dw=r.standard_normal((8, 1, 1, 3)).astype(np.float32), gw=r.standard_normal((8, 4, 1, 3)).astype(np.float32), bw=r.standard_normal((48, 64, 3, 3)).astype(np.float32), bb=r.standard_normal(48).astype(np.float32), fw=r.standard_normal((512, 64)).astype(np.float32)); np.savez('%t/in.npz', x=r.standard_normal((1, 8, 1, 4096)).astype(np.float32), b=r.standard_normal((1, 64, 4, 4)).astype(np.float32), f=r.standard_normal((4, 512)).astype(np.float32))"
// RUN: tpuc-opt %t/m.mlir --processor-assign="chip=tiny mode=F32" --convert-top-to-tpu -o %t/tpu.mlir
// RUN: tpuc-opt %t/tpu.mlir --address-assign --layer-group="opt=1" --codegen="model_file=%t/m.bmodel embed_debug_info=true" -o %t/final.mlir
// RUN: filecheck %s --check-prefix=FINAL < %t/final.mlir
// RUN: model_runner --input %t/in.npz --model %t/tpu.mlir --output %t/tpu_out.npz
// RUN: model_runner --input %t/in.npz --model %t/m.bmodel --output %t/bmodel_out.npz
// RUN: npz_tool compare %t/bmodel_out.npz %t/tpu_out.npz --tolerance 0.999999,0.999999 -v | filecheck %s --check-prefix=SAME
// opt=2 makes the Relu and the two convs one group cut along W (lit_tests/backend/layer_group_cw.mlir:
// the ops lose their own csecs/wsecs); the other ops stay alone with the same slices.
// RUN: tpuc-opt %t/tpu.mlir --address-assign --layer-group -o - | filecheck %s --check-prefix=GROUP
// GROUP: "tpu.Group"
// GROUP-NOT: csecs
// GROUP: "tpu.Relu"
// GROUP-NOT: csecs
// GROUP: "tpu.Conv2D"{{.*}}group = 8 : i64
// GROUP-NOT: csecs
// GROUP: "tpu.Conv2D"{{.*}}group = 2 : i64
// GROUP-NOT: csecs
// GROUP: }) {flow = [{{.*}}], hsecs = 1 : i64, lmem_bytes = {{[0-9]+}} : i64, nsecs = 1 : i64, wsecs = 9 : i64}
// GROUP-NEXT: "tpu.Conv2D"({{.*}}) {csecs = 3 : i64, hsecs = 1 : i64, {{.*}}nsecs = 1 : i64, {{.*}}with_bias = true}
// GROUP-NEXT: "tpu.Relu"({{.*}}) {hsecs = 1 : i64, lmem_bytes = 5120 : i64, nsecs = 1 : i64}
// GROUP: "tpu.MatMul"({{.*}}) {csecs = 4 : i64, hsecs = 1 : i64, lmem_bytes = 12416 : i64, nsecs = 2 : i64}

// FINAL: "tpu.Relu"({{.*}}) {csecs = 2 : i64, hsecs = 1 : i64, lmem_bytes = 16384 : i64, nsecs = 1 : i64, wsecs = 2 : i64}
// FINAL-NEXT: "tpu.Conv2D"({{.*}}) {csecs = 2 : i64, group = 8 : i64, hsecs = 1 : i64, {{.*}}nsecs = 1 : i64, {{.*}}wsecs = 3 : i64}
// FINAL-NEXT: "tpu.Conv2D"({{.*}}) {group = 2 : i64, hsecs = 1 : i64, {{.*}}nsecs = 1 : i64, {{.*}}wsecs = 5 : i64}
// FINAL-NEXT: "tpu.Conv2D"({{.*}}) {csecs = 3 : i64, hsecs = 1 : i64, {{.*}}nsecs = 1 : i64, {{.*}}with_bias = true}
// FINAL-NEXT: "tpu.Relu"({{.*}}) {hsecs = 1 : i64, lmem_bytes = 5120 : i64, nsecs = 1 : i64}
// FINAL: "tpu.MatMul"({{.*}}) {csecs = 4 : i64, hsecs = 1 : i64, lmem_bytes = 12416 : i64, nsecs = 2 : i64}
// SAME: grouped {{.*}} {{EQUAL|CLOSE|SIMILAR}}
// SAME: bigf {{.*}} {{EQUAL|CLOSE|SIMILAR}}
// SAME: small {{.*}} EQUAL
// SAME: fc {{.*}} {{EQUAL|CLOSE|SIMILAR}}
// SAME: npz compare PASSED.
module attributes {module.chip = "ALL", module.name = "cw", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "w.npz"} {
  func.func @main(%arg0: tensor<1x8x1x4096xf32>, %arg1: tensor<1x64x4x4xf32>, %arg2: tensor<4x512xf32>) -> (tensor<1x8x1x4096xf32>, tensor<1x48x4x4xf32>, tensor<1x64x4x4xf32>, tensor<4x64xf32>) {
    %x = "top.Input"(%arg0) : (tensor<1x8x1x4096xf32>) -> tensor<1x8x1x4096xf32> loc("x")
    %b = "top.Input"(%arg1) : (tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32> loc("b")
    %f = "top.Input"(%arg2) : (tensor<4x512xf32>) -> tensor<4x512xf32> loc("f")
    %fw = "top.Weight"() : () -> tensor<512x64xf32> loc("fw")
    %n = "top.None"() : () -> none loc("none")
    %dw = "top.Weight"() : () -> tensor<8x1x1x3xf32> loc("dw")
    %gw = "top.Weight"() : () -> tensor<8x4x1x3xf32> loc("gw")
    %bw = "top.Weight"() : () -> tensor<48x64x3x3xf32> loc("bw")
    %bb = "top.Weight"() : () -> tensor<48xf32> loc("bb")
    %r = "top.Relu"(%x) : (tensor<1x8x1x4096xf32>) -> tensor<1x8x1x4096xf32> loc("row")
    %d = "top.Conv"(%r, %dw, %n) {kernel_shape = [1, 3], pads = [0, 1, 0, 1], group = 8} : (tensor<1x8x1x4096xf32>, tensor<8x1x1x3xf32>, none) -> tensor<1x8x1x4096xf32> loc("dw")
    %g = "top.Conv"(%d, %gw, %n) {kernel_shape = [1, 3], pads = [0, 1, 0, 1], group = 2} : (tensor<1x8x1x4096xf32>, tensor<8x4x1x3xf32>, none) -> tensor<1x8x1x4096xf32> loc("grouped")
    %c = "top.Conv"(%b, %bw, %bb) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x64x4x4xf32>, tensor<48x64x3x3xf32>, tensor<48xf32>) -> tensor<1x48x4x4xf32> loc("bigf")
    %s = "top.Relu"(%b) : (tensor<1x64x4x4xf32>) -> tensor<1x64x4x4xf32> loc("small")
    %fc = "top.MatMul"(%f, %fw, %n) : (tensor<4x512xf32>, tensor<512x64xf32>, none) -> tensor<4x64xf32> loc("fc")
    return %g, %c, %s, %fc : tensor<1x8x1x4096xf32>, tensor<1x48x4x4xf32>, tensor<1x64x4x4xf32>, tensor<4x64xf32>
  }
}

// --weight-deduplicate (TPU-MLIR's, before --address-assign): identical weights (type, attributes
// and bytes) become one top.Weight, the first keeping its name; a weight that differs stays. Run
// where TPU-MLIR runs it (after --layer-group) and before the groups, the .bmodel computes what the
// Tpu interpreter computes on the module before the pass, with fewer coefficient bytes.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; r = np.random.default_rng(0); w = r.standard_normal((4, 4, 3, 3)).astype(np.float32); b = r.standard_normal(4).astype(np.float32); np.savez('%t/m_weight.npz', wa=w, ba=b, wb=w.copy(), bb=b.copy(), wc=w.copy(), bc=b + 1); np.savez('%t/in.npz', x=r.standard_normal((1, 4, 8, 8)).astype(np.float32))"
// RUN: cd %t && tpuc-opt m.mlir --processor-assign="chip=bm1684x mode=F32" --convert-top-to-tpu -o tpu.mlir
// RUN: cd %t && tpuc-opt tpu.mlir --weight-reorder --weight-deduplicate -o dedup.mlir
// RUN: filecheck %s < %t/dedup.mlir
// RUN: filecheck %s --check-prefix=GONE < %t/dedup.mlir
// RUN: model_runner --input %t/in.npz --model %t/tpu.mlir --output %t/tpu_out.npz
// RUN: model_runner --input %t/in.npz --model %t/dedup.mlir --output %t/dedup_out.npz
// RUN: npz_tool compare %t/dedup_out.npz %t/tpu_out.npz --tolerance 1,1 -v | filecheck %s --check-prefix=EXACT
// RUN: cd %t && tpuc-opt dedup.mlir --layer-group --address-assign --codegen="model_file=before_lg.bmodel" -o /dev/null
// RUN: cd %t && tpuc-opt tpu.mlir --weight-reorder --layer-group --weight-deduplicate --address-assign --codegen="model_file=after_lg.bmodel" -o after_lg.mlir
// RUN: cd %t && tpuc-opt tpu.mlir --weight-reorder --layer-group --address-assign --codegen="model_file=plain.bmodel" -o plain.mlir
// RUN: filecheck %s --check-prefix=SIZE < %t/after_lg.mlir
// RUN: filecheck %s --check-prefix=SIZE-PLAIN < %t/plain.mlir
// RUN: model_runner --input %t/in.npz --model %t/before_lg.bmodel --output %t/before_lg_out.npz
// RUN: model_runner --input %t/in.npz --model %t/after_lg.bmodel --output %t/after_lg_out.npz
// RUN: npz_tool compare %t/before_lg_out.npz %t/tpu_out.npz --tolerance 0.9999,0.999 | filecheck %s --check-prefix=SAME
// RUN: npz_tool compare %t/after_lg_out.npz %t/tpu_out.npz --tolerance 0.9999,0.999 | filecheck %s --check-prefix=SAME
// model_deploy --weight_deduplicate (TPU-MLIR's flag) runs it too; its third check compares the bmodel
// with the Tpu interpreter.
// RUN: mkdir %t/d && model_deploy --mlir %t/m.mlir --quantize F32 --processor bm1684x --model %t/d/m.bmodel --test_input %t/in.npz --tolerance 0.99,0.99 --weight_deduplicate
// RUN: filecheck %s --check-prefix=SIZE < %t/d/m_bm1684x_f32_final.mlir

// conv b's filter and bias are a's; conv c's filter is a's too, its bias differs and stays.
// CHECK-COUNT-3: "top.Weight"
// CHECK-NOT:     "top.Weight"
// CHECK:         "tpu.Conv2D"(%{{[0-9]+}}, %[[W:[0-9]+]], %[[B:[0-9]+]]) {{.*}}loc(#[[LA:loc[0-9]*]])
// CHECK-NEXT:    "tpu.Conv2D"(%{{[0-9]+}}, %[[W]], %[[B]]) {{.*}}loc(#[[LB:loc[0-9]*]])
// CHECK-NEXT:    "tpu.Conv2D"(%{{[0-9]+}}, %[[W]], %[[BC:[0-9]+]]) {{.*}}loc(#[[LC:loc[0-9]*]])
// CHECK-DAG:     loc("a_filter_reorderd")
// CHECK-DAG:     loc("ba")
// CHECK-DAG:     loc("bc")
// CHECK-DAG:     #[[LA]] = loc("a")
// CHECK-DAG:     #[[LB]] = loc("b")
// CHECK-DAG:     #[[LC]] = loc("c")
// GONE-NOT:      loc("b_filter
// GONE-NOT:      loc("bb")
// GONE-NOT:      loc("c_filter
// Coefficients are 512-byte aligned on bm1684x: a 4x4x3x3 f32 filter (576 bytes) takes 1024, a
// bias (16 bytes) 512; three of each are 4608 bytes, one filter and two biases 2048.
// EXACT:      c {{.*}}EQUAL
// EXACT:      npz compare PASSED.
// SAME-NOT:   FAILED
// SAME:       npz compare PASSED.
// SIZE:       module.coeff_size = 2048 : i64
// SIZE-PLAIN: module.coeff_size = 4608 : i64

module attributes {module.chip = "ALL", module.name = "m", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("x")
    %wa = "top.Weight"() : () -> tensor<4x4x3x3xf32> loc("wa")
    %ba = "top.Weight"() : () -> tensor<4xf32> loc("ba")
    %wb = "top.Weight"() : () -> tensor<4x4x3x3xf32> loc("wb")
    %bb = "top.Weight"() : () -> tensor<4xf32> loc("bb")
    %wc = "top.Weight"() : () -> tensor<4x4x3x3xf32> loc("wc")
    %bc = "top.Weight"() : () -> tensor<4xf32> loc("bc")
    %a = "top.Conv"(%x, %wa, %ba) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], do_relu = true} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32> loc("a")
    %b = "top.Conv"(%a, %wb, %bb) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], do_relu = true} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32> loc("b")
    %c = "top.Conv"(%b, %wc, %bc) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32> loc("c")
    return %c : tensor<1x4x8x8xf32>
  }
}

// Two groups in a row: the first stores two results (a fused loc names them), the second's first
// filter is prefetched during the first (other_up_overlap_op). Five 3x3 convs of 8 channels (two
// channel groups per lane on tiny) on 48 x 16, a and e returned; no tensor is read twice, so no
// load is shared (plan._shared_loads) and the grouping rests on local memory and halo rows alone.
// Group 1, (a, b), hsecs = 2, stores a (returned) and b (read by c): filters [0, 1152), x's two
// buffers of 26 rows [1152, 7808), a at 8192 (bank 2), b at 12288 (bank 3), ending at 15360.
// Group 2, (c, d, e), hsecs = 2, comes right after it and its first filter (576 bytes a lane)
// fits in a gap of group 1's local memory: the highest, 16384 - 576 = 15808; its Load (id 0) is
// listed in other_up_overlap_op, and codegen issues it right after group 1's first BDC record. The
// bmodel on the cmodel matches the Tpu interpreter (F32: within rounding).
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; r = np.random.default_rng(0); np.savez('%t/w.npz', **{f'w{i}': r.standard_normal((8, 8, 3, 3)).astype(np.float32) for i in range(5)}); np.savez('%t/in.npz', x=r.standard_normal((1, 8, 48, 16)).astype(np.float32))"
// RUN: tpuc-opt %t/m.mlir --processor-assign="chip=tiny mode=F32" --convert-top-to-tpu -o %t/tpu.mlir
// RUN: tpuc-opt %t/tpu.mlir --address-assign --layer-group --codegen="model_file=%t/m.bmodel embed_debug_info=true" --mlir-print-debuginfo -o %t/final.mlir
// RUN: filecheck %s < %t/final.mlir
// RUN: tpuc-opt %t/final.mlir --mlir-print-debuginfo | filecheck %s
// RUN: model_runner --input %t/in.npz --model %t/tpu.mlir --output %t/tpu_out.npz
// RUN: model_runner --input %t/in.npz --model %t/m.bmodel --output %t/bmodel_out.npz
// RUN: npz_tool compare %t/bmodel_out.npz %t/tpu_out.npz --tolerance 0.999999,0.999999 -v | filecheck %s --check-prefix=SAME
// RUN: model_tool --info %t/m.bmodel | filecheck %s --check-prefix=INFO
// Without weight prefetch the second group loads its filter itself.
// RUN: tpuc-opt %t/tpu.mlir --address-assign --layer-group="prefetch=false" | filecheck %s --check-prefix=NOPF

// CHECK: %[[G:[0-9]+]]:2 = "tpu.Group"
// CHECK: %[[A:[0-9]+]] = "tpu.Conv2D"{{.*}}ginfo = #tpu.lg<out_addr = 8192, {{.*}} h_idx = [0, 23], h_slice = [25, 25],{{.*}} loc([[LA:#loc[0-9]+]])
// CHECK-NEXT: %[[SA:[0-9]+]] = "tpu.Store"(%[[A]]){{.*}} loc([[LA]])
// CHECK: %[[B:[0-9]+]] = "tpu.Conv2D"{{.*}}ginfo = #tpu.lg<out_addr = 12288, {{.*}} loc([[LB:#loc[0-9]+]])
// CHECK-NEXT: %[[SB:[0-9]+]] = "tpu.Store"(%[[B]]){{.*}} loc([[LB]])
// CHECK-NEXT: "tpu.Yield"(%[[SA]], %[[SB]]){{.*}} loc([[LAB:#loc[0-9]+]])
// CHECK-NEXT: }) {flow = [-1, 0, 1, 2, 3, -2, 4, 5, 6], hsecs = 2 : i64, lmem_bytes = 15360 : i64, nsecs = 1 : i64}{{.*}} loc([[LAB]])
// CHECK-NEXT: %[[G2:[0-9]+]] = "tpu.Group"(%[[W2:[0-9]+]], %[[G]]#1, %{{[0-9]+}}, %{{[0-9]+}}) ({
// CHECK-NEXT: "tpu.Load"(%[[W2]]) {ginfo = #tpu.lg<out_addr = 15808, out_size = 576, {{.*}} id = 0, {{.*}}>}
// CHECK: }) {flow = [-1, 0, 1, 2, -2, 3, 4, -3, 5, 6, 7], hsecs = 2 : i64, lmem_bytes = 16384 : i64, nsecs = 1 : i64, other_up_overlap_op = [0]}
// CHECK-NEXT: return %[[G]]#0, %[[G2]]
// CHECK-DAG: [[LA]] = loc("a")
// CHECK-DAG: [[LB]] = loc("b")
// CHECK-DAG: [[LAB]] = loc(fused[[[LA]], [[LB]]])
// SAME: a {{.*}} {{EQUAL|CLOSE|SIMILAR}}
// SAME: e {{.*}} {{EQUAL|CLOSE|SIMILAR}}
// SAME: npz compare PASSED.
// INFO: layer group 0: a, b (1x2 slices)
// INFO: layer group 1: c, d, e (1x2 slices)
// NOPF: "tpu.Group"
// NOPF-NOT: other_up_overlap_op
module attributes {module.chip = "ALL", module.name = "gpf", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "w.npz"} {
  func.func @main(%arg0: tensor<1x8x48x16xf32>) -> (tensor<1x8x48x16xf32>, tensor<1x8x48x16xf32>) {
    %x = "top.Input"(%arg0) : (tensor<1x8x48x16xf32>) -> tensor<1x8x48x16xf32> loc("x")
    %w0 = "top.Weight"() : () -> tensor<8x8x3x3xf32> loc("w0")
    %w1 = "top.Weight"() : () -> tensor<8x8x3x3xf32> loc("w1")
    %w2 = "top.Weight"() : () -> tensor<8x8x3x3xf32> loc("w2")
    %w3 = "top.Weight"() : () -> tensor<8x8x3x3xf32> loc("w3")
    %w4 = "top.Weight"() : () -> tensor<8x8x3x3xf32> loc("w4")
    %n = "top.None"() : () -> none loc("none")
    %a = "top.Conv"(%x, %w0, %n) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x8x48x16xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x48x16xf32> loc("a")
    %b = "top.Conv"(%a, %w1, %n) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x8x48x16xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x48x16xf32> loc("b")
    %c = "top.Conv"(%b, %w2, %n) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x8x48x16xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x48x16xf32> loc("c")
    %d = "top.Conv"(%c, %w3, %n) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x8x48x16xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x48x16xf32> loc("d")
    %e = "top.Conv"(%d, %w4, %n) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x8x48x16xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x48x16xf32> loc("e")
    return %a, %e : tensor<1x8x48x16xf32>, tensor<1x8x48x16xf32>
  }
}

// --trunc-layer="cutLocs=..." (TPU-MLIR's TruncLayer) cuts a layer-grouped Tpu module down to the
// named layers. The model: conv a alone (returned), a group (b, c), a group (d, e) of two H slices
// whose first filter is prefetched during (b, c), then e -> Reshape r -> Sigmoid f (returned).
// The final module is made in TPU-MLIR's order (--layer-group, then --address-assign).
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; r = np.random.default_rng(0); np.savez('%t/w.npz', **{f'w{i}': r.standard_normal((8, 8, 3, 3)).astype(np.float32) for i in range(5)}); np.savez('%t/in.npz', x=r.standard_normal((1, 8, 48, 16)).astype(np.float32))"
// RUN: cd %t && tpuc-opt m.mlir --processor-assign="chip=tiny mode=F32" --convert-top-to-tpu -o tpu.mlir
// RUN: cd %t && tpuc-opt tpu.mlir --layer-group --address-assign -o final.mlir
// RUN: filecheck %s --check-prefix=FULL < %t/final.mlir
// FULL: "tpu.Group"
// FULL: "tpu.Group"
// FULL: hsecs = 2 : i64, {{.*}}other_up_overlap_op = [0]}
//
// A plain op: f keeps the Reshape it reads; the Reshape's operand, e (a group's result), becomes the
// input, named e. Nothing else stays; the addresses are gone (--address-assign follows).
// RUN: cd %t && tpuc-opt final.mlir --trunc-layer="cutLocs=f" -o plain.mlir
// RUN: filecheck %s --check-prefix=PLAIN < %t/plain.mlir
// PLAIN:      module.state = "TPU_LOWERED"
// PLAIN-NOT:  module.coeff_addr
// PLAIN:      func.func @main(%arg0: tensor<1x8x48x16xf32> {{.*}}) -> tensor<1x8x768xf32> {
// PLAIN-NEXT: %[[E:[0-9]+]] = "top.Input"(%arg0) : (tensor<1x8x48x16xf32>) -> tensor<1x8x48x16xf32> loc([[LE:#loc[0-9]+]])
// PLAIN-NEXT: %[[R:[0-9]+]] = "tpu.Reshape"(%[[E]]) {{.*}} loc([[LR:#loc[0-9]+]])
// PLAIN-NEXT: %[[F:[0-9]+]] = "tpu.Active"(%[[R]]) {{.*}} loc([[LF:#loc[0-9]+]])
// PLAIN-NEXT: return %[[F]] : tensor<1x8x768xf32>
// PLAIN-DAG:  [[LE]] = loc("e")
// PLAIN-DAG:  [[LR]] = loc("r")
// PLAIN-DAG:  [[LF]] = loc("f")
//
// An op in a group: d keeps its group (d, e) whole, which reads c (now the input) and gives e (read
// by r, which is not kept: the output). The group was prefetched during (b, c), which the cut drops:
// it is built again loading its first filter itself. Only w3 and w4 stay.
// RUN: cd %t && tpuc-opt final.mlir --trunc-layer="cutLocs=d" --address-assign -o group.mlir
// RUN: filecheck %s --check-prefix=GROUP < %t/group.mlir
// RUN: filecheck %s --check-prefix=GONE < %t/group.mlir
// GROUP:      module.state = "TPU_ADDRESSED"
// GROUP:      %[[C:[0-9]+]] = "top.Input"(%arg0) {{.*}} loc([[LC:#loc[0-9]+]])
// GROUP:      %[[G:[0-9]+]] = "tpu.Group"({{.*}}%[[C]]
// GROUP:      "tpu.Conv2D"{{.*}} loc([[LD:#loc[0-9]+]])
// GROUP:      "tpu.Conv2D"{{.*}} loc([[LE:#loc[0-9]+]])
// GROUP:      }) {flow = [-1, 0, 1, 2, -2, 3, 4, 5], hsecs = 2 : i64, lmem_bytes = 15360 : i64, nsecs = 1 : i64}
// GROUP-NEXT: return %[[G]] : tensor<1x8x48x16xf32, {{[0-9]+}} : i64>
// GROUP-DAG:  [[LC]] = loc("c")
// GROUP-DAG:  [[LD]] = loc("d")
// GROUP-DAG:  [[LE]] = loc("e")
// GONE-NOT:   other_up_overlap_op
// GONE-NOT:   loc("w0")
// GONE-NOT:   loc("w2")
// GONE-NOT:   loc("a")
// GONE-NOT:   loc("b")
// GONE-NOT:   loc("r")
//
// Both: e is read by r, which is kept now, so f is the one output.
// RUN: cd %t && tpuc-opt final.mlir --trunc-layer="cutLocs=f,d" -o both.mlir
// RUN: filecheck %s --check-prefix=BOTH < %t/both.mlir
// BOTH:      "top.Input"(%arg0) {{.*}} loc([[LC:#loc[0-9]+]])
// BOTH:      %[[G:[0-9]+]] = "tpu.Group"
// BOTH:      %[[R:[0-9]+]] = "tpu.Reshape"(%[[G]])
// BOTH-NEXT: %[[F:[0-9]+]] = "tpu.Active"(%[[R]])
// BOTH-NEXT: return %[[F]] : tensor<1x8x768xf32>
// BOTH:      [[LC]] = loc("c")
//
// Where TPU-MLIR's stage line runs it (after --layer-group, before --core-parallel and
// --address-assign): the same module as cutting the final one.
// RUN: mkdir %t/line && cd %t/line && tpuc-opt ../tpu.mlir --layer-group --trunc-layer="cutLocs=d" --core-parallel --after-layergroup-weight-reorder --address-assign -o group.mlir
// RUN: diff %t/line/group.mlir %t/group.mlir
//
// The debugging flow: the cut .bmodel, fed c from the Tpu interpreter's tensors of the full
// model, gives its e. The full model's .bmodel computes them too: in TPU-MLIR's order, address-assign
// keeps c, which group (d, e) loads in both slices, until e is computed (before, e took c's memory
// after d, the group's last reader of c, and codegen refused the group).
// RUN: cd %t && tpuc-opt final.mlir --codegen="model_file=full.bmodel" -o /dev/null
// RUN: cd %t && tpuc-opt group.mlir --codegen="model_file=group.bmodel" -o /dev/null
// RUN: model_runner --input %t/in.npz --model %t/tpu.mlir --dump_all_tensors --output %t/tpu_all.npz
// RUN: model_runner --input %t/in.npz --model %t/full.bmodel --output %t/full_out.npz
// RUN: npz_tool compare %t/full_out.npz %t/tpu_all.npz --tolerance 0.99999,0.99999 | filecheck %s --check-prefix=FULLSAME
// FULLSAME:  [a {{.*}}{{EQUAL|CLOSE}} [PASSED]
// FULLSAME:  [f {{.*}}{{EQUAL|CLOSE}} [PASSED]
// FULLSAME:  npz compare PASSED.
// RUN: npz_tool extract %t/tpu_all.npz %t/group_in.npz c
// RUN: model_runner --input %t/group_in.npz --model %t/group.bmodel --output %t/group_out.npz
// RUN: npz_tool compare %t/group_out.npz %t/tpu_all.npz --tolerance 0.99999,0.99999 | filecheck %s --check-prefix=SAME
// SAME:      [e {{.*}}{{EQUAL|CLOSE}} [PASSED]
// SAME:      1 compared
// SAME:      npz compare PASSED.
//
// Without --address-assign the cut module has no addresses, and codegen says so.
// RUN: not tpuc-opt %t/plain.mlir --codegen="model_file=%t/x.bmodel" 2>&1 | filecheck %s --check-prefix=NOADDR
// NOADDR: error: codegen: module has no module.coeff_addr; run --address-assign first
//
// Where it must not run or what it does not know: one line each, nothing written.
// RUN: not tpuc-opt %t/final.mlir --trunc-layer="cutLocs=nope,d,w0" -o %t/bad.mlir 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not tpuc-opt %t/final.mlir --trunc-layer="cutLocs=" -o %t/bad.mlir 2>&1 | filecheck %s --check-prefix=EMPTY
// RUN: not tpuc-opt %t/final.mlir --trunc-layer -o %t/bad.mlir 2>&1 | filecheck %s --check-prefix=EMPTY
// RUN: not tpuc-opt %t/final.mlir --trunc-layer="cutLocs=d mode=bt" -o %t/bad.mlir 2>&1 | filecheck %s --check-prefix=OPTION
// RUN: not tpuc-opt %t/m.mlir --trunc-layer="cutLocs=d" -o %t/bad.mlir 2>&1 | filecheck %s --check-prefix=TOP
// RUN: not ls %t/bad.mlir
// UNKNOWN: error: trunc-layer: no layer of @main is named 'nope', 'w0' (cutLocs)
// EMPTY:   error: trunc-layer: cutLocs is empty; name the layers to keep (cutLocs=a,b)
// OPTION:  error: pass 'trunc-layer' has no option 'mode'; its options: cutLocs
// TOP:     error: trunc-layer: module.state is TOP_F32; it cuts a Tpu module (TPU_LOWERED, TPU_ADDRESSED)

module attributes {module.chip = "ALL", module.name = "tl", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "w.npz"} {
  func.func @main(%arg0: tensor<1x8x48x16xf32>) -> (tensor<1x8x48x16xf32>, tensor<1x8x768xf32>) {
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
    %r = "top.Reshape"(%e) {shape = [1, 8, 768]} : (tensor<1x8x48x16xf32>) -> tensor<1x8x768xf32> loc("r")
    %f = "top.Sigmoid"(%r) : (tensor<1x8x768xf32>) -> tensor<1x8x768xf32> loc("f")
    return %a, %f : tensor<1x8x48x16xf32>, tensor<1x8x768xf32>
  }
}

// Groups of several ops cut along W and C (docs/backend.md, "Groups of several ops"): on the tiny
// chip (4 lanes x 16 KiB, 16-byte rows) no N x H split of these groups fits, not even one row per
// slice, so the search cuts W (first) or C (whole lanes per part):
// * w_*: Relu -> Upsample by 2 along W -> depthwise 1x3 conv -> 1x3 max pool on one row of 2048
//   (4096) columns: one group of 4, wsecs 9; each op's W parts grow by its consumer's halo (the
//   pool's 456 columns are the conv's 458 and the Upsample's 460, the Relu's 230 input columns:
//   whole input columns, repeated twice);
// * c_*: Relu -> depthwise 1x3 conv -> Add of both on 64 channels x 2 rows x 256 columns: W cannot
//   help (the Add reads the Relu's tile without the conv's halo columns, which a two-row tile
//   cannot hand out in place), every op is channel-local: csecs 8 (8 channels, 2 per lane each), hsecs 2;
//   the depthwise filter is loaded whole (prefetched during the group before) and each C part
//   reads its channels in it;
// * m_*: the same with a conv of group 32 (2 channels per group: it mixes channels): no csecs on any
//   group; the Relu stays alone (cut along C as an op alone), the conv and the Add are one group
//   cut along W (their Relu input is loaded, halo columns and all).
// The .bmodel on the cmodel matches the Tpu interpreter (F32: within rounding).
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; r = np.random.default_rng(0); np.savez('%t/w.npz', wd=r.standard_normal((8, 1, 1, 3)).astype(np.float32), cd=r.standard_normal((64, 1, 1, 3)).astype(np.float32), md=r.standard_normal((64, 2, 1, 3)).astype(np.float32)); np.savez('%t/in.npz', x=r.standard_normal((1, 8, 1, 2048)).astype(np.float32), y=r.standard_normal((1, 64, 2, 256)).astype(np.float32), z=r.standard_normal((1, 64, 2, 256)).astype(np.float32))"
// RUN: tpuc-opt %t/m.mlir --processor-assign="chip=tiny mode=F32" --convert-top-to-tpu -o %t/tpu.mlir
// RUN: tpuc-opt %t/tpu.mlir --address-assign --layer-group --codegen="model_file=%t/m.bmodel embed_debug_info=true" --mlir-print-debuginfo -o %t/final.mlir
// RUN: filecheck %s < %t/final.mlir
// RUN: tpuc-opt %t/final.mlir --mlir-print-debuginfo | filecheck %s
// RUN: model_runner --input %t/in.npz --model %t/tpu.mlir --output %t/tpu_out.npz
// RUN: model_runner --input %t/in.npz --model %t/m.bmodel --output %t/bmodel_out.npz
// RUN: npz_tool compare %t/bmodel_out.npz %t/tpu_out.npz --tolerance 0.999999,0.999999 -v | filecheck %s --check-prefix=SAME
// The bmodel's header lists each group's C and W parts (model_tool --info).
// RUN: model_tool --info %t/m.bmodel | filecheck %s --check-prefix=INFO
// INFO: layer group 0: w_relu, w_up, w_dw, w_pool (1x1x1x9 (NxCxHxW) slices)
// INFO: layer group 1: c_relu, c_dw, c_add (1x8x2x1 (NxCxHxW) slices)
// INFO: layer group 2: m_conv, m_add (1x1x2x8 (NxCxHxW) slices)
// A group with a channel-mixing conv given csecs by hand is refused by codegen, naming the group and
// why, and no .bmodel is written.
// RUN: sed -e 's/}) {flow = \[-1, 0, 1, 2, -2, 3, 4, 5\]/}) {csecs = 2 : i64, flow = [-1, 0, 1, 2, -2, 3, 4, 5]/' %t/final.mlir > %t/mix.mlir
// RUN: not tpuc-opt %t/mix.mlir --codegen="model_file=%t/mix.bmodel" 2>&1 | filecheck %s --check-prefix=MIX
// RUN: not test -e %t/mix.bmodel
// MIX: error: codegen: group 'tpu.Group' op "m_add": tpu.Conv2D mixes channels: the group is not sliced along C; run --layer-group again

// CHECK: "tpu.Group"
// CHECK: "tpu.Relu"{{.*}}w_idx = [0, 227, 455, 683, 911, 1139, 1367, 1595, 1823], w_slice = [229, 230, 230, 230, 230, 230, 230, 230, 225]{{.*}} loc(#[[WR:loc[0-9]+]])
// CHECK-NEXT: "tpu.Upsample"{{.*}}w_idx = [0, 454, 910, 1366, 1822, 2278, 2734, 3190, 3646], w_slice = [458, 460, 460, 460, 460, 460, 460, 460, 450]
// CHECK: "tpu.Conv2D"{{.*}}w_idx = [0, 455, 911, 1367, 1823, 2279, 2735, 3191, 3647], w_slice = [457, 458, 458, 458, 458, 458, 458, 458, 449]
// CHECK-NEXT: "tpu.Pool2D"{{.*}}w_idx = [0, 456, 912, 1368, 1824, 2280, 2736, 3192, 3648], w_slice = [456, 456, 456, 456, 456, 456, 456, 456, 448]
// CHECK-NOT: csecs
// CHECK: }) {flow = [{{.*}}], hsecs = 1 : i64, lmem_bytes = {{[0-9]+}} : i64, nsecs = 1 : i64, wsecs = 9 : i64} {{.*}} loc(#[[WP:loc[0-9]+]])
// CHECK: "tpu.Group"
// CHECK: "tpu.Relu"{{.*}}c_idx = [0, 8, 16, 24, 32, 40, 48, 56], c_slice = [8, 8, 8, 8, 8, 8, 8, 8], {{.*}}h_idx = [0, 1], h_slice = [1, 1], w_idx = [0], w_slice = [256]
// CHECK: "tpu.Conv2D"{{.*}}c_idx = [0, 8, 16, 24, 32, 40, 48, 56], c_slice = [8, 8, 8, 8, 8, 8, 8, 8]
// CHECK-NEXT: "tpu.Add"{{.*}}c_idx = [0, 8, 16, 24, 32, 40, 48, 56]
// CHECK-NOT: wsecs
// CHECK: }) {csecs = 8 : i64, flow = [{{.*}}], hsecs = 2 : i64, lmem_bytes = {{[0-9]+}} : i64, nsecs = 1 : i64, other_up_overlap_op = [2]}
// CHECK-NEXT: "tpu.Relu"{{.*}} {csecs = 2 : i64, hsecs = 2 : i64,
// CHECK-NEXT: "tpu.Group"
// CHECK-NOT: csecs
// CHECK: "tpu.Conv2D"{{.*}}group = 32 : i64
// CHECK-NOT: csecs
// CHECK: "tpu.Add"
// CHECK-NOT: csecs
// CHECK: }) {flow = [{{.*}}], hsecs = 2 : i64, lmem_bytes = {{[0-9]+}} : i64, nsecs = 1 : i64, wsecs = 8 : i64}
// CHECK-DAG: #[[WR]] = loc("w_relu")
// CHECK-DAG: #[[WP]] = loc("w_pool")
// SAME: w_pool {{.*}} {{EQUAL|CLOSE|SIMILAR}}
// SAME: c_add {{.*}} {{EQUAL|CLOSE|SIMILAR}}
// SAME: m_add {{.*}} {{EQUAL|CLOSE|SIMILAR}}
// SAME: npz compare PASSED.
module attributes {module.chip = "ALL", module.name = "gcw", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "w.npz"} {
  func.func @main(%arg0: tensor<1x8x1x2048xf32>, %arg1: tensor<1x64x2x256xf32>, %arg2: tensor<1x64x2x256xf32>) -> (tensor<1x8x1x4096xf32>, tensor<1x64x2x256xf32>, tensor<1x64x2x256xf32>) {
    %x = "top.Input"(%arg0) : (tensor<1x8x1x2048xf32>) -> tensor<1x8x1x2048xf32> loc("x")
    %y = "top.Input"(%arg1) : (tensor<1x64x2x256xf32>) -> tensor<1x64x2x256xf32> loc("y")
    %z = "top.Input"(%arg2) : (tensor<1x64x2x256xf32>) -> tensor<1x64x2x256xf32> loc("z")
    %n = "top.None"() : () -> none loc("none")
    %wd = "top.Weight"() : () -> tensor<8x1x1x3xf32> loc("wd")
    %cd = "top.Weight"() : () -> tensor<64x1x1x3xf32> loc("cd")
    %md = "top.Weight"() : () -> tensor<64x2x1x3xf32> loc("md")
    %r = "top.Relu"(%x) : (tensor<1x8x1x2048xf32>) -> tensor<1x8x1x2048xf32> loc("w_relu")
    %u = "top.Upsample"(%r) {scale_h = 1, scale_w = 2} : (tensor<1x8x1x2048xf32>) -> tensor<1x8x1x4096xf32> loc("w_up")
    %d = "top.Conv"(%u, %wd, %n) {kernel_shape = [1, 3], pads = [0, 1, 0, 1], group = 8} : (tensor<1x8x1x4096xf32>, tensor<8x1x1x3xf32>, none) -> tensor<1x8x1x4096xf32> loc("w_dw")
    %p = "top.MaxPool"(%d) {kernel_shape = [1, 3], strides = [1, 1], pads = [0, 1, 0, 1]} : (tensor<1x8x1x4096xf32>) -> tensor<1x8x1x4096xf32> loc("w_pool")
    %r2 = "top.Relu"(%y) : (tensor<1x64x2x256xf32>) -> tensor<1x64x2x256xf32> loc("c_relu")
    %d2 = "top.Conv"(%r2, %cd, %n) {kernel_shape = [1, 3], pads = [0, 1, 0, 1], group = 64} : (tensor<1x64x2x256xf32>, tensor<64x1x1x3xf32>, none) -> tensor<1x64x2x256xf32> loc("c_dw")
    %a2 = "top.Add"(%r2, %d2) : (tensor<1x64x2x256xf32>, tensor<1x64x2x256xf32>) -> tensor<1x64x2x256xf32> loc("c_add")
    %r3 = "top.Relu"(%z) : (tensor<1x64x2x256xf32>) -> tensor<1x64x2x256xf32> loc("m_relu")
    %g3 = "top.Conv"(%r3, %md, %n) {kernel_shape = [1, 3], pads = [0, 1, 0, 1], group = 32} : (tensor<1x64x2x256xf32>, tensor<64x2x1x3xf32>, none) -> tensor<1x64x2x256xf32> loc("m_conv")
    %a3 = "top.Add"(%r3, %g3) : (tensor<1x64x2x256xf32>, tensor<1x64x2x256xf32>) -> tensor<1x64x2x256xf32> loc("m_add")
    return %p, %a2, %a3 : tensor<1x8x1x4096xf32>, tensor<1x64x2x256xf32>, tensor<1x64x2x256xf32>
  }
}

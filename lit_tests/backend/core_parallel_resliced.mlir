// --core-parallel after --layer-group (TPU-MLIR's place): the parts' slicing is decided again for their one
// core, none of the op's kept. On two cores layer-group cuts the A16MatMul's one row along C (csecs = 2, LG);
// each part, on one core, is not cut along C (no csecs: absent is 1), so the op's csecs must not survive.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; r = np.random.default_rng(1); np.savez('%t/m_weight.npz', w=r.standard_normal((256, 512), np.float32))"
// RUN: cd %t && tpuc-opt m.mlir --processor-assign="chip=bm1688 mode=W8BF16 num_core=2" --convert-top-to-tpu -o w8.mlir
// RUN: cd %t && tpuc-opt w8.mlir --layer-group -o lg.mlir && filecheck %s --check-prefix=LG < %t/lg.mlir
// LG: "tpu.A16MatMul"({{.*}}) {csecs = 2 : i64, hsecs = 1 : i64, {{.*}}} : ({{.*}}) -> tensor<1x1x512xbf16>
// RUN: cd %t && tpuc-opt w8.mlir --layer-group --core-parallel -o split.mlir && filecheck %s < %t/split.mlir
// CHECK: "tpu.A16MatMul"({{.*}}) {core_id = 0 : i64, hsecs = 1 : i64, lmem_bytes = {{[0-9]+}} : i64, nsecs = 1 : i64, sign = true, w_transpose = true, weight_bits = 8 : i64} : ({{.*}}) -> tensor<1x1x256xbf16>
// CHECK: "tpu.A16MatMul"({{.*}}) {core_id = 1 : i64, hsecs = 1 : i64, lmem_bytes = {{[0-9]+}} : i64, nsecs = 1 : i64, sign = true, w_transpose = true, weight_bits = 8 : i64} : ({{.*}}) -> tensor<1x1x256xbf16>
// CHECK: "tpu.Concat"
module attributes {module.name = "m", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x1x256xf32>) -> (tensor<1x1x512xf32>) {
    %0 = "top.Input"(%arg0) : (tensor<1x1x256xf32>) -> tensor<1x1x256xf32> loc("x")
    %w = "top.Weight"() : () -> tensor<256x512xf32> loc("w")
    %n = "top.None"() : () -> none loc(unknown)
    %1 = "top.MatMul"(%0, %w, %n) : (tensor<1x1x256xf32>, tensor<256x512xf32>, none) -> tensor<1x1x512xf32> loc("mm")
    return %1 : tensor<1x1x512xf32>
  }
}

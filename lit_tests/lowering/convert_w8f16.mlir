// W8F16 / W8BF16 (weight-only quantization, docs/quantization.md; W4F16 in test_weight_only.py): a MatMul of a 2-D constant weight
// becomes tpu.A16MatMul with the weight int8 [N, K] (w_transpose), one scale per output channel in the
// activations' type, zp none and the bias f32. Must not fire: a MatMul of two computed operands, one
// with left_transpose, one in the qtable; every other op lowers as in F16/BF16.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// w [K=3, N=2]: channel 0 is (1, -2, 0.5): scale 2/127, q = round(127 w / 2) = (64 [63.5 half away], -127, 32 [31.75]);
// channel 1 is (4, 1, 3): all positive, but sign is global (w has negatives), so scale 4/127, q = (127, 32 [31.75], 95 [95.25]).
// RUN: python -c "import numpy as np; np.savez('%t/m_weight.npz', w=np.array([[1.0, 4.0], [-2.0, 1.0], [0.5, 3.0]], np.float32), b=np.array([0.25, -1.0], np.float32), p=np.array([[2.0, 3.0], [5.0, 7.0], [1.0, 1.0]], np.float32), s=np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, -9.0]], np.float32))"
// RUN: tpuc-opt %t/m.mlir --processor-assign="chip=bm1684x mode=W8F16" --convert-top-to-tpu --mlir-print-debuginfo -o %t/f16.mlir
// RUN: filecheck %s < %t/f16.mlir
// RUN: python -c "import numpy as np; w = np.load('%t/f16_weight.npz'); print('Q', w['w_int8'].tolist(), w['w_int8'].dtype); print('S', (w['w_scale_f16'].astype(np.float64) * 127).round(2).tolist(), w['w_scale_f16'].dtype); print('U', w['p_uint8'].tolist(), w['p_uint8'].dtype)" | filecheck %s --check-prefix=W
// W: Q {{\[}}[64, -127, 32], [127, 32, 95]] int8
// W: S {{\[}}[2.0], [4.0]] float16
// p^T = ((2, 5, 1), (3, 7, 1)), scales 5/255 and 7/255: q = (102, 255, 51), (109 [109.29], 255, 36 [36.43]).
// W: U {{\[}}[102, 255, 51], [109, 255, 36]] uint8
// A weight read as [K, N] by one MatMul and as [N, K] (right_transpose) by another is quantized once per layout:
// s's first output channel is its column (1, 4, 7) for mm_s (scale 7/127: 18 [18.14], 73 [72.57], 127) and its
// row (1, 2, 3) for mm_st (scale 3/127: 42 [42.33], 85 [84.67], 127).
// RUN: python -c "import numpy as np; w = np.load('%t/f16_weight.npz'); print('T', w['s_int8'][0].tolist(), w['s_int8_1'][0].tolist())" | filecheck %s --check-prefix=T
// T: T [18, 73, 127] [42, 85, 127]
// RUN: tpuc-opt %t/m.mlir --processor-assign="chip=bm1684x mode=W8BF16" --convert-top-to-tpu -o %t/bf16.mlir
// RUN: filecheck %s --check-prefix=BF16 < %t/bf16.mlir
// A qtable line keeps a MatMul out of the A16 rule (here F16: a plain F16 MatMul).
// RUN: echo "mm_q F16" > %t/q.qtable
// RUN: tpuc-opt %t/m.mlir --processor-assign="chip=bm1684x mode=W8F16" --convert-top-to-tpu="qtable=%t/q.qtable" -o %t/q.mlir && filecheck %s --check-prefix=QT < %t/q.mlir
// q_group_size > 0: uint8 integers with a zero point and a scale per group of K (here one group of 3):
// w's channel 0 (1, -2, 0.5) asymmetric: scale 3/255, zero point -round(-2 / scale) = 170, q = round(w / scale) + 170
// = (255 [85 + 170], 0, 213 [42.5 -> 43]); symmetric: scale 4/255 (float32 0.015686275), zero point 128, q = (192
// [63.749996 -> 64], 1 [-2 / scale is -127.49999 in float32 -> -127], 160 [31.874998 -> 32]).
// RUN: tpuc-opt %t/m.mlir --processor-assign="chip=bm1684x mode=W8F16" --convert-top-to-tpu="q_group_size=3" -o %t/g.mlir
// RUN: filecheck %s --check-prefix=GROUP < %t/g.mlir
// GROUP: "tpu.A16MatMul"({{.*}}) {q_group_size = 3 : i64, sign = true, w_transpose = true, weight_bits = 8 : i64} : (tensor<4x3xf16>, tensor<2x3xui8>, tensor<2x1xf16>, tensor<2x1xui8>, tensor<2xf32>) -> tensor<4x2xf16>
// RUN: python -c "import numpy as np; w = np.load('%t/g_weight.npz'); print('G', w['w_uint8'][0].tolist(), w['w_zp'][0].tolist())" | filecheck %s --check-prefix=GW
// GW: G [255, 0, 213] [170]
// RUN: tpuc-opt %t/m.mlir --processor-assign="chip=bm1684x mode=W8F16" --convert-top-to-tpu="q_group_size=3 q_symmetric=true" -o %t/s.mlir
// RUN: python -c "import numpy as np; w = np.load('%t/s_weight.npz'); print('S', w['w_uint8'][0].tolist(), w['w_zp'][0].tolist())" | filecheck %s --check-prefix=SW
// SW: S [192, 1, 160] [128]
// A group size that does not divide K, and q_symmetric without groups: one error each, naming them.
// RUN: not tpuc-opt %t/m.mlir --processor-assign="chip=bm1684x mode=W8F16" --convert-top-to-tpu="q_group_size=2" 2>&1 | filecheck %s --check-prefix=NDIV
// NDIV: error: mm: q_group_size=2 does not divide K = 3 of weight 'w' (weight-only quantization)
// RUN: not tpuc-opt %t/m.mlir --processor-assign="chip=bm1684x mode=W8F16" --convert-top-to-tpu="q_symmetric=true" 2>&1 | filecheck %s --check-prefix=QSYM
// W4F16 stores two 4-bit weights per byte along K: w's K = 3 cannot be packed.
// RUN: not tpuc-opt %t/m.mlir --processor-assign="chip=bm1684x mode=W4F16" --convert-top-to-tpu 2>&1 | filecheck %s --check-prefix=ODD
// ODD: error: mm: 4-bit weights are stored two per byte along K: K = 3 of weight 'w' is odd
// QSYM: error: convert-top-to-tpu: q_group_size=0 q_symmetric=true: the group size must be >= 0, and q_symmetric needs groups

// CHECK: module attributes {{{.*}}module.mode = "W8F16"
// CHECK: %[[X:[0-9]+]] = "tpu.Cast"(%{{[0-9]+}}) : (tensor<4x3xf32>) -> tensor<4x3xf16>
// CHECK: %[[MM:[0-9]+]] = "tpu.A16MatMul"(%[[X]], %{{[0-9]+}}, %{{[0-9]+}}, %[[NONE:[0-9]+]], %{{[0-9]+}}) {sign = true, w_transpose = true, weight_bits = 8 : i64} : (tensor<4x3xf16>, tensor<2x3xi8>, tensor<2x1xf16>, none, tensor<2xf32>) -> tensor<4x2xf16> loc(#[[MMLOC:loc[0-9]*]])
// The computed right side, left_transpose and the qtabled op: plain F16 MatMul.
// CHECK: "tpu.MatMul"(%[[MM]], {{.*}}) : (tensor<4x2xf16>, tensor<2x2xf16>, {{.*}}) -> tensor<4x2xf16> loc(#[[DYN:loc[0-9]*]])
// CHECK: "tpu.MatMul"({{.*}}) {left_transpose = true} : (tensor<3x4xf16>, tensor<3x2xf16>, {{.*}}) -> tensor<4x2xf16> loc(#[[LT:loc[0-9]*]])
// A weight with no value <= 0 is stored unsigned (TPU-MLIR's sign = false): scale max / 255.
// CHECK: "tpu.A16MatMul"({{.*}}) {sign = false, w_transpose = true, weight_bits = 8 : i64} : (tensor<4x3xf16>, tensor<2x3xui8>, tensor<2x1xf16>, none, none) -> tensor<4x2xf16> loc(#[[QLOC:loc[0-9]*]])
// CHECK-NOT: top.MatMul
// CHECK-DAG: #[[MMLOC]] = loc("mm")
// CHECK-DAG: #[[DYN]] = loc("mm_dyn_f16")
// CHECK-DAG: #[[LT]] = loc("mm_lt_f16")
// CHECK-DAG: #[[QLOC]] = loc("mm_q_f16")

// BF16: module attributes {{{.*}}module.mode = "W8BF16"
// BF16: "tpu.A16MatMul"({{.*}}) {sign = true, w_transpose = true, weight_bits = 8 : i64} : (tensor<4x3xbf16>, tensor<2x3xi8>, tensor<2x1xbf16>, none, tensor<2xf32>) -> tensor<4x2xbf16>

// QT-COUNT-1: "tpu.A16MatMul"
// QT: "tpu.MatMul"({{.*}}) : (tensor<4x3xf16>, tensor<3x2xf16>, {{.*}}) -> tensor<4x2xf16>
module attributes {module.name = "m", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<4x3xf32>, %arg1: tensor<2x2xf32>, %arg2: tensor<3x4xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x3xf32>, tensor<4x3xf32>) {
    %0 = "top.Input"(%arg0) : (tensor<4x3xf32>) -> tensor<4x3xf32> loc("x")
    %1 = "top.Input"(%arg1) : (tensor<2x2xf32>) -> tensor<2x2xf32> loc("r")
    %2 = "top.Input"(%arg2) : (tensor<3x4xf32>) -> tensor<3x4xf32> loc("xt")
    %3 = "top.Weight"() : () -> tensor<3x2xf32> loc("w")
    %4 = "top.Weight"() : () -> tensor<2xf32> loc("b")
    %5 = "top.Weight"() : () -> tensor<3x2xf32> loc("p")
    %ws = "top.Weight"() : () -> tensor<3x3xf32> loc("s")
    %n = "top.None"() : () -> none loc(unknown)
    %6 = "top.MatMul"(%0, %3, %4) : (tensor<4x3xf32>, tensor<3x2xf32>, tensor<2xf32>) -> tensor<4x2xf32> loc("mm")
    %7 = "top.MatMul"(%6, %1, %n) : (tensor<4x2xf32>, tensor<2x2xf32>, none) -> tensor<4x2xf32> loc("mm_dyn")
    %8 = "top.MatMul"(%2, %5, %n) {left_transpose = true} : (tensor<3x4xf32>, tensor<3x2xf32>, none) -> tensor<4x2xf32> loc("mm_lt")
    %9 = "top.MatMul"(%0, %5, %n) : (tensor<4x3xf32>, tensor<3x2xf32>, none) -> tensor<4x2xf32> loc("mm_q")
    %10 = "top.MatMul"(%0, %ws, %n) : (tensor<4x3xf32>, tensor<3x3xf32>, none) -> tensor<4x3xf32> loc("mm_s")
    %11 = "top.MatMul"(%0, %ws, %n) {right_transpose = true} : (tensor<4x3xf32>, tensor<3x3xf32>, none) -> tensor<4x3xf32> loc("mm_st")
    return %7, %8, %9, %10, %11 : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x3xf32>, tensor<4x3xf32>
  }
}

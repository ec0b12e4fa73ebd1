// --weight-fold: a Tpu op whose operands are all weights becomes a top.Weight with its name and
// result type (an int8 result keeps its !quant.uniform type and stored integers); the weights it
// read go when unused. Must not fold: an op that reads the input; a weight still read elsewhere stays.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python -c "import numpy as np; np.savez('%t/m_weight.npz', w=np.array([1.0, -2.0, 0.5, 4.0], np.float32), q=np.array([100, -100, 3, 127], np.int8))"
// RUN: tpuc-opt %t/m.mlir --weight-fold --mlir-print-debuginfo -o %t/out.mlir
// RUN: filecheck %s < %t/out.mlir
// The folded values: w * 1.5, and the int8 weight requantized by 3 >> 1 (half away from zero).
// RUN: python -c "import numpy as np; w = np.load('%t/out_weight.npz'); print('MC', w['mc'].tolist(), w['mc'].dtype); print('RQ', w['rq'].tolist(), w['rq'].dtype); print(sorted(w.files))" | filecheck %s --check-prefix=W
// W: MC [1.5, -3.0, 0.75, 6.0] float32
// W: RQ [127, -128, 5, 127] int8
// W: ['mc', 'rq', 'w']
// The same outputs as before the pass.
// RUN: python -c "import numpy as np; np.savez('%t/in.npz', x=np.arange(4, dtype=np.float32))"
// RUN: model_runner --input %t/in.npz --model %t/m.mlir --output %t/before.npz
// RUN: model_runner --input %t/in.npz --model %t/out.mlir --output %t/after.npz
// RUN: npz_tool compare %t/after.npz %t/before.npz --tolerance 1.0,1.0 | filecheck %s --check-prefix=SAME
// SAME: npz compare PASSED.

// CHECK: %[[WT:[0-9]+]] = "top.Weight"() : () -> tensor<4xf32> loc(#[[LW:loc[0-9]*]])
// CHECK: %[[MC:[0-9]+]] = "top.Weight"() : () -> tensor<4xf32> loc(#[[LMC:loc[0-9]*]])
// CHECK-NOT: "tpu.MulConst"(%[[WT]])
// CHECK: "tpu.Add"(%{{[0-9]+}}, %[[MC]])
// CHECK: "tpu.Add"(%{{[0-9]+}}, %[[WT]])
// CHECK: "tpu.MulConst"(%{{[0-9]+}}) {const_val = 2.000000e+00 : f64} {{.*}} loc(#[[LX2:loc[0-9]*]])
// CHECK-NOT: "tpu.RequantInt"
// CHECK: %[[RQ:[0-9]+]] = "top.Weight"() : () -> tensor<4x!quant.uniform<i8:f32, 5.000000e-01>> loc(#[[LRQ:loc[0-9]*]])
// CHECK: return {{.*}}, %[[RQ]] :
// CHECK-DAG: #[[LMC]] = loc("mc")
// CHECK-DAG: #[[LRQ]] = loc("rq")
// CHECK-DAG: #[[LW]] = loc("w")
// CHECK-DAG: #[[LX2]] = loc("x2")
module attributes {module.name = "m", module.state = "TPU_LOWERED", module.chip = "bm1684x", module.mode = "F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x!quant.uniform<i8:f32, 0.5>>) {
    %0 = "top.Input"(%arg0) : (tensor<4xf32>) -> tensor<4xf32> loc("x")
    %1 = "top.Weight"() : () -> tensor<4xf32> loc("w")
    %2 = "top.Weight"() : () -> tensor<4x!quant.uniform<i8:f32, 0.25>> loc("q")
    %3 = "tpu.MulConst"(%1) {const_val = 1.5 : f64} : (tensor<4xf32>) -> tensor<4xf32> loc("mc")
    %4 = "tpu.Add"(%0, %3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("a")
    %5 = "tpu.Add"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("b")
    %6 = "tpu.MulConst"(%0) {const_val = 2.0 : f64} : (tensor<4xf32>) -> tensor<4xf32> loc("x2")
    %7 = "tpu.RequantInt"(%2) {multiplier = [3], rshift = [1], quant_mode = #tpu<rq_mode MultiplierShift>} : (tensor<4x!quant.uniform<i8:f32, 0.25>>) -> tensor<4x!quant.uniform<i8:f32, 0.5>> loc("rq")
    return %4, %5, %6, %7 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x!quant.uniform<i8:f32, 0.5>>
  }
}

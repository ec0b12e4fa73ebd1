// RUN: tpuc-opt %s | filecheck %s
// RUN: tpuc-opt %s | tpuc-opt | filecheck %s --check-prefix=TWICE
// tpu.RequantIntAxis parses and prints with TPU-MLIR's attribute names; defaults (rq_axis 1,
// fuse_rq_axis false) are not printed when not written, the enums print as #tpu<...>; attributes
// print sorted.

// CHECK-LABEL: func.func @main
// CHECK: "tpu.RequantIntAxis"(%arg0, %{{.*}}) {quant_mode = #tpu<rq_mode MultiplierShift>, round_mode = #tpu<round_mode HalfUp>} : (tensor<1x4x2x2xi32>, tensor<1x4x1x3xi32>) -> tensor<1x4x2x2x!quant.uniform<i8:f32, 5.000000e-01>>
// CHECK: "tpu.RequantIntAxis"(%arg1, %{{.*}}) {fuse_rq_axis = true, quant_mode = #tpu<rq_mode MultiplierShift>, rq_axis = 2 : i64} : (tensor<2x3x5x!quant.uniform<i8:f32, 2.500000e-01:-3>>, tensor<5x3xi32>) -> tensor<2x3x5x!quant.uniform<u8:f32, 1.250000e-01:7>>
// TWICE-COUNT-2: "tpu.RequantIntAxis"
func.func @main(%x: tensor<1x4x2x2xi32>, %y: tensor<2x3x5x!quant.uniform<i8:f32, 0.25:-3>>) -> (tensor<1x4x2x2x!quant.uniform<i8:f32, 0.5>>, tensor<2x3x5x!quant.uniform<u8:f32, 0.125:7>>) {
  %q = "top.Weight"() : () -> tensor<1x4x1x3xi32> loc("rq_quant")
  %0 = "tpu.RequantIntAxis"(%x, %q) {quant_mode = #tpu<rq_mode MultiplierShift>, round_mode = #tpu<round_mode HalfUp>} : (tensor<1x4x2x2xi32>, tensor<1x4x1x3xi32>) -> tensor<1x4x2x2x!quant.uniform<i8:f32, 0.5>>
  %q2 = "top.Weight"() : () -> tensor<5x3xi32> loc("rq_last_quant")
  %1 = "tpu.RequantIntAxis"(%y, %q2) {quant_mode = #tpu<rq_mode MultiplierShift>, rq_axis = 2 : i64, fuse_rq_axis = true} : (tensor<2x3x5x!quant.uniform<i8:f32, 0.25:-3>>, tensor<5x3xi32>) -> tensor<2x3x5x!quant.uniform<u8:f32, 0.125:7>>
  func.return %0, %1 : tensor<1x4x2x2x!quant.uniform<i8:f32, 0.5>>, tensor<2x3x5x!quant.uniform<u8:f32, 0.125:7>>
}

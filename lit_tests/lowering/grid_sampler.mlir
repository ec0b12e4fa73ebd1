// top.GridSampler lowers to tpu.GridSampler, F32 in every mode (its record, BdcGridSample, reads and
// writes f32): in an F16 module its input and grid are cast to f32 and its f32 result feeds the
// rest. model_deploy compiles it to record 98 and checks the cmodel against the Tpu interpreter
// (F32 and INT8 modules).
// RUN: tpuc-opt %s --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu | filecheck %s
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python %S/../rewrites/Inputs/make_weights.py %s %t/m_weight.npz --inputs %t/in.npz
// RUN: model_deploy --mlir %t/m.mlir --quantize F32 --processor bm1684x --model %t/m.bmodel --test_input %t/in.npz --tolerance 0.99,0.99 2>&1 | filecheck %s --check-prefix=DEPLOY
// In an INT8 module it runs in F32 between a dequantized input and a quantized result.
// RUN: printf '# op_name threshold min max\nx 1.5 0.5 1.5\ngrid 1.5 0.5 1.5\nact 1.5 0.5 1.5\nwarp 1.5 0.5 1.5\nout 1.5 0.5 1.5\n' > %t/table
// RUN: model_deploy --mlir %t/m.mlir --quantize INT8 --calibration_table %t/table --processor bm1684x --model %t/q.bmodel --test_input %t/in.npz --tolerance 0.9,0.6 2>&1 | filecheck %s --check-prefix=DEPLOY
// RUN: filecheck %s --check-prefix=INT8 < %t/m_bm1684x_int8_sym_tpu.mlir

// CHECK: %[[ACT:.*]] = "tpu.Relu"(%{{.*}}) : (tensor<1x2x4x4xf16>) -> tensor<1x2x4x4xf16>
// CHECK: %[[IN:.*]] = "tpu.Cast"(%[[ACT]]) : (tensor<1x2x4x4xf16>) -> tensor<1x2x4x4xf32>
// CHECK: %[[WARP:.*]] = "tpu.GridSampler"(%[[IN]], %{{.*}}) {align_corners = false, mode = 0 : i64, padding_mode = 1 : i64} : (tensor<1x2x4x4xf32>, tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32>
// CHECK: "tpu.Cast"(%[[WARP]]) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf16>
// DEPLOY: bmodel check passed
// INT8: "tpu.GridSampler"({{.*}}) {{.*}} : (tensor<1x2x4x4xf32>, tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32>
module attributes {module.name = "m", module.state = "TOP_F32", module.weight_file = "m_weight.npz", module.chip = "ALL", module.platform = "ONNX"} {
  func.func @main(%arg0: tensor<1x2x4x4xf32>, %arg1: tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("x")
    %1 = "top.Input"(%arg1) : (tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32> loc("grid")
    %2 = "top.Relu"(%0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("act")
    %3 = "top.GridSampler"(%2, %1) {mode = 0 : i64, padding_mode = 1 : i64, align_corners = false} : (tensor<1x2x4x4xf32>, tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32> loc("warp")
    %4 = "top.Relu"(%3) : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> loc("out")
    return %4 : tensor<1x2x3x3xf32>
  }
}

// top.GridSampler has no Tpu op yet: the lowering, and so model_deploy, stops naming it before any
// file is written (docs/lowering.md).
// RUN: not tpuc-opt %s --processor-assign="chip=bm1684x mode=F32" --convert-top-to-tpu 2>&1 | filecheck %s
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: not model_deploy --mlir %t/m.mlir --quantize F32 --processor bm1684x --model %t/m.bmodel 2>&1 | filecheck %s
// RUN: ls %t | filecheck %s --check-prefix=FILES

// CHECK: error: convert-top-to-tpu: 'top.GridSampler' op "warp": no Tpu lowering for top.GridSampler yet
// FILES-NOT: bmodel
// FILES: m.mlir
// FILES-NOT: {{.}}
module attributes {module.name = "m", module.state = "TOP_F32", module.weight_file = "m_weight.npz", module.chip = "ALL", module.platform = "ONNX"} {
  func.func @main(%arg0: tensor<1x2x4x4xf32>, %arg1: tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("x")
    %1 = "top.Input"(%arg1) : (tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32> loc("grid")
    %2 = "top.GridSampler"(%0, %1) {mode = 0 : i64, padding_mode = 1 : i64, align_corners = false} : (tensor<1x2x4x4xf32>, tensor<1x3x3x2xf32>) -> tensor<1x2x3x3xf32> loc("warp")
    return %2 : tensor<1x2x3x3xf32>
  }
}

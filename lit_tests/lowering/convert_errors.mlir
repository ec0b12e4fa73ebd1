// RUN: not tpuc-opt %s --convert-top-to-tpu 2>&1 | filecheck %s --check-prefix=NOMODE
// RUN: not tpuc-opt %s --processor-assign="chip=bm1684x mode=INT8" --convert-top-to-tpu 2>&1 | filecheck %s --check-prefix=INT8
// RUN: not tpuc-opt %s --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu 2>&1 | filecheck %s --check-prefix=OP
// RUN: not tpuc-opt %s --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu="doWinograd=true" 2>&1 | filecheck %s --check-prefix=OPT
// RUN: not tpuc-opt %s --processor-assign="chip=bm1684x mode=F16" --convert-top-to-tpu="asymmetric=true" 2>&1 | filecheck %s --check-prefix=ASYM

// NOMODE: error: convert-top-to-tpu: module.mode is not set; run --processor-assign first
// INT8: error: convert-top-to-tpu: INT8 needs a calibrated module: run --import-calibration-table first
// An op without a lowering is named, never passed through as Top.
// OP: error: convert-top-to-tpu: 'top.Sigmoid' op "sig": only scale=1, bias=0, log=false is lowered yet
// OPT: error: convert-top-to-tpu: doWinograd=True is not supported yet
// ASYM: error: convert-top-to-tpu: asymmetric=true needs mode INT8
module attributes {module.name = "m", module.state = "TOP_F32"} {
  func.func @main(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("x")
    %1 = "top.Sigmoid"(%0) {scale = 2.000000e+00 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("sig")
    return %1 : tensor<1x4xf32>
  }
}

// model_transform of QDQ ONNX models (frontend/qdq.py, docs/quantization.md "QDQ models"): the Q/DQ
// pairs become calibrated ranges on the tensors (no Q/DQ op survives, the weight DQ is folded to a
// float top.Weight), state TOP_CALIBRATED; each form not modelled is one error naming the node
// and the form, exit status 1, and no file written.
// RUN: rm -rf %t && mkdir %t
// RUN: python %S/Inputs/make_qdq.py ok %t/ok.onnx
// RUN: model_transform --model_name m --model_def %t/ok.onnx --mlir %t/m.mlir 2>&1 | filecheck %s --check-prefix=STEP
// RUN: filecheck %s --check-prefix=OK < %t/m.mlir
// STEP: model_transform: give the tensors the ranges of the Q/DQ pairs (TOP_CALIBRATED)
// int8 with zero point 0: [-127 s, 127 s] (s = 0.01); int8 with zero point 3: [(-128 - 3) s, (127 - 3) s] (s = 0.5)
// OK: module.state = "TOP_CALIBRATED"
// OK: "top.Input"(%arg0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4x!quant.calibrated<f32<-1.2699999716132879:1.2699999716132879>>> loc(#[[X:loc[0-9]+]])
// Each pair is the clamp DQ(Q(.)) applies, [(qmin - zp) s, (qmax - zp) s], named as the DQ's output
// (int8 zp 0: [-128 s, 127 s], wider below than the symmetric range; zp 3: the range itself).
// OK-NEXT: "top.Clip"(%1) {max = 1.2699999809265137 : f64, min = -1.2799999713897705 : f64} {{.*}} loc(#[[XD:loc[0-9]+]])
// OK-NEXT: "top.Weight"() : () -> tensor<2x2x3x3xf32>
// OK-NEXT: "top.Conv"
// OK-SAME: -> tensor<1x2x2x2x!quant.calibrated<f32<-6.550000e+01:6.200000e+01>>> loc(#[[Y:loc[0-9]+]])
// OK-NEXT: "top.Clip"(%4) {max = 6.200000e+01 : f64, min = -6.550000e+01 : f64} {{.*}} loc(#[[OUT:loc[0-9]+]])
// OK-NOT: Linear
// OK: #[[X]] = loc("x")
// OK: #[[XD]] = loc("xd")
// OK: #[[Y]] = loc("y")
// OK: #[[OUT]] = loc("out")

// RUN: python %S/Inputs/make_qdq.py block %t/block.onnx
// RUN: not model_transform --model_name bad --model_def %t/block.onnx --mlir %t/block.mlir 2>&1 | filecheck %s --check-prefix=BLOCK
// BLOCK: error: QuantizeLinear 'x_q': block quantization (block_size=2) is not modelled
// RUN: python %S/Inputs/make_qdq.py int4 %t/int4.onnx
// RUN: not model_transform --model_name bad --model_def %t/int4.onnx --mlir %t/int4.mlir 2>&1 | filecheck %s --check-prefix=INT4
// INT4: error: QuantizeLinear 'x_q': storage type INT4 is not modelled
// RUN: python %S/Inputs/make_qdq.py float8 %t/float8.onnx
// RUN: not model_transform --model_name bad --model_def %t/float8.onnx --mlir %t/float8.mlir 2>&1 | filecheck %s --check-prefix=F8
// F8: error: QuantizeLinear 'x_q': storage type FLOAT8E4M3FN is not modelled
// RUN: python %S/Inputs/make_qdq.py int16 %t/int16.onnx
// RUN: not model_transform --model_name bad --model_def %t/int16.onnx --mlir %t/int16.mlir 2>&1 | filecheck %s --check-prefix=INT16
// INT16: error: QuantizeLinear 'x_q': storage type INT16 is not modelled
// RUN: python %S/Inputs/make_qdq.py per_axis_act %t/per_axis_act.onnx
// RUN: not model_transform --model_name bad --model_def %t/per_axis_act.onnx --mlir %t/per_axis_act.mlir 2>&1 | filecheck %s --check-prefix=ACTAXIS
// ACTAXIS: error: QuantizeLinear 'x_q': per-axis activation quantization (axis=1) is not modelled
// RUN: python %S/Inputs/make_qdq.py weight_axis %t/weight_axis.onnx
// RUN: not model_transform --model_name bad --model_def %t/weight_axis.onnx --mlir %t/weight_axis.mlir 2>&1 | filecheck %s --check-prefix=WAXIS
// WAXIS: error: DequantizeLinear 'w_dq': per-axis weights on axis 1, not the output channels of Conv 'conv' is not modelled
// RUN: python %S/Inputs/make_qdq.py weight_zp %t/weight_zp.onnx
// RUN: not model_transform --model_name bad --model_def %t/weight_zp.onnx --mlir %t/weight_zp.mlir 2>&1 | filecheck %s --check-prefix=WZP
// WZP: error: DequantizeLinear 'w_dq': a weight with a nonzero zero point (asymmetric weights) is not modelled
// RUN: python %S/Inputs/make_qdq.py weight_peak %t/weight_peak.onnx
// RUN: not model_transform --model_name bad --model_def %t/weight_peak.onnx --mlir %t/weight_peak.mlir 2>&1 | filecheck %s --check-prefix=PEAK
// PEAK: error: DequantizeLinear 'w_dq': a weight whose output channel 0 peaks at |q| = 18, not 127 (the INT8 lowering's per-channel scale max|w| / 127 would not give back its int8 values) is not modelled
// RUN: python %S/Inputs/make_qdq.py int_output %t/int_output.onnx
// RUN: not model_transform --model_name bad --model_def %t/int_output.onnx --mlir %t/int_output.mlir 2>&1 | filecheck %s --check-prefix=INTOUT
// INTOUT: error: QuantizeLinear 'x_q': a quantized tensor used other than by DequantizeLinear (integer outputs) is not modelled
// RUN: python %S/Inputs/make_qdq.py uncovered %t/uncovered.onnx
// RUN: not model_transform --model_name bad --model_def %t/uncovered.onnx --mlir %t/uncovered.mlir 2>&1 | filecheck %s --check-prefix=UNCOVERED
// UNCOVERED: error: QDQ model: no QuantizeLinear/DequantizeLinear pair gives the range of y
// No refused model wrote its .mlir or weights: only the ok model's files are there.
// RUN: ls %t | filecheck %s --check-prefix=FILES
// FILES-NOT: {{block|int4|float8|int16|per_axis_act|weight_axis|weight_zp|weight_peak|int_output|uncovered}}.mlir
// FILES-NOT: bad_top_f32_all_weight.npz

// model_deploy: INT8 (or QDQ) from the module's ranges, no table; a table, or a float mode, is refused.
// RUN: mkdir %t/d
// RUN: model_deploy --mlir %t/m.mlir --quantize QDQ --processor bm1684x --model %t/d/m.bmodel 2>&1 | filecheck %s --check-prefix=DEPLOY
// DEPLOY: wrote {{.*}}m_bm1684x_int8_sym_tpu.mlir
// RUN: not model_deploy --mlir %t/m.mlir --quantize F16 --processor bm1684x --model %t/d/m.bmodel 2>&1 | filecheck %s --check-prefix=FLOAT
// FLOAT: error: {{.*}}m.mlir is a QDQ model (TOP_CALIBRATED: its ranges came from its Q/DQ nodes): it deploys in INT8 (or QDQ), not F16
// RUN: not model_deploy --mlir %t/m.mlir --quantize INT8 --calibration_table %t/ok.onnx --processor bm1684x --model %t/d/m.bmodel 2>&1 | filecheck %s --check-prefix=TABLE
// TABLE: error: --calibration_table {{.*}}ok.onnx: {{.*}}m.mlir is a QDQ model, calibrated by its Q/DQ nodes already (TOP_CALIBRATED)

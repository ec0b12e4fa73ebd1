// TPU-MLIR's lowering, TPU-optimization and codegen command lines (python/utils/mlir_shell.py:
// lowering_options, tpu_opt_options + tpu_ada_options, codegen_options, each with its defaults,
// chip bm1684x) run unchanged, in F32 and in INT8 (a calibration table imported), as mlir_shell.py
// runs them: from the output directory, with the spacing its empty optional flags leave.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python %S/../rewrites/Inputs/make_weights.py %s %t/m_weight.npz --inputs %t/in.npz
// RUN: mkdir %t/samples && cp %t/in.npz %t/samples/
// RUN: cd %t && run_calibration m.mlir --dataset samples -o m_cali_table
//
// (b) lowering
// RUN: cd %t && tpuc-opt m.mlir --processor-assign="chip=bm1684x mode=F32 num_device=1 num_core=1 addr_mode=auto high_precision=False" --processor-top-optimize --convert-top-to-tpu="weightFileName=m_bm1684x_f32_tpu_weights.npz asymmetric=False doWinograd=False q_group_size=0 q_symmetric=False matmul_perchannel=False gelu_mode=normal" --canonicalize --weight-fold -o m_bm1684x_f32_tpu.mlir
// RUN: filecheck %s --check-prefix=LOWF32 < %t/m_bm1684x_f32_tpu.mlir
// RUN: cd %t && tpuc-opt m.mlir --processor-assign="chip=bm1684x mode=INT8 num_device=1 num_core=1 addr_mode=auto high_precision=False" --import-calibration-table="file=m_cali_table asymmetric=False" --processor-top-optimize --convert-top-to-tpu="weightFileName=m_bm1684x_int8_sym_tpu_weights.npz asymmetric=False doWinograd=False q_group_size=0 q_symmetric=False matmul_perchannel=False gelu_mode=normal" --canonicalize --weight-fold -o m_bm1684x_int8_sym_tpu.mlir
// RUN: filecheck %s --check-prefix=LOWINT8 < %t/m_bm1684x_int8_sym_tpu.mlir
//
// (c) TPU optimization to final.mlir
// RUN: cd %t && tpuc-opt m_bm1684x_f32_tpu.mlir --mlir-disable-threading --strip-io-quant="quant_input=False quant_output=False quant_input_list= quant_output_list= quant_output_bf16=False quant_input_int8=False quant_output_int8=False " --processor-tpu-optimize --dev-parallel --weight-reorder  --subnet-divide="dynamic=False" --op-reorder --topo-sort --layer-group="opt=2 group_by_cores=auto compress_mode=none debugger=0 disable_group_overlap=false lgcache=true config_filename= enable_lghash=false lghash_dir="   --core-parallel  --after-layergroup-weight-reorder  --address-assign -o m_bm1684x_f32_final.mlir --debug_cmd=
// RUN: filecheck %s --check-prefix=FINAL < %t/m_bm1684x_f32_final.mlir
// RUN: cd %t && tpuc-opt m_bm1684x_int8_sym_tpu.mlir --mlir-disable-threading --strip-io-quant="quant_input=False quant_output=False quant_input_list= quant_output_list= quant_output_bf16=False quant_input_int8=False quant_output_int8=False " --processor-tpu-optimize --dev-parallel --weight-reorder  --subnet-divide="dynamic=False" --op-reorder --topo-sort --layer-group="opt=2 group_by_cores=auto compress_mode=none debugger=0 disable_group_overlap=false lgcache=true config_filename= enable_lghash=false lghash_dir="   --core-parallel  --after-layergroup-weight-reorder  --address-assign -o m_bm1684x_int8_sym_final.mlir --debug_cmd=
// RUN: filecheck %s --check-prefix=FINAL < %t/m_bm1684x_int8_sym_final.mlir
// The passes tpudsl has no work for changed nothing: tpudsl's own three backend passes give the same file.
// RUN: cd %t && tpuc-opt m_bm1684x_f32_tpu.mlir --weight-reorder --layer-group --address-assign -o native_f32.mlir
// RUN: sed -e s/native_f32_weight/m_bm1684x_f32_final_weight/ %t/native_f32.mlir | diff - %t/m_bm1684x_f32_final.mlir
// RUN: cd %t && tpuc-opt m_bm1684x_int8_sym_tpu.mlir --weight-reorder --layer-group --address-assign -o native_int8.mlir
// RUN: sed -e s/native_int8_weight/m_bm1684x_int8_sym_final_weight/ %t/native_int8.mlir | diff - %t/m_bm1684x_int8_sym_final.mlir
//
// (d) codegen; the .bmodel computes on the cmodel what the Tpu interpreter computes (INT8: bit for bit)
// RUN: cd %t && tpuc-opt m_bm1684x_f32_final.mlir --codegen="model_file=m_f32.bmodel embed_debug_info=False model_version=latest bmodel_only=False gdma_check=False rvti=False" -o /dev/null
// RUN: cd %t && tpuc-opt m_bm1684x_int8_sym_final.mlir --codegen="model_file=m_int8_sym.bmodel embed_debug_info=False model_version=latest bmodel_only=False gdma_check=False rvti=False" -o /dev/null
// RUN: model_tool --info %t/m_f32.bmodel | filecheck %s --check-prefixes=INFO,INFOF32
// RUN: model_tool --info %t/m_int8_sym.bmodel | filecheck %s --check-prefixes=INFO,INFOINT8
// RUN: model_runner --input %t/in.npz --model %t/m_bm1684x_f32_tpu.mlir --output %t/tpu_f32.npz
// RUN: model_runner --input %t/in.npz --model %t/m_f32.bmodel --output %t/bmodel_f32.npz
// RUN: npz_tool compare %t/bmodel_f32.npz %t/tpu_f32.npz --tolerance 0.9999,0.999 | filecheck %s --check-prefix=SAME
// RUN: model_runner --input %t/in.npz --model %t/m_bm1684x_int8_sym_tpu.mlir --output %t/tpu_int8.npz
// RUN: model_runner --input %t/in.npz --model %t/m_int8_sym.bmodel --output %t/bmodel_int8.npz
// RUN: npz_tool compare %t/bmodel_int8.npz %t/tpu_int8.npz --tolerance 1,1 -v | filecheck %s --check-prefixes=EXACT,SAME

// LOWF32:      module attributes {module.chip = "bm1684x", module.mode = "F32", {{.*}}module.state = "TPU_LOWERED", module.weight_file = "m_bm1684x_f32_tpu_weights.npz"}
// LOWF32:      "tpu.Conv2D"({{.*}}) -> tensor<1x8x16x16xf32> loc(#[[C1:loc[0-9]*]])
// LOWF32:      "tpu.Pool2D"
// LOWF32:      "tpu.Conv2D"
// LOWF32:      "tpu.Add"
// LOWF32:      "tpu.Pool2D"
// LOWF32:      "tpu.MatMul"
// LOWF32:      #[[C1]] = loc("conv1")
// LOWINT8:     module attributes {module.chip = "bm1684x", module.mode = "INT8", {{.*}}module.state = "TPU_LOWERED", module.weight_file = "m_bm1684x_int8_sym_tpu_weights.npz"}
// LOWINT8:     "tpu.Cast"({{.*}}) : (tensor<1x3x16x16xf32>) -> tensor<1x3x16x16x!quant.uniform<i8:f32, {{.*}}>>
// LOWINT8:     "tpu.Conv2D"({{.*}}) -> tensor<1x8x16x16x!quant.uniform<i8:f32, {{.*}}>>
// LOWINT8:     "tpu.MatMul"({{.*}}) -> tensor<1x10x!quant.uniform<i8:f32, {{.*}}>>
// LOWINT8:     "tpu.Cast"({{.*}}) -> tensor<1x10xf32>
// FINAL:       module attributes {{{.*}}module.coeff_addr = 4294967296 : i64{{.*}}module.state = "TPU_ADDRESSED"
// FINAL:       "tpu.Group"
// FINAL:       "tpu.Load"
// FINAL:       "tpu.Store"
// INFO:        chip: bm1684x
// INFOF32:     mode: F32
// INFOINT8:    mode: INT8
// INFO:        layer group 0: {{.*}}conv1
// EXACT:       fc {{.*}}EQUAL
// SAME-NOT:    FAILED
// SAME:        npz compare PASSED.

module attributes {module.chip = "ALL", module.name = "m", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x3x16x16xf32>) -> tensor<1x10xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x3x16x16xf32>) -> tensor<1x3x16x16xf32> loc("x")
    %w1 = "top.Weight"() : () -> tensor<8x3x3x3xf32> loc("w1")
    %b1 = "top.Weight"() : () -> tensor<8xf32> loc("b1")
    %c1 = "top.Conv"(%x, %w1, %b1) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], do_relu = true} : (tensor<1x3x16x16xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32> loc("conv1")
    %p = "top.MaxPool"(%c1) {kernel_shape = [2, 2], strides = [2, 2], pads = [0, 0, 0, 0]} : (tensor<1x8x16x16xf32>) -> tensor<1x8x8x8xf32> loc("pool")
    %w2 = "top.Weight"() : () -> tensor<8x8x3x3xf32> loc("w2")
    %b2 = "top.Weight"() : () -> tensor<8xf32> loc("b2")
    %c2 = "top.Conv"(%p, %w2, %b2) {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32> loc("conv2")
    %a = "top.Add"(%c2, %p) {do_relu = true} : (tensor<1x8x8x8xf32>, tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32> loc("add")
    %g = "top.AvgPool"(%a) {kernel_shape = [8, 8], strides = [8, 8], pads = [0, 0, 0, 0]} : (tensor<1x8x8x8xf32>) -> tensor<1x8x1x1xf32> loc("gap")
    %f = "top.Reshape"(%g) {shape = [1, 8]} : (tensor<1x8x1x1xf32>) -> tensor<1x8xf32> loc("flat")
    %wf = "top.Weight"() : () -> tensor<8x10xf32> loc("wf")
    %bf = "top.Weight"() : () -> tensor<10xf32> loc("bf")
    %y = "top.MatMul"(%f, %wf, %bf) : (tensor<1x8xf32>, tensor<8x10xf32>, tensor<10xf32>) -> tensor<1x10xf32> loc("fc")
    return %y : tensor<1x10xf32>
  }
}

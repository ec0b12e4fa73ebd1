// model_deploy takes TPU-MLIR's flags of its deploy passes (processor-assign, strip-io-quant,
// subnet-divide, op-divide, topo-sort, opt-post-processor, weight-deduplicate, address-assign,
// layer-group, codegen): accepted values change nothing here, others fail naming the pass option
// before any file is written (docs/tpuc-opt.md, "TPU-MLIR's deploy command lines").
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python %S/../rewrites/Inputs/make_weights.py %s %t/m_weight.npz --inputs %t/in.npz
// RUN: printf '# op_name threshold min max\nx 1.5 0.5 1.5\nconv 40.0 0.0 40.0\nadd 42.0 0.0 42.0\n' > %t/table
// F32 has no cast to strip: --quant_input/--quant_output are accepted; the model has no duplicate
// weights; the files are the same (model_deploy's third check ran on both: bmodel == Tpu interpreter).
// RUN: mkdir %t/a %t/b
// RUN: model_deploy --mlir %t/m.mlir --quantize F32 --processor bm1684x --model %t/a/m.bmodel --test_input %t/in.npz --tolerance 0.99,0.99
// RUN: model_deploy --mlir %t/m.mlir --quantize F32 --processor bm1684x --model %t/b/m.bmodel --test_input %t/in.npz --tolerance 0.99,0.99 --quant_input --quant_output --num_device 1 --num_core 1 --disable_topo_sort --opt_post_processor --weight_deduplicate --group_by_cores false --compress_mode none --model_version latest --addr_mode basic --opt 2 --cache_skip
// RUN: diff %t/a/m_bm1684x_f32_tpu.mlir %t/b/m_bm1684x_f32_tpu.mlir
// RUN: cmp %t/a/m.bmodel %t/b/m.bmodel
// INT8 with --quant_input --quant_output: int8 input and output (the Tpu check compares the output
// as (q - zero point) * scale with Top's "add"; the bmodel check is bit-exact on the int8 values).
// RUN: mkdir %t/q
// RUN: model_deploy --mlir %t/m.mlir --quantize INT8 --calibration_table %t/table --processor bm1684x --model %t/q/m.bmodel --test_input %t/in.npz --tolerance 0.9,0.6 --quant_input --quant_output --quant_input_list 1 --quant_output_list 1 2>&1 | filecheck %s --check-prefix=QDEPLOY
// RUN: model_tool --info %t/q/m.bmodel | filecheck %s --check-prefix=QINFO
// QDEPLOY-DAG: npz compare PASSED.
// QDEPLOY-DAG: bmodel check passed: 1 outputs of the cmodel equal the Tpu interpreter's (INT8, bit-exact)
// QINFO: input: x, [1, 4, 8, 8], i8, scale: 0.011811, zero point: 0,
// QINFO: output: add_int8, [1, 4, 8, 8], i8, scale: 0.330709, zero point: 0,
// Refused flags: nothing is written.
// RUN: mkdir %t/c
// RUN: not model_deploy --mlir %t/m.mlir --quantize F32 --processor bm1684x --model %t/c/m.bmodel --quant_input_list 0 2>&1 | filecheck %s --check-prefix=QLIST
// RUN: not model_deploy --mlir %t/m.mlir --quantize F32 --processor bm1684x --model %t/c/m.bmodel --dynamic 2>&1 | filecheck %s --check-prefix=DYNAMIC
// RUN: not model_deploy --mlir %t/m.mlir --quantize F32 --processor bm1684x --model %t/c/m.bmodel --op_divide 2>&1 | filecheck %s --check-prefix=DIVIDE
// RUN: not model_deploy --mlir %t/m.mlir --quantize F32 --processor bm1684x --model %t/c/m.bmodel --num_core 2 2>&1 | filecheck %s --check-prefix=CORES
// RUN: not model_deploy --mlir %t/m.mlir --quantize F32 --processor bm1684x --model %t/c/m.bmodel --merge_weight 2>&1 | filecheck %s --check-prefix=MERGE
// RUN: not model_deploy --mlir %t/m.mlir --quantize F32 --processor bm1684x --model %t/c/m.bmodel --compress_mode weight 2>&1 | filecheck %s --check-prefix=COMPRESS
// RUN: not model_deploy --mlir %t/m.mlir --quantize F32 --processor bm1684x --model %t/c/m.bmodel --group_by_cores true 2>&1 | filecheck %s --check-prefix=GROUPCORES
// RUN: not model_deploy --mlir %t/m.mlir --quantize F32 --processor bm1684x --model %t/c/m.bmodel --model_version 1.0 2>&1 | filecheck %s --check-prefix=VERSION
// RUN: python -c "import os, sys; sys.exit(len(os.listdir('%t/c')))"
// QLIST:   error: strip-io-quant: quant_input_list=0 is not a list of 1-based indices (e.g. 1,3)
// DYNAMIC: error: subnet-divide: dynamic=true is not supported: tpudsl compiles static shapes only (supported: dynamic=false)
// DIVIDE:  error: op-divide: not supported:
// CORES:   error: processor-assign: num_core=2 is not supported on bm1684x, which has 1 core (num_core=1..1)
// MERGE:      error: address-assign: merge_weight=true is not supported: sharing coefficient memory with an earlier model through weight_map_file is not modelled (supported: merge_weight=false)
// COMPRESS:   error: layer-group: compress_mode=weight is not supported: tpudsl compresses no weight or activation (supported: compress_mode=none)
// GROUPCORES: error: layer-group: group_by_cores=true is not supported: tpudsl searches groups without forcing them to the cores (each op's slices are dealt to them) (supported: group_by_cores=auto or group_by_cores=false)
// VERSION:    error: codegen: model_version=1.0 is not supported: tpudsl writes one .bmodel format (supported: model_version=latest or model_version=lastest or model_version=)

module attributes {module.chip = "ALL", module.name = "m", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
    %x = "top.Input"(%arg0) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("x")
    %w = "top.Weight"() : () -> tensor<4x4x3x3xf32> loc("w")
    %b = "top.Weight"() : () -> tensor<4xf32> loc("b")
    %c = "top.Conv"(%x, %w, %b) {kernel_shape = [3, 3], pads = [1, 1, 1, 1], do_relu = true} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32> loc("conv")
    %a = "top.Add"(%c, %x) : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> loc("add")
    return %a : tensor<1x4x8x8xf32>
  }
}

// The passes and options of TPU-MLIR's deploy command lines that tpudsl does not model, or that
// stand in the wrong place, fail with one line naming the pass, the option and what is supported
// (docs/tpuc-opt.md, "TPU-MLIR's deploy command lines"); where the precondition holds they run.
// RUN: rm -rf %t && mkdir %t && cp %s %t/m.mlir
// RUN: python %S/../rewrites/Inputs/make_weights.py %s %t/m_weight.npz
// RUN: printf '# op_name threshold min max\nx 1.5 0.5 1.5\nconv 40.0 0.0 40.0\nadd 42.0 0.0 42.0\n' > %t/table
// RUN: cd %t && tpuc-opt m.mlir --processor-assign="chip=bm1684x mode=INT8" --import-calibration-table="file=table asymmetric=False" --convert-top-to-tpu -o int8.mlir
// RUN: cd %t && tpuc-opt m.mlir --processor-assign="chip=bm1684x mode=F32" --convert-top-to-tpu -o f32.mlir
// RUN: cd %t && tpuc-opt f32.mlir --weight-reorder --layer-group -o grouped.mlir
// RUN: cd %t && tpuc-opt grouped.mlir --address-assign -o final.mlir
//
// RUN: not tpuc-opt %t/m.mlir --processor-top-optimize 2>&1 | filecheck %s --check-prefix=NOCHIP
// RUN: not tpuc-opt %t/f32.mlir --processor-top-optimize 2>&1 | filecheck %s --check-prefix=LOWERED
// RUN: not tpuc-opt %t/m.mlir --processor-assign="chip=bm1684x mode=F32" --convert-top-to-tpu="q_symmetric=True" 2>&1 | filecheck %s --check-prefix=QSYM
// NOCHIP:  error: processor-top-optimize: module.chip is not assigned; run --processor-assign first
// LOWERED: error: processor-top-optimize: module.state is TPU_LOWERED; it runs on a Top module, before --convert-top-to-tpu
// QSYM:    error: convert-top-to-tpu: q_group_size=0 q_symmetric=true need a weight-only mode (W8F16, W8BF16, W4F16, W4BF16), not F32
//
// strip-io-quant: an F32 module has no cast to strip and is unchanged (INT8 modules, the lists and
// the refused options: tpu_mlir_strip_io_quant.mlir)
// RUN: tpuc-opt %t/f32.mlir --strip-io-quant="quant_input=True quant_output=True" -o %t/stripped.mlir
// RUN: tpuc-opt %t/f32.mlir --shape-infer -o %t/same.mlir
// RUN: diff %t/stripped.mlir %t/same.mlir
//
// Where each stands: before --layer-group, before --address-assign.
// RUN: not tpuc-opt %t/grouped.mlir --processor-tpu-optimize 2>&1 | filecheck %s --check-prefix=GROUPED -DPASS=processor-tpu-optimize
// RUN: not tpuc-opt %t/grouped.mlir --strip-io-quant 2>&1 | filecheck %s --check-prefix=GROUPED -DPASS=strip-io-quant
// RUN: not tpuc-opt %t/grouped.mlir --dev-parallel 2>&1 | filecheck %s --check-prefix=GROUPED -DPASS=dev-parallel
// RUN: not tpuc-opt %t/grouped.mlir --subnet-divide 2>&1 | filecheck %s --check-prefix=GROUPED -DPASS=subnet-divide
// RUN: not tpuc-opt %t/grouped.mlir --op-reorder 2>&1 | filecheck %s --check-prefix=GROUPED -DPASS=op-reorder
// RUN: not tpuc-opt %t/grouped.mlir --topo-sort 2>&1 | filecheck %s --check-prefix=GROUPED -DPASS=topo-sort
// RUN: not tpuc-opt %t/final.mlir --core-parallel 2>&1 | filecheck %s --check-prefix=ADDRESSED -DPASS=core-parallel
// RUN: not tpuc-opt %t/final.mlir --opt-post-processor 2>&1 | filecheck %s --check-prefix=ADDRESSED -DPASS=opt-post-processor
// RUN: not tpuc-opt %t/final.mlir --after-layergroup-weight-reorder 2>&1 | filecheck %s --check-prefix=ADDRESSED -DPASS=after-layergroup-weight-reorder
// RUN: not tpuc-opt %t/final.mlir --weight-deduplicate 2>&1 | filecheck %s --check-prefix=ADDRESSED -DPASS=weight-deduplicate
// RUN: not tpuc-opt %t/m.mlir --topo-sort 2>&1 | filecheck %s --check-prefix=TOP
// RUN: sed -e 's/module.weight_file = "[^"]*"/module.weight_file = "missing.npz"/' %t/grouped.mlir > %t/noweights.mlir
// RUN: not tpuc-opt %t/noweights.mlir --weight-deduplicate 2>&1 | filecheck %s --check-prefix=NOWEIGHTS
// and after --layer-group, before --address-assign, these run:
// RUN: tpuc-opt %t/grouped.mlir --core-parallel --opt-post-processor --after-layergroup-weight-reorder -o %t/grouped2.mlir
// RUN: diff %t/grouped.mlir %t/grouped2.mlir
// GROUPED:   error: [[PASS]]: the module is already layer-grouped; it runs before --layer-group
// ADDRESSED: error: [[PASS]]: module.state is TPU_ADDRESSED; it runs on a lowered Tpu module (TPU_LOWERED), before --address-assign
// NOWEIGHTS: error: weight-deduplicate: the weight data is not loaded (the module names no readable weight file)
// TOP:       error: topo-sort: module.state is TOP_F32; it runs on a lowered Tpu module (TPU_LOWERED), before --address-assign
//
// One device, the chip's cores (bm1684x: one), one static subnet; TPU-MLIR's processor-assign writes module.devices/cores.
// RUN: sed -e 's/module.chip = /module.devices = 2 : i64, module.chip = /' %t/f32.mlir > %t/devices.mlir
// RUN: not tpuc-opt %t/devices.mlir --dev-parallel 2>&1 | filecheck %s --check-prefix=DEVICES
// RUN: sed -e 's/module.chip = /module.cores = 2 : i64, module.chip = /' %t/grouped.mlir > %t/cores.mlir
// RUN: not tpuc-opt %t/cores.mlir --core-parallel 2>&1 | filecheck %s --check-prefix=CORES
// On bm1688 (2 cores) the same module passes --core-parallel unchanged: it has no A16MatMul to place (lit_tests/backend/core_parallel.mlir), layer-group and codegen deal the slices.
// RUN: sed -e 's/module.chip = "bm1684x"/module.chip = "bm1688"/' %t/cores.mlir > %t/cores1688.mlir
// RUN: tpuc-opt %t/cores1688.mlir --core-parallel | filecheck %s --check-prefix=CORES1688
// RUN: sed -e 's/module.chip = /module.devices = 1 : i64, module.cores = 1 : i64, module.chip = /' %t/f32.mlir > %t/one.mlir
// RUN: tpuc-opt %t/one.mlir --dev-parallel -o %t/one_dev.mlir
// RUN: tpuc-opt %t/one.mlir --weight-reorder --layer-group --core-parallel -o %t/one_core.mlir
// RUN: not tpuc-opt %t/f32.mlir --subnet-divide="dynamic=True" 2>&1 | filecheck %s --check-prefix=DYNAMIC
// RUN: sed -e 's/^} loc(#loc)$/  func.func @other() { return }\n}/' %t/f32.mlir > %t/twofuncs.mlir
// RUN: not tpuc-opt %t/twofuncs.mlir --subnet-divide 2>&1 | filecheck %s --check-prefix=FUNCS
// DEVICES: error: dev-parallel: module.devices is 2, but tpudsl compiles for one (processor-assign num_device=1): nothing here distributes the model
// CORES:   error: core-parallel: module.cores is 2, but chip bm1684x has 1 core (processor-assign num_core=1..1)
// CORES1688: module attributes {module.chip = "bm1688", module.cores = 2 : i64,
// CORES1688: "tpu.Group"
// DYNAMIC: error: subnet-divide: dynamic=true is not supported: tpudsl compiles static shapes only (supported: dynamic=false)
// FUNCS:   error: subnet-divide: the module has functions main, other; tpudsl compiles one function @main as one subnet
//
// RUN: not tpuc-opt %t/f32.mlir --op-divide 2>&1 | filecheck %s --check-prefix=DIVIDE
// RUN: sed -e 's/"top.Weight"() :/"top.Weight"() {allow_split = [1]} :/' %t/grouped.mlir > %t/split.mlir
// RUN: not tpuc-opt %t/split.mlir --after-layergroup-weight-reorder 2>&1 | filecheck %s --check-prefix=SPLIT
// DIVIDE: error: op-divide: not supported: TPU-MLIR's op-divide cuts chains of large INT8 Conv/Add/MaxPool ops into slices along H (model_deploy --op_divide, for CV18xx chips); tpudsl does not model it (omit --op-divide)
// SPLIT:  split.mlir:{{[0-9]+}}:{{[0-9]+}}: error: after-layergroup-weight-reorder: a weight marked allow_split is split by the layer groups in TPU-MLIR, which tpudsl does not model
//
// --layer-group (the values it accepts: tpu_mlir_layer_group_options.mlir)
// RUN: not tpuc-opt %t/f32.mlir --layer-group="group_by_cores=true" 2>&1 | filecheck %s --check-prefix=LGCORES
// RUN: not tpuc-opt %t/f32.mlir --layer-group="compress_mode=weight" 2>&1 | filecheck %s --check-prefix=LGCOMPRESS
// RUN: not tpuc-opt %t/f32.mlir --layer-group="debugger=1" 2>&1 | filecheck %s --check-prefix=LGDEBUG
// RUN: not tpuc-opt %t/f32.mlir --layer-group="config_filename=lg.json" 2>&1 | filecheck %s --check-prefix=LGCONFIG
// RUN: not tpuc-opt %t/f32.mlir --layer-group="enable_lghash=true" 2>&1 | filecheck %s --check-prefix=LGHASH
// RUN: not tpuc-opt %t/f32.mlir --layer-group="lghash_dir=cache" 2>&1 | filecheck %s --check-prefix=LGHASHDIR
// LGCORES:    error: layer-group: group_by_cores=true is not supported: tpudsl searches groups without forcing them to the cores (each op's slices are dealt to them) (supported: group_by_cores=auto or group_by_cores=false)
// LGCOMPRESS: error: layer-group: compress_mode=weight is not supported: tpudsl compresses no weight or activation (supported: compress_mode=none)
// LGDEBUG:    error: layer-group: debugger=1 is not supported: TPU-MLIR's layer-group debugger modes are not modelled (supported: debugger=0)
// LGCONFIG:   error: layer-group: config_filename=lg.json is not supported: a layer-group configuration file is not read (supported: config_filename=)
// LGHASH:     error: layer-group: enable_lghash=true is not supported: groupings cached by hash are not read (supported: enable_lghash=false)
// LGHASHDIR:  error: layer-group: lghash_dir=cache is not supported: groupings cached by hash are not read (supported: lghash_dir=)
//
// --address-assign: mlir_shell.py's other forms
// RUN: not tpuc-opt %t/grouped.mlir --address-assign="merge_weight=true weight_map_file=_weight_map.csv" 2>&1 | filecheck %s --check-prefix=MERGE
// RUN: not tpuc-opt %t/grouped.mlir --address-assign="iomem_set=1" 2>&1 | filecheck %s --check-prefix=IOMEM
// RUN: not tpuc-opt %t/grouped.mlir --address-assign="same_addr=0:0" 2>&1 | filecheck %s --check-prefix=SAMEADDR
// RUN: not tpuc-opt %t/grouped.mlir --address-assign="save_io_alone_config=io.json" 2>&1 | filecheck %s --check-prefix=SAVEIO
// RUN: not tpuc-opt %t/grouped.mlir --address-assign="use_io_alone_config=io.json" 2>&1 | filecheck %s --check-prefix=USEIO
// MERGE:    error: address-assign: merge_weight=true is not supported: sharing coefficient memory with an earlier model through weight_map_file is not modelled (supported: merge_weight=false)
// IOMEM:    error: address-assign: iomem_set=1 is not supported: inputs and outputs are placed by addr_mode: among the activations, in io_alone's IO region or in memory tags (supported: iomem_set=)
// SAMEADDR: error: address-assign: same_addr=0:0 is not supported: inputs and outputs are placed by addr_mode: among the activations, in io_alone's IO region or in memory tags (supported: same_addr=)
// SAVEIO:   error: address-assign: save_io_alone_config=io.json is not supported: inputs and outputs are placed by addr_mode: among the activations, in io_alone's IO region or in memory tags (supported: save_io_alone_config=)
// USEIO:    error: address-assign: use_io_alone_config=io.json is not supported: inputs and outputs are placed by addr_mode: among the activations, in io_alone's IO region or in memory tags (supported: use_io_alone_config=)
//
// --codegen: model_version latest (also TPU-MLIR's default spelling lastest, and mlir_shell.py's empty one)
// RUN: tpuc-opt %t/final.mlir --codegen="model_file=%t/a.bmodel model_version=lastest" -o /dev/null
// RUN: tpuc-opt %t/final.mlir --codegen="model_file=%t/b.bmodel model_version= bmodel_only=True" -o /dev/null
// RUN: cmp %t/a.bmodel %t/b.bmodel
// RUN: not tpuc-opt %t/final.mlir --codegen="model_file=%t/c.bmodel model_version=1.0" 2>&1 | filecheck %s --check-prefix=VERSION
// RUN: not tpuc-opt %t/final.mlir --codegen="model_file=%t/c.bmodel gdma_check=True" 2>&1 | filecheck %s --check-prefix=GDMA
// RUN: not tpuc-opt %t/final.mlir --codegen="model_file=%t/c.bmodel rvti=True" 2>&1 | filecheck %s --check-prefix=RVTI
// RUN: not ls %t/c.bmodel
// RUN: not tpuc-opt %t/final.mlir --codegen="model_file=%t/c.bmodel" --debug_cmd=disable_lg 2>&1 | filecheck %s --check-prefix=DEBUGCMD
// VERSION:  error: codegen: model_version=1.0 is not supported: tpudsl writes one .bmodel format (supported: model_version=latest or model_version=lastest or model_version=)
// GDMA:     error: codegen: gdma_check=true is not supported: TPU-MLIR's GDMA check is not modelled (supported: gdma_check=false)
// RVTI:     error: codegen: rvti=true is not supported: TPU-MLIR's rvti output is not modelled (supported: rvti=false)
// DEBUGCMD: error: --debug_cmd=disable_lg: TPU-MLIR's debug commands are not modelled (supported: --debug_cmd= with no commands)

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

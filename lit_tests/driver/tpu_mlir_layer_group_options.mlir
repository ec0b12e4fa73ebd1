// TPU-MLIR's --layer-group options as mlir_shell.py writes them are accepted at the values tpudsl
// models: disable_group_overlap=true is tpudsl's prefetch=false (the next group's weights are not
// loaded during the group before: no other_up_overlap_op), false keeps the prefetch; lgcache
// (a cache of TPU-MLIR's search results: tpudsl writes none) true or false, group_by_cores auto or
// false (one core) give the same groups. The values it refuses: tpu_mlir_stage_errors.mlir. The model:
// four 3x3 convs of 8 channels, a and d returned: two groups, the second's first filter prefetched
// (no tensor read twice, so no shared load changes the grouping: docs/backend.md).
// RUN: tpuc-opt %s --layer-group="opt=2 group_by_cores=auto compress_mode=none debugger=0 disable_group_overlap=false lgcache=true config_filename= enable_lghash=false lghash_dir=" -o %t.verbatim.mlir
// RUN: tpuc-opt %s --layer-group -o %t.default.mlir
// RUN: diff %t.default.mlir %t.verbatim.mlir
// RUN: filecheck %s --check-prefix=OVERLAP < %t.verbatim.mlir
// RUN: tpuc-opt %s --layer-group="disable_group_overlap=true lgcache=false group_by_cores=false" -o %t.no_overlap.mlir
// RUN: tpuc-opt %s --layer-group="prefetch=false" -o %t.no_prefetch.mlir
// RUN: diff %t.no_prefetch.mlir %t.no_overlap.mlir
// RUN: filecheck %s --check-prefix=NOOVERLAP < %t.no_overlap.mlir

// OVERLAP:       other_up_overlap_op = [0]
// NOOVERLAP:     "tpu.Group"
// NOOVERLAP-NOT: other_up_overlap_op
module attributes {module.chip = "tiny", module.mode = "F32", module.state = "TPU_LOWERED"} {
  func.func @main(%arg0: tensor<1x8x48x16xf32>) -> (tensor<1x8x48x16xf32>, tensor<1x8x48x16xf32>) {
    %x = "top.Input"(%arg0) : (tensor<1x8x48x16xf32>) -> tensor<1x8x48x16xf32> loc("x")
    %w0 = "top.Weight"() : () -> tensor<8x8x3x3xf32> loc("w0")
    %w1 = "top.Weight"() : () -> tensor<8x8x3x3xf32> loc("w1")
    %w2 = "top.Weight"() : () -> tensor<8x8x3x3xf32> loc("w2")
    %w3 = "top.Weight"() : () -> tensor<8x8x3x3xf32> loc("w3")
    %n = "top.None"() : () -> none loc("none")
    %a = "tpu.Conv2D"(%x, %w0, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = false} : (tensor<1x8x48x16xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x48x16xf32> loc("a")
    %b = "tpu.Conv2D"(%a, %w1, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = false} : (tensor<1x8x48x16xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x48x16xf32> loc("b")
    %c = "tpu.Conv2D"(%b, %w2, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = false} : (tensor<1x8x48x16xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x48x16xf32> loc("c")
    %d = "tpu.Conv2D"(%c, %w3, %n) {kernel_shape = [3, 3], strides = [1, 1], pads = [1, 1, 1, 1], with_bias = false} : (tensor<1x8x48x16xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x48x16xf32> loc("d")
    return %a, %d : tensor<1x8x48x16xf32>, tensor<1x8x48x16xf32>
  }
}

// RUN: tpuc-opt %s --processor-assign="chip=BM1684X mode=f16" | filecheck %s
// RUN: not tpuc-opt %s --processor-assign="chip=bm9999 mode=F16" 2>&1 | filecheck %s --check-prefix=CHIP
// RUN: not tpuc-opt %s --processor-assign="chip=bm1684x mode=INT4" 2>&1 | filecheck %s --check-prefix=MODE
// RUN: not tpuc-opt %s --processor-assign="chip=bm1684x mode=F16 num_core=2" 2>&1 | filecheck %s --check-prefix=CORE
// RUN: not tpuc-opt %s --processor-assign="chip=bm1688 mode=F16 num_core=3" 2>&1 | filecheck %s --check-prefix=CORE1688
// RUN: not tpuc-opt %s --processor-assign="chip=bm1688 mode=F16 num_core=0" 2>&1 | filecheck %s --check-prefix=CORE0
// RUN: tpuc-opt %s --processor-assign="chip=bm1688 mode=F16 num_core=2" | filecheck %s --check-prefix=TWO
// RUN: tpuc-opt %s --processor-assign="chip=bm1688 mode=F16 num_core=1" | filecheck %s --check-prefix=ONE
// RUN: tpuc-opt %s --processor-assign="chip=bm1684x mode=F16 addr_mode=basic" | filecheck %s
// RUN: tpuc-opt %s --processor-assign="chip=bm1684x mode=F16 addr_mode=io_alone" | filecheck %s --check-prefix=IOALONE
// RUN: tpuc-opt %s --processor-assign="chip=bm1688 mode=F16 addr_mode=io_tag" | filecheck %s --check-prefix=IOTAG
// RUN: tpuc-opt %s --processor-assign="chip=tiny mode=F16 addr_mode=io_tag_fuse" | filecheck %s --check-prefix=IOFUSE
// RUN: tpuc-opt %s --processor-assign="chip=bm1688 mode=F16 addr_mode=io_tag" --processor-assign="chip=bm1688 mode=F16" | filecheck %s --check-prefix=AGAIN
// RUN: not tpuc-opt %s --processor-assign="chip=bm1684x mode=F16 addr_mode=io_tag" 2>&1 | filecheck %s --check-prefix=ADDR
// RUN: not tpuc-opt %s --processor-assign="chip=bm1684x mode=F16 addr_mode=io_tag_fuse" 2>&1 | filecheck %s --check-prefix=FUSE
// RUN: not tpuc-opt %s --processor-assign="chip=bm1688 mode=F16 addr_mode=io_reloc" 2>&1 | filecheck %s --check-prefix=RELOC
// A lowered (or addressed) module keeps its chip, mode, cores and address mode: its ops are lowered for them.
// RUN: sed -e 's/TOP_F32/TPU_ADDRESSED/' %s > %t.tpu.mlir
// RUN: not tpuc-opt %t.tpu.mlir --processor-assign="chip=bm1688 mode=F16 num_core=1" 2>&1 | filecheck %s --check-prefix=LOWERED
// A module without module.state is taken as Top; one whose state is not a string is refused.
// RUN: sed -e 's/, module.state = "TOP_F32"//' %s | tpuc-opt --processor-assign="chip=bm1684x mode=F16" | filecheck %s --check-prefix=UNSET
// RUN: sed -e 's/module.state = "TOP_F32"/module.state = 3 : i64/' %s > %t.int.mlir
// RUN: not tpuc-opt %t.int.mlir --processor-assign="chip=bm1684x mode=F16" 2>&1 | filecheck %s --check-prefix=NOTSTR

// The chip name is normalised to TPU-MLIR's lower case, the mode to upper case.
// CHECK: module attributes {module.chip = "bm1684x", module.mode = "F16", module.name = "m", module.state = "TOP_F32"}
// io_alone, io_tag and io_tag_fuse are recorded as TPU-MLIR spells them (auto and basic record
// nothing: the lines above; a second run with auto takes the attribute away).
// IOALONE: module attributes {module.addr_mode = "io_alone", module.chip = "bm1684x", module.mode = "F16", module.name = "m", module.state = "TOP_F32"}
// IOTAG: module attributes {module.addr_mode = "io_tag", module.chip = "bm1688", module.mode = "F16", module.name = "m", module.state = "TOP_F32"}
// IOFUSE: module attributes {module.addr_mode = "io_tag_fuse", module.chip = "tiny", module.mode = "F16", module.name = "m", module.state = "TOP_F32"}
// AGAIN: module attributes {module.chip = "bm1688", module.mode = "F16", module.name = "m", module.state = "TOP_F32"}
// CHIP: error: processor-assign: unknown chip 'bm9999'; known chips: bm1684x, bm1688, tiny
// MODE: error: processor-assign: mode 'INT4' is not one of F32, F16, BF16, INT8, W8F16, W8BF16, W4F16, W4BF16
// num_core: 1 up to the chip's cores (chips.py: bm1684x 1, bm1688 2), recorded as module.cores when above 1.
// CORE: error: processor-assign: num_core=2 is not supported on bm1684x, which has 1 core (num_core=1..1)
// CORE1688: error: processor-assign: num_core=3 is not supported on bm1688, which has 2 cores (num_core=1..2)
// CORE0: error: processor-assign: num_core=0 is not supported on bm1688, which has 2 cores (num_core=1..2)
// TWO: module attributes {module.chip = "bm1688", module.cores = 2 : i64, module.mode = "F16", module.name = "m", module.state = "TOP_F32"}
// ONE: module attributes {module.chip = "bm1688", module.mode = "F16", module.name = "m", module.state = "TOP_F32"}
// The tag modes need memory tags (TPU-MLIR asserts bm1688); io_reloc is not modelled on any chip.
// ADDR: error: processor-assign: addr_mode=io_tag needs a chip with memory tags; bm1684x has none (chips with memory tags: bm1688, tiny)
// FUSE: error: processor-assign: addr_mode=io_tag_fuse needs a chip with memory tags; bm1684x has none (chips with memory tags: bm1688, tiny)
// LOWERED: error: processor-assign: module.state is TPU_ADDRESSED; it assigns the chip and mode of a Top module, before --convert-top-to-tpu
// UNSET: module attributes {module.chip = "bm1684x", module.mode = "F16", module.name = "m"}
// NOTSTR: error: processor-assign: module.state is 3 : i64; it assigns the chip and mode of a Top module, before --convert-top-to-tpu
// RELOC: error: processor-assign: addr_mode=io_reloc is not supported (only addr_mode=auto or addr_mode=basic or addr_mode=io_alone or addr_mode=io_tag or addr_mode=io_tag_fuse)
module attributes {module.name = "m", module.state = "TOP_F32"} {
  func.func @main(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("x")
    return %0 : tensor<1x4xf32>
  }
}

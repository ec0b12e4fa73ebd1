"""`--processor-assign="chip=bm1684x mode=F16"`: which chip and precision the module is lowered for.

Sets `module.chip` and `module.mode`, as TPU-MLIR's pass does; `--convert-top-to-tpu` reads them.
`addr_mode=io_alone|io_tag|io_tag_fuse` is recorded as TPU-MLIR spells it, `module.addr_mode =
"io_alone"`: `--address-assign` then gives the inputs and outputs an IO region of their own, or
(io_tag, io_tag_fuse: chips with memory tags, `Chip.memory_tags`) tagged memories (docs/backend.md).
`num_core=N` (1 up to the chip's cores, `chips.Chip.cores`: bm1688 has 2) is recorded as
`module.cores = N` when N > 1 (absent means 1, so single-core modules print as before):
layer-group deals each op's slices to the cores and codegen writes one command stream per core
(docs/backend.md, "Several cores"). The other options of TPU-MLIR's command line are accepted with
the values this product supports (one device, the auto/basic, io_alone and io_tag layouts) and rejected
otherwise, so a command line asking for something we do not model fails instead of being ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.passes import ModulePass

from tpudsl.backend.chips import ADDR_MODES, check_addr_mode, check_cores, chip_for
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.lowering.tpu_mlir_stages import require_top


@dataclass(frozen=True)
class ProcessorAssignPass(ModulePass):
    """Record the target chip and quantization mode in the module (module.chip, module.mode)."""

    name = "processor-assign"

    chip: str = ""
    mode: str = ""
    num_device: int = 1
    num_core: int = 1
    addr_mode: str = "auto"
    high_precision: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # a lowered module's Tpu ops are its chip's already
        require_top(op, self.name, allow_unset=True, does="assigns the chip and mode of a Top module")
        chip = chip_for(self.chip, "processor-assign")
        mode = self.mode.upper()
        if mode not in chip.modes:
            raise TpudslError(f"processor-assign: mode '{self.mode}' is not one of {', '.join(chip.modes)}")
        # addr_mode basic is TPU-MLIR's one neuron region for activations, inputs and outputs: what
        # address-assign does without module.addr_mode (auto); the others are recorded below; io_reloc
        # has no layout in TPU-MLIR's address assignment to model (docs/backend.md).
        check_cores(chip, self.num_core, f"processor-assign: num_core={self.num_core} is not supported on "
                    f"{chip.name}, which", "num_core")
        accepted = {
            "num_device": (self.num_device, (1,)),
            "addr_mode": (self.addr_mode, ("auto", "basic", *ADDR_MODES)),
            "high_precision": (self.high_precision, (False,)),
        }
        for key, (value, only) in accepted.items():
            if value not in only:
                shown = " or ".join(f"{key}={v}" for v in only)
                raise TpudslError(f"processor-assign: {key}={value} is not supported (only {shown})")
        check_addr_mode(chip, self.addr_mode, f"processor-assign: addr_mode={self.addr_mode}")
        op.attributes["module.chip"] = StringAttr(chip.name)
        op.attributes["module.mode"] = StringAttr(mode)
        # auto and basic record nothing: they write the files they wrote before the attribute.
        if self.addr_mode in ADDR_MODES:
            op.attributes["module.addr_mode"] = StringAttr(self.addr_mode)
        else:
            op.attributes.pop("module.addr_mode", None)
        if self.num_core > 1:
            op.attributes["module.cores"] = IntegerAttr(self.num_core, i64)
        else:
            op.attributes.pop("module.cores", None)

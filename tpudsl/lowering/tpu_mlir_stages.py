"""`--processor-top-optimize`: the pass of TPU-MLIR's lowering command line that tpudsl has no work for.

TPU-MLIR's mlir_shell.py lowers with `--processor-assign=... [--import-calibration-table=...]
--processor-top-optimize --convert-top-to-tpu=... --canonicalize --weight-fold`. The pass is
registered so that line runs unchanged, and it checks where it stands in it rather than being a
blind identity (docs/tpuc-opt.md, "TPU-MLIR's deploy command lines").
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from tpudsl.ir.diagnostics import TpudslError


def require_top(module: ModuleOp, pass_name: str, *, allow_unset: bool, does: str = "runs on a Top module") -> None:
    """The module is still Top (module.state TOP_*): the pass, which `does` what it says, stands
    before --convert-top-to-tpu. `allow_unset`: a module without module.state passes too (a
    hand-written Top module, as processor-assign takes)."""
    state = module.attributes.get("module.state")
    if state is None and allow_unset:
        return
    if not (isinstance(state, StringAttr) and state.data.startswith("TOP_")):
        shown = "not set" if state is None else state.data if isinstance(state, StringAttr) else str(state)
        raise TpudslError(f"{pass_name}: module.state is {shown}; it {does}, before --convert-top-to-tpu")


@dataclass(frozen=True)
class ProcessorTopOptimizePass(ModulePass):
    """Chip-specific Top rewrites before lowering (TPU-MLIR); tpudsl has none: checks the Top module has a chip.

    TPU-MLIR rewrites some Top ops into forms its chip's lowering handles better. tpudsl's lowering
    tables (LOWERINGS, INT8_LOWERINGS) take every Top op as it is for every chip, so there is nothing
    to rewrite; the pass checks its precondition: --processor-assign ran (module.chip names a chip)
    and the module is still Top (module.state TOP_*), i.e. it stands before --convert-top-to-tpu."""

    name = "processor-top-optimize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        chip = op.attributes.get("module.chip")
        if not isinstance(chip, StringAttr) or chip.data == "ALL":
            raise TpudslError(f"{self.name}: module.chip is not assigned; run --processor-assign first")
        require_top(op, self.name, allow_unset=False)

"""What the calibration-side rewrites (`equalize.py`, `smooth_quant.py`) share: reading the
constant behind an operand, giving a changed weight or activation a derived name, and the record
of a pair they skipped.

Names survive (docs/architecture.md): a rewritten weight is a new `top.Weight` named
`<old>_<suffix>` (the old one goes when nothing else reads it), and an op whose result changes
value is renamed `<old>_<suffix>`, so that no tensor keeps a name whose values differ from the
ONNX model's tensor of that name (npz_tool compare would report them), and a calibration table of
the rewritten module cannot be imported into the original one (its names are missing there).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.ir import Operation, SSAValue

from tpudsl.dialects.opdef import derived_loc, loc_name
from tpudsl.ir.module import WEIGHT_OP, TopModule


@dataclass(frozen=True)
class Skipped:
    """An op a rewrite found a pair for but left alone, and the rule that stopped it."""

    op: str  # the loc name of the pair's first op
    rule: str

    def __str__(self) -> str:
        return f"'{self.op}' skipped: {self.rule}"


def weight_array(mod: TopModule, value: SSAValue) -> np.ndarray | None:
    """The data of the `top.Weight` producing `value`, or None when it is computed (or `none`)."""
    owner = value.owner
    if isinstance(owner, Operation) and owner.name == WEIGHT_OP:
        return mod.weight_of(owner)
    return None


def users(value: SSAValue) -> list[tuple[Operation, int]]:
    """(op, operand index) of every use of `value`, the function's return included."""
    return [(use.operation, use.index) for use in value.uses]


def replace_weight(mod: TopModule, op: Operation, index: int, array: np.ndarray, suffix: str) -> None:
    """Operand `index` of `op` (a `top.Weight` read by `op` alone) becomes a new weight holding
    `array` (in the old one's dtype), named `<old name>_<suffix>`; the old weight op is erased."""
    old = op.operands[index].owner
    assert isinstance(old, Operation) and old.name == WEIGHT_OP
    dtype = mod.weight_of(old).dtype
    new = mod.add_weight(f"{loc_name(old)}_{suffix}", np.asarray(array).astype(dtype), before=old)
    op.operands[index] = new.results[0]
    old.detach()
    old.erase()
    del mod.weights[loc_name(old)]


def rename(op: Operation, suffix: str) -> None:
    """`op`'s result changed value: it is called `<old name>_<suffix>` from now on."""
    op.location = derived_loc(op, suffix)

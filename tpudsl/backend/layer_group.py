"""`--layer-group`: how each Tpu op is cut into slices that fit the chip's local memory.

The simplest form of TPU-MLIR's layer groups: every op is its own group. Its output is split along
N first, then along H, into the fewest parts whose tiles (input parts with their halos, the output
part, the weights loaded whole) fit one lane's local memory (`slicing.footprint`). The decision is
written on the op as TPU-MLIR names it on tpu.Group, `nsecs` and `hsecs` (i64), plus `lmem_bytes`,
the bytes per lane it uses, so the IR shows (and round-trips) what codegen will do.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from tpudsl.backend.chips import Chip, chip_named
from tpudsl.backend.slicing import KINDS, check_modelled, footprint, output_dims, split, tile_bytes, whole_tiles
from tpudsl.dialects.opdef import describe
from tpudsl.ir.diagnostics import TpudslError


def module_chip(module: ModuleOp) -> Chip:
    attr = module.attributes.get("module.chip")
    try:
        return chip_named(attr.data if isinstance(attr, StringAttr) else "")
    except KeyError:
        raise TpudslError(f"backend: module.chip is {attr}; run --processor-assign first") from None


def choose_secs(op: Operation, chip: Chip) -> tuple[int, int, int]:
    """(nsecs, hsecs, bytes per lane): the fewest slices, N before H, that fit local memory."""
    weights = sum(tile_bytes(t, chip) for t in whole_tiles(op))
    if weights > chip.lmem_bytes:
        raise TpudslError(f"layer-group: {describe(op)}: its weights (loaded whole, never sliced) need {weights} "
                          f"bytes per lane; chip {chip.name} has {chip.lmem_bytes}")
    n_total, h_total = output_dims(op)
    for hsecs in range(1, h_total + 1):
        for nsecs in range(1, n_total + 1):
            if len(split(n_total, nsecs)) != nsecs or len(split(h_total, hsecs)) != hsecs:
                continue  # the same parts as a smaller count
            need = footprint(op, nsecs, hsecs, chip)
            if need <= chip.lmem_bytes:
                return nsecs, hsecs, need
    least = footprint(op, n_total, h_total, chip)
    raise TpudslError(f"layer-group: {describe(op)} needs {least} bytes of local memory per lane even in slices "
                      f"of one row; chip {chip.name} has {chip.lmem_bytes}")


@dataclass(frozen=True)
class LayerGroupPass(ModulePass):
    """Split every Tpu op along N and H so that its slices fit the chip's local memory."""

    name = "layer-group"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        chip = module_chip(op)
        for inner in op.walk():
            if inner.name in KINDS:
                check_modelled(inner)
                nsecs, hsecs, need = choose_secs(inner, chip)
                inner.attributes["nsecs"] = IntegerAttr(nsecs, i64)
                inner.attributes["hsecs"] = IntegerAttr(hsecs, i64)
                inner.attributes["lmem_bytes"] = IntegerAttr(need, i64)

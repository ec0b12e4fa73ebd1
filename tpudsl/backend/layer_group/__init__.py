"""`--layer-group="opt=1|2|3"`: how the Tpu ops are cut into slices that fit the chip's local memory.

opt=1: every op is its own group (`single.py`): its output is split along N, then H, into the
fewest parts that fit. opt=2 (the default) also searches for groups of several consecutive ops
(`search.py`) whose intermediate tensors stay in local memory (`plan.py`); opt=3 is opt=2 (no
further strategy yet). The decisions are attributes on the ops, so the IR shows and round-trips
what codegen will do: every op gets `nsecs`, `hsecs` (TPU-MLIR's names on tpu.Group) and
`lmem_bytes` (its group's bytes per lane); an op in a group of several also gets `group_id` and
`out_addr`, the local address of its output tile (the group's nsecs/hsecs slice its last op's output).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass

from tpudsl.backend.chips import Chip, chip_named
from tpudsl.ir.diagnostics import TpudslError


def module_chip(module: ModuleOp) -> Chip:
    attr = module.attributes.get("module.chip")
    try:
        return chip_named(attr.data if isinstance(attr, StringAttr) else "")
    except KeyError:
        raise TpudslError(f"backend: module.chip is {attr}; run --processor-assign first") from None


def group_members(block: Block) -> dict[Operation, list[Operation]]:
    """Each op of a group of several ops -> the group's ops in order (by their `group_id`). A group
    must be a run of consecutive ops (weights, inputs and none aside): codegen emits it where its
    first op is, so an op in between would run after the group that reads its result."""
    by_id: dict[int, list[Operation]] = {}
    computing = [op for op in block.ops if op.name not in ("top.Weight", "top.Input", "top.None")]
    for at, op in enumerate(computing):
        gid = op.attributes.get("group_id")
        if isinstance(gid, IntegerAttr):
            members = by_id.setdefault(gid.value.data, [])
            if members and computing[at - 1] is not members[-1]:
                raise TpudslError(f"layer group {gid.value.data} is not a run of consecutive ops (at "
                                  f"{computing[at - 1].name} before {op.name}); run --layer-group again")
            members.append(op)
    return {op: ops for ops in by_id.values() for op in ops}


def describe_groups(module: ModuleOp) -> str:
    """The decisions as text, one line per group (model_deploy --debug writes it)."""
    from tpudsl.backend.slicing import KINDS
    from tpudsl.dialects.opdef import loc_name

    lines, seen, groups = [], set(), {}
    for op in module.walk():
        if op.name not in KINDS or op in seen:
            continue
        block = op.parent_block()
        if block not in groups:
            groups[block] = group_members(block)  # type: ignore[arg-type]
        members = groups[block].get(op, [op])
        seen.update(members)
        a = {k: op.attributes[k].value.data for k in ("nsecs", "hsecs", "lmem_bytes")}  # type: ignore[attr-defined]
        names = ", ".join(loc_name(m) or m.name for m in members)
        lines.append(f"group of {len(members)}: nsecs={a['nsecs']} hsecs={a['hsecs']} "
                     f"lmem_bytes={a['lmem_bytes']}: {names}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class LayerGroupPass(ModulePass):
    """Split the Tpu ops into slices that fit local memory; opt=2/3 also groups consecutive ops.
    slice_weights: TEST-ONLY; groups of one budget dynamic filters like activations
    (slicing.budgeted_whole_tiles) to reproduce the DragGAN failure. Never use it to deploy."""

    name = "layer-group"

    opt: int = 2
    slice_weights: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        from tpudsl.backend.layer_group.search import search
        from tpudsl.backend.layer_group.single import choose_secs
        from tpudsl.backend.slicing import GLOBAL_ONLY, KINDS, check_modelled

        if self.opt not in (1, 2, 3):
            raise TpudslError(f"layer-group: opt={self.opt} is not one of 1 (groups of one), 2, 3 (group search)")
        chip = module_chip(op)
        ops = [inner for inner in op.walk() if inner.name in KINDS]
        for inner in ops:
            check_modelled(inner)
            for stale in ("group_id", "out_addr"):  # an earlier run's groups
                inner.attributes.pop(stale, None)
            _set(inner, zip(("nsecs", "hsecs", "lmem_bytes"), choose_secs(inner, chip, self.slice_weights)))
        if self.opt == 1:
            return
        # the global-only moves stay in the sequence: a group never spans one (codegen's order)
        in_order = [inner for inner in op.walk() if inner.name in KINDS or inner.name in GLOBAL_ONLY]
        for gid, plan in enumerate(search(in_order, chip)):
            for member in plan.ops:
                _set(member, {"group_id": gid, "nsecs": plan.nsecs, "hsecs": plan.hsecs,
                              "lmem_bytes": plan.lmem_bytes, "out_addr": plan.out_addr[member]}.items())


def _set(op: Operation, items) -> None:
    for key, value in items:
        op.attributes[key] = IntegerAttr(value, i64)

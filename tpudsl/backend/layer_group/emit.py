"""The command stream of one layer group of several ops (a `GroupPlan`).

Every op's whole tiles (weights, a dynamic filter) are loaded once, in the first slice just
before the op's first record, so that GDMA loads them while BDC computes the ops before it. Per
slice, in order (N outer, H inner), each op in turn: the parts of its operands that come from outside the
group are loaded (with their halos) into that input's buffer for the slice's parity, so the loads
of slice i+1 do not overwrite what slice i computes on; its BDC record computes its output tile
from local memory (an intermediate's part is read in place, inside the tile its producer wrote:
the union of its consumers' parts); a result used
outside the group (the last op's, and any other) is stored right after its record. Each record is tagged with the op it belongs to (debug info, --profile).
The group itself (id, ops, nsecs/hsecs, its instruction range) is the header's layer_groups
(model_tool --info, the timeline's bands).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Operation

from tpudsl.backend import isa
from tpudsl.backend.chips import Chip
from tpudsl.backend.codegen import _gaddr, compute_record
from tpudsl.backend.layer_group.plan import GroupPlan, plan_group
from tpudsl.backend.slicing import Tile, check_modelled, dtype_of, whole_tiles
from tpudsl.dialects.opdef import describe, loc_name
from tpudsl.ir.diagnostics import TpudslError

Record = tuple[Operation, isa.Record]


def group_records(plan: GroupPlan, gaddr: Callable[[Tile], int]) -> list[Record]:
    """The group's records, each with its op; `gaddr` gives a tile's global address."""

    def gdma(cls: type[isa.GdmaLoad], tile: Tile, laddr: int) -> isa.GdmaLoad:
        return cls(isa.DTYPES[dtype_of(tile.value)], gaddr(tile), *tile.strides, laddr, *tile.shape)

    out: list[Record] = []
    for s, parts in enumerate(plan.slices):
        for op in plan.ops:
            if s == 0:  # just before its first use: GDMA loads them while BDC computes the ops before
                out += [(op, gdma(isa.GdmaLoad, t, laddr)) for t, laddr in zip(whole_tiles(op), plan.whole[op],
                                                                               strict=True)]
            part, ins = parts[op], []
            for i, t in enumerate(part.inputs):
                if plan.is_member(t.value):
                    ins.append((plan.reads[s][(op, i)], t))  # in place, inside its producer's tile
                else:
                    laddr = plan.loads[(op, i)][s % 2]
                    out.append((op, gdma(isa.GdmaLoad, t, laddr)))
                    ins.append((laddr, t))
            out.append((op, compute_record(op, ins, plan.whole[op], (plan.out_addr[op], part.output), part)))
            if op in plan.stored:  # right away: a later op's tile may reuse these bytes
                out.append((op, gdma(isa.GdmaStore, part.output, plan.out_addr[op])))
    return out


def emit_group(ops: list[Operation], chip: Chip, prog) -> None:
    """Append the records of the group `ops` (as --layer-group left them) to codegen's `prog`."""
    for op in ops:
        check_modelled(op)
    plan = plan_group(ops, chip, _int(ops[-1], "nsecs"), _int(ops[-1], "hsecs"))
    if isinstance(plan, str) or any(_int(op, "out_addr") != plan.out_addr[op] for op in ops):
        why = plan if isinstance(plan, str) else "its local addresses differ from the attributes"
        raise TpudslError(f"codegen: group {_int(ops[0], 'group_id')} ({describe(ops[0])} ...): {why}; "
                          f"run --layer-group again")
    current, first = None, len(prog.records)
    for op, record in group_records(plan, _gaddr):
        if op is not current:
            prog.debug.append((len(prog.records), loc_name(op) or op.name))
            current = op
        prog.records.append(record)
    prog.groups.append({"id": _int(ops[0], "group_id"), "ops": [loc_name(op) or op.name for op in ops],
                        "nsecs": plan.nsecs, "hsecs": plan.hsecs, "first": first, "count": len(prog.records) - first})


def _int(op: Operation, key: str) -> int:
    attr = op.attributes.get(key)
    if not isinstance(attr, IntegerAttr):
        raise TpudslError(f"codegen: {describe(op)} is in a layer group but has no {key}; run --layer-group again")
    return attr.value.data

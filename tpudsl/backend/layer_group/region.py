"""A layer group of several ops in the IR: a `tpu.Group` region, built from a `GroupPlan` by
--layer-group, read back (and checked) by codegen.

As TPU-MLIR's GroupOps.cpp builds it: the group's ops move into the region of a `tpu.Group` placed
after its last op; every tensor an op reads from outside the group goes through a `tpu.Load`
(named `load_<tensor>`, `load_<tensor>_<k>` for the k-th further load of the same tensor in the
group: a consumer whose part differs from the earlier readers' in some slice has its own buffers;
one whose part is the same tile in every slice reads the earlier reader's Load, `GroupPlan.shared`,
so one Load then feeds several ops), every result used outside
leaves through a `tpu.Store` (named as the op it stores) and the group's results are those
Stores' values, in the ops' order (`tpu.Yield`); the group's loc names its results (a fused loc
when it has several, as TPU-MLIR's). Region order is program order within a slice:
each op's Loads (whole tiles first), the op, its Store; the ops' `ginfo` ids number them in that
order, and `flow` is TPU-MLIR's time-step list over them (-1, the ids of step 0, -2, ...: step k is
the k-th op with its Loads and Store). `ginfo` is a `#tpu.lg<...>` (dialects/lg.py): out_addr and
out_size (a Load's first buffer; `buffer_addr`/`buffer_size` its second, for odd slices; size 0:
none), and the parts of the tile over the slices (n_idx/n_slice, c_idx/c_slice, h_idx/h_slice,
w_idx/w_slice per part along each axis; D one); eu_align true (every local tensor is EU-aligned), the
other fields TPU-MLIR's neutral values (stage, slice_idx, group_type 0, can_merge false).
`other_up_overlap_op` lists the ids of the Loads issued during the group before (weight prefetch:
those of the first op with whole tiles).

Everything here follows from the plan: codegen plans the region's ops again (nsecs, hsecs, csecs, wsecs and
where a prefetched group's first weights lie come from the IR) and any attribute that differs is an error.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, FusedLoc, NameLoc, NoneAttr, StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue

from tpudsl.backend.chips import Chip
from tpudsl.backend.layer_group import SECS_ATTRS
from tpudsl.backend.layer_group.plan import GroupPlan, plan_group
from tpudsl.backend.slicing import Tile, tile_bytes, whole_tiles
from tpudsl.dialects.attrs import from_attr
from tpudsl.dialects.lg import LayerGroupAttr
from tpudsl.dialects.opdef import SPECS, create, describe, loc_name
from tpudsl.ir.diagnostics import TpudslError


def ginfo_key(op: Operation) -> str:
    """The name of an op's layer-group attribute (TpuOps.td: `layer_group` on Pool2D, else `ginfo`)."""
    return "ginfo" if "ginfo" in SPECS[op.name].attrs else "layer_group"


def _loaded(plan: GroupPlan, op: Operation) -> list[tuple[Tile, int, int | None, int | None]]:
    """(tile, local address, second buffer or None, sliced input index or None: a whole tile) of
    each tile `op` loads: whole tiles, then parts (not a part another reader's Load holds, `shared`;
    the part its Load holds is the largest of its readers', `GroupPlan.loaded`)."""
    got = [(t, laddr, None, None) for t, laddr in zip(whole_tiles(op), plan.whole[op], strict=True)]
    for i, t in enumerate(plan.slices[0][op].inputs):
        if not plan.is_member(t.value) and (op, i) not in plan.shared:
            a, b = plan.loads[(op, i)]
            got.append((plan.loaded(0, (op, i)), a, b if len(plan.slices) > 1 else None, i))
    return got


def _parts(plan: GroupPlan, tile_of, whole: bool = False) -> dict[str, list[int]]:
    """n_idx/n_slice, c_idx/c_slice, h_idx/h_slice and w_idx/w_slice over a tile's parts along each
    axis (4-D view; slices C outer, then N, H, W; `tile_of(s)` the part of slice s); D is 1 in a 4-D
    view; a `whole` tile (loaded once for the group) is one part along every axis."""
    counts = (plan.csecs, plan.nsecs, plan.hsecs, plan.wsecs)
    out = {"d_idx": [0], "d_slice": [1]}
    for key, axis, at in (("n", 0, 1), ("c", 1, 0), ("h", 2, 2), ("w", 3, 3)):
        stride = int(np.prod(counts[at + 1:]))
        tiles = [tile_of(k * stride) for k in range(1 if whole else counts[at])]
        out[f"{key}_idx"], out[f"{key}_slice"] = [t.start[axis] for t in tiles], [t.shape[axis] for t in tiles]
    return out


class Row:
    """One op of a group's region: a Load of `tile` for `op` (`whole`: a tile held for the whole
    group), the op itself, or its Store; with its ginfo."""

    def __init__(self, kind: str, op: Operation, info: dict, tile: Tile | None = None, index: int | None = None):
        self.kind, self.op, self.info, self.tile, self.index = kind, op, info, tile, index  # index: a part's input

    @property
    def whole(self) -> bool:
        return self.kind == "load" and self.index is None


def expected(plan: GroupPlan, chip: Chip) -> tuple[list[Row], list[int]]:
    """The region's ops in order (their ginfo ids numbered so) and the flow."""
    rows: list[Row] = []
    flow: list[int] = []
    for step, op in enumerate(plan.ops):
        first = len(rows)
        for t, laddr, second, i in _loaded(plan, op):
            tile_of = (lambda s, t=t: t) if i is None else (lambda s, op=op, i=i: plan.loaded(s, (op, i)))
            sizes = [tile_bytes(tile_of(s), chip) for s in range(len(plan.slices))]
            info = {"out_addr": laddr, "out_size": max(sizes)}
            if second is not None:
                info["buffer_addr"], info["buffer_size"] = second, info["out_size"]
            rows.append(Row("load", op, {**info, **_parts(plan, tile_of, i is None)}, t, i))
        info = {"out_addr": plan.out_addr[op], "out_size": plan.out_size[op],
                **_parts(plan, lambda s, op=op: plan.slices[s][op].output)}
        rows.append(Row("op", op, dict(info)))
        if op in plan.stored:
            rows.append(Row("store", op, dict(info)))
        flow += [-(step + 1), *range(first, len(rows))]
    for i, row in enumerate(rows):
        row.info["id"] = i
    return rows, flow


def build(plan: GroupPlan, chip: Chip, prefetched: bool) -> Operation:
    """Move the plan's ops into a new tpu.Group (after the last one) and return it. `prefetched`:
    its first op's whole tiles are loaded during the group before (plan.ahead says where)."""
    ops, members = plan.ops, set(plan.ops)
    rows, flow = expected(plan, chip)
    inputs = list(dict.fromkeys(row.tile.value for row in rows if row.kind == "load"))  # type: ignore[union-attr]
    stored = [op for op in ops if op in plan.stored]
    attrs = {"nsecs": plan.nsecs, "hsecs": plan.hsecs, "flow": flow, "lmem_bytes": plan.lmem_bytes,
             "other_up_overlap_op": _ahead_ids(plan, rows) if prefetched else None,
             **{k: v for k, v in (("csecs", plan.csecs), ("wsecs", plan.wsecs)) if v != 1}}  # absent: 1
    names = [NameLoc(StringAttr(loc_name(op)), NoneAttr()) for op in stored]  # GroupOps.cpp: its outputs' locs, fused
    loc = names[0] if len(names) == 1 else FusedLoc(ArrayAttr(names), NoneAttr())
    group = create("tpu.Group", inputs, [op.results[0].type for op in stored], attrs, loc=loc)
    block = Block()
    group.add_region(Region(block))
    ops[-1].parent_block().insert_op_after(group, ops[-1])  # type: ignore[union-attr]
    for result, op in zip(group.results, stored, strict=True):
        for use in list(op.results[0].uses):
            if use.operation not in members:
                use.operation.operands[use.index] = result  # type: ignore[index]
    loads_of: dict[SSAValue, int] = {}
    load_of: dict[tuple[Operation, int], Operation] = {}  # a part's Load, by (op, sliced input index)
    for row in rows:
        if row.kind == "load":
            value = row.tile.value  # type: ignore[union-attr]
            k = loads_of[value] = loads_of.get(value, -1) + 1
            name = f"load_{loc_name(value.owner) or 'arg'}" + (f"_{k}" if k else "")  # type: ignore[arg-type]
            load = create("tpu.Load", [value], [value.type], {"ginfo": LayerGroupAttr.make(**row.info)}, loc=name)
            block.add_op(load)
            if row.whole:
                _redirect(row.op, value, load)
            else:
                load_of[(row.op, row.index)] = load  # type: ignore[index]
        elif row.kind == "op":
            for i, t in enumerate(plan.slices[0][row.op].inputs):  # in operand order: a tensor read twice
                if (row.op, i) in load_of or (row.op, i) in plan.shared:
                    _redirect(row.op, t.value, load_of[plan.shared.get((row.op, i), (row.op, i))])
            row.op.detach()
            row.op.attributes[ginfo_key(row.op)] = LayerGroupAttr.make(**row.info)
            for key in SECS_ATTRS:  # the group's now
                row.op.attributes.pop(key, None)
            block.add_op(row.op)
        else:
            info = {"ginfo": LayerGroupAttr.make(**row.info)}
            block.add_op(create("tpu.Store", [row.op.results[0]], [row.op.results[0].type], info, loc=loc_name(row.op)))
    block.add_op(create("tpu.Yield", [o.results[0] for o in block.ops if o.name == "tpu.Store"], [], loc=loc))
    return group


def _redirect(op: Operation, value: SSAValue, load: Operation) -> None:
    """`op`'s first operand that is still `value` reads `load` instead (its parts in operand order)."""
    index = next(j for j, v in enumerate(op.operands) if v is value)
    op.operands[index] = load.results[0]  # type: ignore[index]


def members(group: Operation) -> list[Operation]:
    """The computing ops of a group's region, in order."""
    moves = ("tpu.Load", "tpu.Store", "tpu.Yield")
    return [o for o in group.body.block.ops if o.name not in moves]  # type: ignore[attr-defined]


def read(group: Operation, chip: Chip) -> tuple[GroupPlan, bool]:
    """The plan of a tpu.Group as --layer-group wrote it, and whether its whole tiles are prefetched;
    an error naming the group when the region, its attributes or its ginfo are not what the plan
    of its ops gives."""
    ops = members(group)
    where = f"codegen: group {describe(group)}"
    a = {k: from_attr(v) for k, v in group.attributes.items()}
    first = next((whole_tiles(op)[0].value.owner for op in ops if whole_tiles(op)), None)
    base = _int(first, "out_addr") if a.get("other_up_overlap_op") and first is not None else None
    plan = plan_group(ops, chip, a["nsecs"], a["hsecs"], ahead_base=base, csecs=a.get("csecs", 1),
                      wsecs=a.get("wsecs", 1))
    if isinstance(plan, str):
        raise TpudslError(f"{where}: {plan}; run --layer-group again")
    rows, flow = expected(plan, chip)
    inner = [o for o in group.body.block.ops if o.name != "tpu.Yield"]  # type: ignore[attr-defined]
    if len(inner) != len(rows) or any(not _is(o, row) for o, row in zip(inner, rows, strict=False)):
        raise TpudslError(f"{where}: its region is not the ops, Loads and Stores of its plan in order; "
                          f"run --layer-group again")
    for o, row in zip(inner, rows, strict=True):
        want, got = LayerGroupAttr.make(**row.info), o.attributes.get(ginfo_key(o))
        if got != want:
            differ = [k for k, v in want.values().items() if not isinstance(got, LayerGroupAttr) or got.get(k) != v]
            raise TpudslError(f"{where}: {describe(o)} has another {ginfo_key(o)} than the plan's "
                              f"(the plan's: {', '.join(f'{k} = {want.get(k)}' for k in differ)}); run --layer-group again")
    if a["flow"] != flow or a["lmem_bytes"] != plan.lmem_bytes:
        raise TpudslError(f"{where}: its flow or lmem_bytes differ from its plan's; run --layer-group again")
    ahead = a.get("other_up_overlap_op", [])
    if ahead not in ([], _ahead_ids(plan, rows)):
        raise TpudslError(f"{where}: other_up_overlap_op must list the whole-tile Loads of its first op "
                          f"that has some, or none")
    return plan, bool(ahead)


def _ahead_ids(plan: GroupPlan, rows: list[Row]) -> list[int]:
    """The ids of the Loads of the ahead_op's whole tiles (the ones a prefetch issues early)."""
    return [row.info["id"] for row in rows if row.whole and row.op is plan.ahead_op]


def _is(o: Operation, row: Row) -> bool:
    if row.kind == "load":
        return o is row.tile.value.owner  # type: ignore[union-attr]
    if row.kind == "op":
        return o is row.op
    return o.name == "tpu.Store" and o.operands[0] is row.op.results[0]


def _int(op, key: str) -> int:
    info = op.attributes.get("ginfo")
    if not isinstance(info, LayerGroupAttr):
        raise TpudslError(f"codegen: {describe(op)} has no ginfo; run --layer-group again")
    return info.get(key)

"""The command stream of one layer group of several ops (a `GroupPlan`).

Every op's whole tiles (weights, a dynamic filter) are loaded once, in the first slice just
before the op's first record, so that GDMA loads them while BDC computes the ops before it. Per
slice, in order (N outer, H inner), each op in turn: the parts of its operands that come from outside the
group are loaded (with their halos) into that input's buffer for the slice's parity, so the loads
of slice i+1 do not overwrite what slice i computes on (a part inside another reader's part in
every slice is not loaded: it is read in that one's buffer, at an offset, `GroupPlan.shared`; the
first of them in program order loads the largest part, `GroupPlan.loaded`); its BDC record computes its output tile
from local memory (an intermediate's part is read in place, inside the tile its producer wrote:
the union of its consumers' parts); a result used
outside the group (the last op's, and any other) is stored right after its record. Each record is tagged with the op it belongs to (debug info, --profile).
The group itself (id, ops, nsecs/hsecs, its instruction range) is the header's layer_groups
(model_tool --info, the timeline's bands). A group whose first weights are prefetched (prefetch.py)
leaves their loads to the group before, which issues them right after its own first BDC record, so
that they run under its compute; they count in that group's instruction range.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Operation

from tpudsl.backend import isa
from tpudsl.backend.codegen import _gaddr, _gdma, compute_record
from tpudsl.backend.cores import deal
from tpudsl.backend.layer_group.plan import GroupPlan
from tpudsl.backend.slicing import Tile, as4d, shape_of, whole_tiles
from tpudsl.backend.tensor_locations import member_result, piece, sliced_result
from tpudsl.dialects.opdef import describe, op_label
from tpudsl.ir.diagnostics import TpudslError

Record = tuple[Operation, isa.Record]


def whole_loads(plan: GroupPlan, op: Operation, gaddr: Callable[[Tile], int]) -> list[Record]:
    """The loads of `op`'s whole tiles (weights, a dynamic filter), held for the whole group."""
    tiles = zip(whole_tiles(op), plan.whole[op], strict=True)
    return [(op, _gdma(isa.GdmaLoad, t, laddr, gaddr)) for t, laddr in tiles]


# A record after which a slice of a member's result can be read: (record, op, tile, space, address)
Piece = tuple[isa.Record, Operation, Tile, str, int]


def group_records(plan: GroupPlan, gaddr: Callable[[Tile], int], prefetched: bool = False,
                  pieces: list[Piece] | None = None, dealt: range | None = None) -> list[Record]:
    """The group's records, each with its op; `gaddr` gives a tile's global address. `prefetched`:
    the whole tiles of its ahead_op are loaded by the group before (prefetch.py), not here.
    `dealt`: only these slices (one core's, cores.deal; None: all), the whole tiles in the first.
    `pieces` collects where each slice of each member's result can be read (tensor_locations.py):
    after its store, in global memory, when it leaves the group; else in its local tile right after
    its BDC record (the next slice's record overwrites it)."""
    out: list[Record] = []
    dealt = range(len(plan.slices)) if dealt is None else dealt
    for s in dealt:
        parts = plan.slices[s]
        for op in plan.ops:
            if s == dealt.start and not (prefetched and op is plan.ahead_op):  # just before its first use: GDMA
                # loads them while BDC computes the ops before
                out += whole_loads(plan, op, gaddr)
            part = parts[op]
            for i, t in enumerate(part.inputs):  # not a shared part: an earlier reader loaded it in this slice
                if not plan.is_member(t.value) and (op, i) not in plan.shared:
                    out.append((op, _gdma(isa.GdmaLoad, plan.loaded(s, (op, i)), plan.loads[(op, i)][s % 2], gaddr)))
            # each part in place: inside its producer's tile, or inside the part loaded in its buffer
            ins = [(plan.reads[s][(op, i)], t) for i, t in enumerate(part.inputs)]
            whole = plan.whole_at(op, s)  # a C part's channels of them
            out.append((op, compute_record(op, ins, whole, (plan.out_addr[op], part.output), part)))
            stored = op in plan.stored
            if stored:  # right away: a later op's tile may reuse these bytes
                out.append((op, _gdma(isa.GdmaStore, part.output, plan.out_addr[op], gaddr)))
            if pieces is not None:  # only codegen's debug info: the search costs records alone
                last = out[-1][1]  # the store (its global address), else the BDC record
                space, address = ("global", last.gaddr) if stored else ("local", plan.out_addr[op])
                pieces.append((last, op, part.output, space, address))
    return out


def _host_at(records: list[isa.Record]) -> int:
    """Where a group's records take the next group's prefetched loads: right after the first BDC
    record (prefetch.py: why there); at the start when the core has none (no slice of this group)."""
    return next((i + 1 for i, r in enumerate(records) if r.ENGINE == "bdc"), 0)


def hosted(records: list[isa.Record], loads: list[isa.Record]) -> list[isa.Record]:
    """A core's records of a group with the next group's prefetched loads where emit_group issues them."""
    at = _host_at(records)
    return [*records[:at], *loads, *records[at:]]


def core_records(plan: GroupPlan, gaddr: Callable[[Tile], int], prefetched: bool = False) -> list[list[isa.Record]]:
    """Each core's records of the group (its slices dealt by cores.deal); `prefetched` as in group_records."""
    return [[r for _, r in rs] for rs in tagged_core_records(plan, gaddr, prefetched)]


def tagged_core_records(plan: GroupPlan, gaddr: Callable[[Tile], int], prefetched: bool = False) -> list[list[Record]]:
    """core_records with each record's op."""
    return [group_records(plan, gaddr, prefetched, dealt=dealt) for dealt in deal(len(plan.slices), plan.chip.cores)
            if dealt]


def without_ahead_loads(plan: GroupPlan, tagged: list[list[Record]]) -> list[list[isa.Record]]:
    """core_records(plan, gaddr, prefetched=True) from tagged_core_records(plan, gaddr) without
    building the records again: group_records loads the ahead_op's whole tiles in each core's first
    slice just before its first use, so a core's first records of that op are those loads; nothing
    else differs."""
    k = len(whole_tiles(plan.ahead_op))  # type: ignore[arg-type]
    out = []
    for records in tagged:
        at = next(i for i, (op, _) in enumerate(records) if op is plan.ahead_op)
        out.append([r for _, r in records[:at] + records[at + k:]])
    return out


def emit_group(group: Operation, plan: GroupPlan, prefetched: bool, ahead: GroupPlan | None, prog) -> None:
    """Append the records of `group` (planned by region.read) to codegen's `prog`, its slices dealt
    to the cores (cores.deal), then a barrier; `ahead`: the next group's plan when its first weights
    are prefetched here, issued by every core into its own local memory right after its first BDC
    record of this group (at its start on a core without a slice of it)."""
    parts: dict[Operation, list[tuple[dict, int]]] = {op: [] for op in plan.ops}  # (piece, its core)
    first = len(prog.records)
    for core, dealt in enumerate(deal(len(plan.slices), plan.chip.cores)):
        if dealt or ahead is not None:  # each core loads the next group's weights into its own local memory
            _emit_core(group, plan, prefetched, ahead, prog, core, dealt, parts)
    count = len(prog.records) - first
    prog.barrier()
    if prog.tensors is None:
        for op in plan.ops:
            member_result(op)  # refused with or without debug info
    else:
        core_of = {id(p): core for op in plan.ops for p, core in parts[op]}
        prog.add_tensors([sliced_result(op, as4d(op, shape_of(op.results[0])), [p for p, _ in parts[op]])
                          for op in plan.ops], lambda p: core_of[id(p)])
    prog.groups.append({"id": len(prog.groups), "ops": [op_label(op) or op.name for op in plan.ops],
                        "nsecs": plan.nsecs, "hsecs": plan.hsecs, "first": first, "count": count,
                        **{k: v for k, v in (("csecs", plan.csecs), ("wsecs", plan.wsecs)) if v != 1}})


def _emit_core(group: Operation, plan: GroupPlan, prefetched: bool, ahead: GroupPlan | None, prog, core: int,
               dealt: range, parts: dict[Operation, list[tuple[dict, int]]]) -> None:
    """One core's slices of the group into its stream; their tensor pieces, with the core, into `parts`."""
    pieces: list[Piece] | None = [] if prog.tensors is not None else None  # only for debug info
    records = group_records(plan, _gaddr, prefetched, pieces, dealt)
    if ahead is not None:
        start, end = ahead.ahead  # type: ignore[misc]
        if any(start < stop and begin < end for begin, stop in plan.used):
            raise TpudslError(f"codegen: group {describe(group)}: the next group's prefetched whole tiles at "
                              f"{start} overlap its local memory; run --layer-group again")
        at = _host_at([r for _, r in records])
        records[at:at] = whole_loads(ahead, ahead.ahead_op, _gaddr)  # type: ignore[arg-type]
    stream, debug = prog.stream(core)
    current, first = None, len(stream)
    for op, record in records:
        if op is not current:
            debug.append((len(stream), op_label(op) or op.name))
            current = op
        stream.append(record)
    index = {id(record): first + i for i, (_, record) in enumerate(records)}
    for record, op, tile, space, address in pieces or []:
        parts[op].append((piece(index[id(record)], tile, space, address), core))  # its index: in this core's stream

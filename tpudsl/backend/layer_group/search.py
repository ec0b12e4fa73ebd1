"""The group search: which consecutive runs of Tpu ops become one layer group.

Dynamic programming over the ops in order, as TPU-MLIR's LayerGroup does: the best grouping of the
first i ops is the best of (the best grouping of the first j ops) + (ops j..i-1 as one group), over
the runs that are valid groups (`plan.plan_group`, with the fewest slices that fit). The cost of a
group is the cost model's cycles of the records it emits (`emit.group_records`), GDMA and BDC
overlapped as `schedule.py` places them, so keeping a tensor in local memory wins exactly when the
GDMA traffic it saves outweighs the halo rows its slices recompute; of groupings with equal cycles
the one whose records move fewer GDMA bytes (`traffic.gdma_bytes`) wins (a BDC-bound stretch hides
the traffic from the cycles, not from the memory bus). Groups are costed apart (the
sum of their makespans), but for the weight prefetch (prefetch.py): GDMA issues in program order
and a group's first loads wait behind the previous group's last store, so across a boundary the
only overlap is the next group's first weights, loaded during the group before. The search counts
it: a group G right after a group F (no op between) whose first weights are weights and fit in a
gap of F's local memory (`prefetch.free_gap`) adds the makespan of F's records with those loads
issued after F's first BDC record (at that gap, as emit.py issues them) minus F's makespan, plus
G's makespan without them; else G's makespan. Approximations: F is the last group of the best
grouping of the ops before G (the dynamic program keeps one per prefix, chosen before G is
known), F's own records are those without a prefetch of its own, and whether G's plan still fits
around the prefetched block is not checked (prefetch.py leaves G unprefetched if not). A run stops
growing backwards at the first op that makes it invalid whatever comes before it (a kind that does
not join groups, a filter computed inside, an op the rest of the run does not read); runs are at
most `MAX_GROUP_OPS` long, which bounds the search to linear time, and a run whose ops' `_bdc_floor`
cannot beat the best cost found is not planned, and a planned run whose records' `_engine_floor`
cannot beat it is not scheduled.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from xdsl.ir import Operation

from tpudsl.backend.address_assign import align
from tpudsl.backend.chips import Chip
from tpudsl.backend.codegen import gaddr_or_0
from tpudsl.backend.cost import cycles
from tpudsl.backend.cores import slowest
from tpudsl.backend.layer_group.emit import (core_records, group_records, hosted, tagged_core_records,
                                             whole_loads, without_ahead_loads)
from tpudsl.backend.layer_group.plan import (Backward, GroupPlan, first_fit_split, joins_groups, plan_group,
                                             reason_in_front)
from tpudsl.backend.layer_group.prefetch import free_gap
from tpudsl.backend.layer_group.traffic import gdma_bytes
from tpudsl.backend.slicing import remembered, tile_bytes, whole_tiles

MAX_GROUP_OPS = 32  # ResNet-18 INT8 at 224: its 30 ops from conv1 to avgpool in one group (docs/backend.md)


@dataclass
class _Costed:
    """A candidate group: `full` the makespan of its records alone (each core's `streams`, the
    slowest's; `tagged` the same with their ops); `ahead` the loads of its ahead_op's whole tiles
    and `early` their cycles (`_ahead_loads`); `moved` their GDMA bytes (a prefetch moves some into
    the group before, the total stays); `prefetched` its makespan without its first weights' loads
    (computed when first needed); `hosting`: its makespan with the next group's first weights
    loaded during it (by every core, into its own local memory), by that group's op."""

    plan: GroupPlan
    tagged: list[list]
    ahead: list
    early: int
    streams: list[list]
    full: int
    moved: int
    prefetched: int | None = None
    hosting: dict = field(default_factory=dict)


def _cost(plan: GroupPlan, chip: Chip, tagged: list[list] | None = None,
          ahead: tuple[list, int] | None = None) -> _Costed:
    """Cycles of the group's records (each core's, `tagged` with their ops: tagged_core_records,
    unless given) with GDMA and BDC overlapped (schedule.py): the two input buffers let slice i+1's
    loads run under slice i's compute; with several cores, the slowest core's (cores.py). `ahead`:
    `_ahead_loads`, unless given."""
    tagged = tagged_core_records(plan, gaddr_or_0) if tagged is None else tagged
    loads, early = _ahead_loads(plan, chip) if ahead is None else ahead
    streams = [[r for _, r in rs] for rs in tagged]
    return _Costed(plan, tagged, loads, early, streams, slowest(streams, chip),
                   sum(gdma_bytes(rs) for rs in streams))


def _ahead_loads(plan: GroupPlan, chip: Chip) -> tuple[list, int]:
    """The loads of the plan's ahead_op's whole tiles (its first weights: a prefetch's), each with
    its op, and their cycles; none without an ahead_op. `_engine_floor` reads the cycles, `_after`
    both."""
    loads = whole_loads(plan, plan.ahead_op, gaddr_or_0) if plan.ahead_op is not None else []
    return loads, sum(cycles(r, chip) for _, r in loads)


def _engine_floor(tagged: list[list], early: int, chip: Chip) -> int:
    """No fewer cycles than this can the group add after any group (`_after`), so a run whose floor
    added to the best cost before it exceeds the best found is not scheduled: each engine runs its
    records one after another, so a core's makespan is at least its BDC cycles and at least its GDMA
    cycles; a prefetch takes the ahead_op's whole loads (their cycles: `early`) out of every core's
    GDMA (and never shortens the group before it), so those are not counted."""
    floors = []
    for records in tagged:
        engine = {"bdc": 0, "gdma": 0}
        for _, r in records:
            engine[r.ENGINE] += cycles(r, chip)
        floors.append(max(engine["bdc"], engine["gdma"] - early))
    return max(floors)


def _after(g: _Costed, before: _Costed | None, chip: Chip, beat: int | None = None) -> int:
    """Cycles that group `g` adds right after group `before` (None: after an op alone, or first):
    with its first weights prefetched (prefetch.py: in the highest gap of `before`'s local memory,
    loaded right after its first BDC record), what `before` grows by plus `g`'s prefetched makespan.
    With `beat`, a result that cannot reach it (be below it or equal: a tie is decided by bytes) may
    be any number > it: taking records out of a schedule shortens it by at most their cycles and
    adding some never shortens it, so below `g.full` minus the loads' cycles there is nothing, and
    the two schedules are skipped."""
    op = g.plan.ahead_op
    tiles = whole_tiles(op) if op is not None and before is not None else []
    if not tiles or any(getattr(t.value.owner, "name", None) != "top.Weight" for t in tiles):
        return g.full
    size = sum(align(tile_bytes(t, chip), chip.eu_bytes) for t in tiles)
    base = free_gap(before.plan.used, size, chip)  # type: ignore[union-attr]
    if base is None:
        return g.full
    loaded = g.ahead
    if beat is not None and g.full - g.early > beat:
        return g.full
    if g.prefetched is None:
        g.prefetched = slowest(without_ahead_loads(g.plan, g.tagged), chip)
    if op not in before.hosting:  # type: ignore[union-attr]
        loads = []
        for t, (_, r) in zip(tiles, loaded, strict=True):
            loads.append(replace(r, laddr=base))
            base = align(base + tile_bytes(t, chip), chip.eu_bytes)
        streams = before.streams + [[]] * (chip.cores - len(before.streams))  # type: ignore[union-attr]
        before.hosting[op] = slowest([hosted(rs, loads) for rs in streams], chip)  # type: ignore[union-attr]
    return before.hosting[op] - before.full + g.prefetched  # type: ignore[union-attr]  # prefetch.py: whenever it fits


def _single_cost(op: Operation, chip: Chip) -> tuple[int, int]:
    """(cycles, GDMA bytes) of the op as a group of one, sliced as --layer-group="opt=1" slices it
    ((0, 0) for an op that never joins groups: its cost is the same in every grouping)."""
    if not joins_groups(op):
        return 0, 0
    secs = [op.attributes[k].value.data for k in ("nsecs", "hsecs")]  # type: ignore[attr-defined]
    plan = plan_group([op], chip, *secs, check_memory=False)
    assert isinstance(plan, GroupPlan), plan
    streams = core_records(plan, gaddr_or_0)
    return slowest(streams, chip), sum(gdma_bytes(rs) for rs in streams)


def _bdc_floor(op: Operation, chip: Chip) -> int:
    """BDC cycles of the op computed once, unsliced (0 for an op that never joins groups). A group's
    cost is at least the sum over its ops: BDC runs its records one after another, each costs an
    issue cost plus work in proportion to its output rows, so slices add issue costs and halo rows
    add work, and a prefetch only takes GDMA loads out. With several cores, that sum divided by
    them (rounded down): the slowest core does at least its share."""
    if not joins_groups(op):
        return 0
    plan = plan_group([op], chip, 1, 1, check_memory=False)
    assert isinstance(plan, GroupPlan), plan
    return sum(cycles(r, chip) for _, r in group_records(plan, gaddr_or_0) if r.ENGINE == "bdc") // chip.cores


def search(ops: list[Operation], chip: Chip) -> list[GroupPlan]:
    """The groups of two or more ops of the cheapest grouping of `ops` (in order; the rest stay alone)."""
    with remembered():
        return _search(ops, chip)


def _search(ops: list[Operation], chip: Chip) -> list[GroupPlan]:
    # best[i]: (cycles, GDMA bytes) of ops[:i], fewer cycles first and of equal cycles fewer bytes;
    # choice[i]: its last group (None: ops[i-1] alone)
    best: list[tuple[int, int]] = [(0, 0)]
    choice: list[_Costed | None] = [None]
    floor = [0]  # floor[i]: the _bdc_floor of ops[:i]
    for op in ops:
        floor.append(floor[-1] + _bdc_floor(op, chip))
    for i in range(1, len(ops) + 1):
        alone = _single_cost(ops[i - 1], chip)
        best.append((best[i - 1][0] + alone[0], best[i - 1][1] + alone[1]))
        choice.append(None)
        if not joins_groups(ops[i - 1]):
            continue  # it ends no group
        backward = Backward()  # the runs ending at ops[i-1] share their ops' parts
        members = {ops[i - 1]}  # of ops[j:i], grown one op at a time (static_reason's checks)
        for j in range(i - 2, max(-1, i - 1 - MAX_GROUP_OPS), -1):
            run = ops[j:i]
            if reason_in_front(ops[j], members) is not None:
                break
            members.add(ops[j])
            if best[j][0] + floor[i] - floor[j] > best[i][0]:
                continue  # cannot beat it nor tie (_bdc_floor): skip planning and scheduling the run
            plan = first_fit_split(run, chip, backward)
            if isinstance(plan, str):
                continue  # more ops before it may make it valid (an input becomes an intermediate)
            tagged, ahead = tagged_core_records(plan, gaddr_or_0), _ahead_loads(plan, chip)
            if best[j][0] + _engine_floor(tagged, ahead[1], chip) > best[i][0]:
                continue  # cannot beat it nor tie: skip scheduling its records
            costed = _cost(plan, chip, tagged, ahead)
            cost = (best[j][0] + _after(costed, choice[j], chip, best[i][0] - best[j][0]), best[j][1] + costed.moved)
            if cost < best[i]:
                best[i], choice[i] = cost, costed
    groups, i = [], len(ops)
    while i > 0:
        got = choice[i]
        if got is None:
            i -= 1
        else:
            groups.append(got.plan)
            i -= len(got.plan.ops)
    return groups[::-1]

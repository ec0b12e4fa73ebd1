"""The group search: which consecutive runs of Tpu ops become one layer group.

Dynamic programming over the ops in order, as TPU-MLIR's LayerGroup does: the best grouping of the
first i ops is the best of (the best grouping of the first j ops) + (ops j..i-1 as one group), over
the runs that are valid groups (`plan.plan_group`, with the fewest slices that fit). The cost of a
group is the cost model's cycles of the records it emits (`emit.group_records`), GDMA and BDC
overlapped as `schedule.py` places them, so keeping a tensor in local memory wins exactly when the
GDMA traffic it saves outweighs the halo rows its slices recompute. Groups are costed apart (the
sum of their makespans: no overlap across groups is counted). A run stops growing backwards at the first op that makes it invalid
whatever comes before it (a kind that does not join groups, a filter computed inside, an op the
rest of the run does not read); runs
are at most `MAX_GROUP_OPS` long, which bounds the search to linear time.
"""

from __future__ import annotations

from xdsl.ir import Operation

from tpudsl.backend.chips import Chip
from tpudsl.backend.address_assign import address_of
from tpudsl.backend.codegen import _gaddr
from tpudsl.backend.layer_group.emit import group_records
from tpudsl.backend.layer_group.plan import GroupPlan, first_fit_split, joins_groups, plan_group, static_reason
from tpudsl.backend.schedule import schedule

MAX_GROUP_OPS = 16


def _cost(plan: GroupPlan, chip: Chip) -> int:
    """Cycles of the group's records with GDMA and BDC overlapped (schedule.py): the two input
    buffers let slice i+1's loads run under slice i's compute. Without global addresses (a module
    not yet addressed) every tensor is at 0, which serializes GDMA a little more: the same for
    every candidate."""
    records = [r for _, r in group_records(plan, lambda t: _gaddr(t) if address_of(t.value) is not None else 0)]
    return schedule(records, chip).makespan


def _single_cost(op: Operation, chip: Chip) -> int:
    """Cycles of the op as a group of one, sliced as --layer-group="opt=1" slices it (0 for an op
    that never joins groups: its cost is the same in every grouping)."""
    if not joins_groups(op):
        return 0
    secs = [op.attributes[k].value.data for k in ("nsecs", "hsecs")]  # type: ignore[attr-defined]
    plan = plan_group([op], chip, *secs, check_memory=False)
    assert isinstance(plan, GroupPlan), plan
    return _cost(plan, chip)


def search(ops: list[Operation], chip: Chip) -> list[GroupPlan]:
    """The groups of two or more ops of the cheapest grouping of `ops` (in order; the rest stay alone)."""
    best, choice = [0], [None]  # best[i]: cycles of ops[:i]; choice[i]: its last group (None: ops[i-1] alone)
    for i in range(1, len(ops) + 1):
        best.append(best[i - 1] + _single_cost(ops[i - 1], chip))
        choice.append(None)
        for j in range(i - 2, max(-1, i - 1 - MAX_GROUP_OPS), -1):
            run = ops[j:i]
            if static_reason(run) is not None:
                break
            plan = first_fit_split(run, chip)
            if isinstance(plan, str):
                continue  # more ops before it may make it valid (an input becomes an intermediate)
            cost = best[j] + _cost(plan, chip)
            if cost < best[i]:
                best[i], choice[i] = cost, plan
    groups, i = [], len(ops)
    while i > 0:
        plan = choice[i]
        if plan is None:
            i -= 1
        else:
            groups.append(plan)
            i -= len(plan.ops)
    return groups[::-1]

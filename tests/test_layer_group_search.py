"""The group search's shortcuts change no plan (issue 12, search time). `plan.Backward` hands a run
the parts it remembers from the run one op shorter that ends at the same op (a member's part follows
from its consumers', all after it); `first_fit_split` does not plan the finest N x H split again when
`_fewest_nh` ended short of memory (its last try was that split); `static_reason` grows a run one op at
a time (`reason_in_front`), as the search does. On random networks compiled for
the tiny chip, every run the search visits (in its order: ending at i, growing at the front) is
planned as without the shortcuts, field for field, and the search picks the same groups; the chains
of test_layer_group_cw.py (no N x H split fits) exercise the second shortcut and the W/C cuts."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings

from tests.backend_support import compile_for, lowered
from tests.feature_tally import FeatureTally
from tests.test_layer_group import groupable_networks
from tests.test_layer_group_cw import chains
from tpudsl.backend.chips import chip_named
from tpudsl.backend.layer_group import plan as plan_mod
from tpudsl.backend.layer_group import search
from tpudsl.backend.layer_group.plan import Backward, GroupPlan, first_fit_split, joins_groups, static_reason
from tpudsl.backend.slicing import GLOBAL_ONLY, KINDS, whole_tiles


SHORT, REMEMBERED = "a run short of memory at every N x H split", "a sliced run of 3+ ops from remembered parts"


def test_remembered_parts_and_the_finest_split_change_no_plan(tmp_path):
    """Half of the examples are groupable networks, half chains no N x H split fits (each its own run,
    not a draw between them). Short and remembered runs are the search's outcome (drawn, not forced):
    a fifth as many of each as examples, counted per run (an example's parts) as before."""
    tally = FeatureTally((SHORT, REMEMBERED))

    def check(model):
        top = lowered(model)
        compile_for(top, "tiny", str(tmp_path / "1.bmodel"), opt=1)
        chip = chip_named("tiny")
        ops = [op for op in top.main_func().body.block.ops if op.name in KINDS or op.name in GLOBAL_ONLY]
        seen = Counter()
        for i in range(2, len(ops) + 1):
            backward = Backward()
            for j in range(i - 2, -1, -1):
                run = ops[j:i]
                assert (static_reason(run) is None) == _statically_valid(run)
                if static_reason(run) is not None:
                    break
                got = first_fit_split(run, chip, backward)
                short = plan_mod._fewest_nh(run, chip, 1, 1, None)
                if plan_mod._short(short):  # the finest split's shortcut's premise: the finest split is short too
                    assert plan_mod._short(plan_mod._finest(run, chip, 1, 1, None)), short
                    seen[SHORT] += 1
                want = _unshortened(run, chip)
                assert got == want if isinstance(got, GroupPlan) else isinstance(want, str), (got, want)
                seen["runs"] += 1
                if isinstance(got, GroupPlan) and len(got.slices) > 1 and i - j > 2:
                    seen[REMEMBERED] += 1
        pruned = [p.ops for p in search.search(ops, chip)]
        with pytest.MonkeyPatch.context() as m:
            m.setattr(search, "Backward", lambda: None)
            assert [p.ops for p in search.search(ops, chip)] == pruned
        tally.record(seen, seen)

    half = max(5, settings.default.max_examples // 20)
    for models in (groupable_networks(rows=(3, 96)).map(lambda net: net[0]), chains(("F32",)).map(lambda c: c[0])):
        settings(max_examples=half)(given(models)(check))()
    for name in (SHORT, REMEMBERED):
        tally.assert_parts_per_example(name, 1 / 5)


def _statically_valid(run) -> bool:
    """static_reason's rules at once (it grows the run one op at a time, as the search does): every op
    joins groups, no operand read whole is computed inside, every op but the last is read inside."""
    return all(joins_groups(op) for op in run) \
        and not any(t.value.owner in run for op in run for t in whole_tiles(op)) \
        and all(any(u.operation in run for u in op.results[0].uses) for op in run[:-1])


def _unshortened(run, chip):
    """first_fit_split as it was before the shortcuts (no Backward; _finest asked whenever N x H is short),
    whole tiles too big for local memory aside (a reason either way)."""
    reason = plan_mod._fewest_nh(run, chip, 1, 1, None)
    if isinstance(reason, GroupPlan) or not (plan_mod._short(reason) or reason.startswith("its H slices")) \
            or not plan_mod._short(plan_mod._finest(run, chip, 1, 1, None)):
        return reason
    for dim in ("W", "C"):
        got = plan_mod._cut_split(run, chip, dim, None)
        if got is not None:
            return got
    return reason

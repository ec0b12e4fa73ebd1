"""The group search's shortcuts change no plan (issue 12, search time). `plan.Backward` hands a run
the parts it remembers from the run one op shorter that ends at the same op (a member's part follows
from its consumers', all after it); `first_fit_split` does not plan the finest N x H split again when
`_fewest_nh` ended short of memory (its last try was that split); `static_reason` grows a run one op at
a time (`reason_in_front`), as the search does. On random networks compiled for
the tiny chip, every run the search visits (in its order: ending at i, growing at the front) is
planned as without the shortcuts, field for field, and the search picks the same groups; the chains
of test_layer_group_cw.py (no N x H split fits) exercise the second shortcut and the W/C cuts."""

from __future__ import annotations

import contextlib
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from onnx import TensorProto, helper

from tests.backend_support import assert_f32_close, compile_for, interpret, lowered
from tests.feature_tally import FeatureTally
from tests.test_backend_cmodel import Graph
from tests.test_layer_group import groupable_networks
from tests.test_layer_group_cw import chains
from tpudsl.backend import isa
from tpudsl.backend.bmodel import read_bmodel
from tpudsl.backend.chips import chip_named
from tpudsl.backend.cmodel import run_bmodel
from tpudsl.backend.layer_group import plan as plan_mod
from tpudsl.backend.layer_group import search
from tpudsl.backend.layer_group.plan import Backward, GroupPlan, first_fit_split, joins_groups, static_reason
from tpudsl.backend.layer_group.prefetch import prefetches
from tpudsl.backend.layer_group.region import build, members
from tpudsl.backend.layer_group.traffic import gdma_bytes
from tpudsl.backend.slicing import GLOBAL_ONLY, KINDS, whole_tiles
from tpudsl.dialects import make_context
from tpudsl.dialects.opdef import loc_name
from tpudsl.passes import pass_class


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
        pruned = search.search(ops, chip)  # the plans whole: their groups, slices, loads and tiles
        with pytest.MonkeyPatch.context() as m:
            m.setattr(search, "Backward", lambda: None)
            assert search.search(ops, chip) == pruned
        with pytest.MonkeyPatch.context() as m:  # slicing's answers from memory change no plan either
            m.setattr(search, "remembered", contextlib.nullcontext)
            assert search.search(ops, chip) == pruned
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


def _tie_model():
    """x (1, 1, 41, 11) -> Relu -> t1 = AveragePool 3x2 (pad top 1) -> AveragePool 1x2 (pad left 1)
    -> AveragePool 1x2 (pad left 1); t1 is an output too (stored in every grouping). Found among
    random networks (test_layer_group.py's strategy) where the search met a tie of cycles."""
    rng = np.random.default_rng(0)
    g = Graph(rng)
    g.shapes["x"] = (1, 1, 41, 11)
    t1 = g.node("AveragePool", [g.node("Relu", ["x"], (1, 1, 41, 11))], (1, 1, 40, 10), kernel_shape=[3, 2],
                pads=[1, 0, 0, 0])
    t2 = g.node("AveragePool", [t1], (1, 1, 40, 10), kernel_shape=[1, 2], pads=[0, 1, 0, 0])
    t3 = g.node("AveragePool", [t2], (1, 1, 40, 10), kernel_shape=[1, 2], pads=[0, 1, 0, 0])
    model = g.model({"x": (1, 1, 41, 11)}, t3)
    model.graph.output.append(helper.make_tensor_value_info(t1, TensorProto.FLOAT, (1, 1, 40, 10)))
    return model, {"x": rng.standard_normal((1, 1, 41, 11)).astype(np.float32)}


def _compiled(model, tmp_path, name: str, groups=None):
    """(the groups' op names, overlapped cycles, GDMA bytes, the cmodel's results, the Tpu interpreter's)
    of the model compiled for tiny: with the search's groups, or with `groups` (op indices) planned
    as first_fit_split plans them and prefetched as the pass does."""
    top = lowered(model)
    feed = {"x": np.random.default_rng(1).standard_normal((1, 1, 41, 11)).astype(np.float32)}
    want = interpret(top, feed)
    ctx = make_context()
    pass_class("address-assign")().apply(ctx, top.module)
    pass_class("layer-group")(opt=1 if groups is not None else 2).apply(ctx, top.module)
    if groups is not None:
        chip = chip_named("tiny")
        ops = [op for op in top.main_func().body.block.ops if op.name in KINDS or op.name in GLOBAL_ONLY]
        plans = [first_fit_split([ops[k] for k in g], chip) for g in groups]
        for plan, ahead in reversed(list(zip(plans, prefetches(plans, ops, chip), strict=True))):
            build(ahead or plan, chip, prefetched=ahead is not None)
    path = str(tmp_path / f"{name}.bmodel")
    pass_class("codegen")(model_file=path).apply(ctx, top.module)
    bm = read_bmodel(path)
    got, _ = run_bmodel(bm, feed)
    names = [[loc_name(op) for op in members(g)] for g in top.module.walk() if g.name == "tpu.Group"]
    return names, bm.header["overlapped_cycles"], gdma_bytes(isa.decode(bm.commands)), got, want


def test_of_two_groupings_with_equal_cycles_the_search_takes_the_one_moving_fewer_bytes(tmp_path, monkeypatch):
    """Bytes break a tie of cycles. With runs of at most 3 ops (all four ops in one group cost fewer
    cycles; the limit makes the tie the best there is), (Relu, t1) + (the two 1x2 pools) and
    (Relu, t1, the first 1x2 pool) + the last pool alone take the same overlapped cycles in the
    streams codegen writes for them. The first moves fewer GDMA bytes, by one 40 x 10 f32 tensor:
    both store t1 (an output); the first loads it back once, the second stores and loads the first
    1x2 pool's result. The search takes the first (it took the second while it compared cycles
    only: the run ending there came first); the cmodel equals the Tpu interpreter either way."""
    monkeypatch.setattr(search, "MAX_GROUP_OPS", 3)
    model, _ = _tie_model()
    chosen, cycles, moved, got, want = _compiled(model, tmp_path, "chosen")
    other, other_cycles, other_moved, other_got, _ = _compiled(model, tmp_path, "other", groups=[[0, 1, 2]])
    assert chosen == [["t0_relu", "t1_averagepool"], ["t2_averagepool", "t3_averagepool"]], chosen
    assert other == [["t0_relu", "t1_averagepool", "t2_averagepool"]], other
    assert cycles == other_cycles  # the tie
    assert other_moved - moved == 40 * 10 * 4  # store + load of a 40 x 10 f32 tensor, minus one load of t1
    for name, w in want.items():
        assert_f32_close(got[name], w, name)
        assert_f32_close(other_got[name], w, name)

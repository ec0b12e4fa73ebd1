"""The bounds of layer groups. GDMA traffic (`layer_group.traffic.lower_bound`): every coefficient,
the input elements the outputs need and every output once. It is a lower bound of what any
compilation moves (random networks of the ops that join groups, compiled for the tiny chip with
groups and with groups of one), and a group that holds the whole model unsliced moves exactly it,
which a hand count of the model's tensors gives too. Cycles (`search._bdc_floor`, which lets the
search skip runs): no group costs less than its ops' BDC cycles computed once, unsliced, nor, with
its first weights prefetched or not, less than its records' `search._engine_floor` (which lets it
skip scheduling), and the search finds the same groups without skipping."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import event, given, settings

from tests.backend_support import assert_f32_close, compile_for, interpret, lowered
from tests.feature_tally import FeatureTally
from tests.test_backend_cmodel import Graph
from tests.test_layer_group import Grouped, groupable_networks
from tpudsl.backend import isa
from tpudsl.backend.address_assign import nbytes
from tpudsl.backend.chips import chip_named
from tpudsl.backend.cmodel import run_bmodel
from tpudsl.backend.layer_group import search
from tpudsl.backend.layer_group.emit import core_records, group_records, tagged_core_records, without_ahead_loads
from tpudsl.backend.layer_group.plan import first_fit_split, static_reason
from tpudsl.backend.layer_group.traffic import gdma_bytes, lower_bound
from tpudsl.backend.schedule import schedule
from tpudsl.backend.slicing import GLOBAL_ONLY, KINDS


def test_no_compilation_moves_fewer_bytes_than_the_bound(tmp_path):
    seen = Counter()

    @settings(max_examples=max(10, settings.default.max_examples // 10))
    @given(groupable_networks(rows=(3, 64)))
    def check(net):
        model, _ = net
        top = lowered(model)
        bound = lower_bound(top.module)
        moved = {}
        for opt in (2, 1):
            bm = compile_for(top, "tiny", str(tmp_path / f"{opt}.bmodel"), opt=opt)
            if opt == 2:
                grouped = Grouped(top)
            moved[opt] = gdma_bytes(isa.decode(bm.commands))
        assert bound <= moved[2] and bound <= moved[1], (bound, moved)
        assert bound > 0
        whole = sum(nbytes(op.results[0]) for op in top.module.walk() if op.name in ("top.Input", "top.Weight"))
        if bound < whole + sum(nbytes(v) for v in top.main_func().body.block.last_op.operands):
            event("some input elements are not needed for the outputs")  # a strided window skips rows
            seen["unneeded"] += 1
        if moved[2] == bound:
            event("opt=2 moves exactly the bound")
            seen["exact"] += 1
        if grouped.groups:
            event("a group of several ops")
            seen["groups"] += 1
        if moved[2] < moved[1]:
            event("groups move fewer bytes than groups of one")
            seen["fewer"] += 1
        seen["examples"] += 1

    check()
    assert seen["groups"] >= seen["examples"] / 3 and seen["fewer"] >= seen["examples"] / 4, seen
    assert seen["exact"] >= 1, seen


def test_a_model_held_whole_in_one_group_moves_exactly_the_bound(tmp_path):
    """conv 3x3 (bias) -> Relu -> conv 3x3 -> max pool on a small input: one unsliced group, which
    loads the input and each coefficient once and stores the output once. The count by hand: input
    1x4x8x8 f32, filters 6x4x3x3 and 4x6x3x3 f32, bias 6 f32, output 1x4x4x4 f32."""
    rng = np.random.default_rng(1)
    g = Graph(rng)
    g.shapes["x"] = (1, 4, 8, 8)
    a = g.node("Conv", ["x", g.const((6, 4, 3, 3)), g.const((6,))], (1, 6, 8, 8), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    b = g.node("Conv", [g.node("Relu", [a], (1, 6, 8, 8)), g.const((4, 6, 3, 3))], (1, 4, 8, 8), kernel_shape=[3, 3],
               pads=[1, 1, 1, 1])
    out = g.node("MaxPool", [b], (1, 4, 4, 4), kernel_shape=[2, 2], strides=[2, 2])
    top = lowered(g.model({"x": (1, 4, 8, 8)}, out))
    bound = lower_bound(top.module)
    bm = compile_for(top, "tiny", str(tmp_path / "g.bmodel"), opt=2)
    groups = Grouped(top).groups
    assert [(n, h, len(ops)) for n, h, ops in groups] == [(1, 1, 3)], groups  # conv+relu, conv, pool
    by_hand = 4 * (4 * 8 * 8 + 6 * 4 * 9 + 4 * 6 * 9 + 6 + 4 * 4 * 4)
    assert gdma_bytes(isa.decode(bm.commands)) == bound == by_hand


def test_input_rows_the_outputs_do_not_need_are_not_in_the_bound(tmp_path):
    """x (1x1x3x2) -> 1x1 conv stride 2 (rows 0 and 2) -> 1x1 conv stride 2 (row 0 of that): the
    output needs row 0 of x only, and one group loads only it (hypothesis found this model when
    the bound counted every input whole: 40 bytes, while opt=2 moves 24). By hand: x's row 0 (2
    f32), two 1x1 filters (1 f32 each), the output 1x1x1x2 f32."""
    rng = np.random.default_rng(2)
    g = Graph(rng)
    g.shapes["x"] = (1, 1, 3, 2)
    a = g.node("Conv", ["x", g.const((1, 1, 1, 1))], (1, 1, 2, 2), kernel_shape=[1, 1], strides=[2, 1])
    out = g.node("Conv", [a, g.const((1, 1, 1, 1))], (1, 1, 1, 2), kernel_shape=[1, 1], strides=[2, 1])
    top = lowered(g.model({"x": (1, 1, 3, 2)}, out))
    bound = lower_bound(top.module)
    assert bound == 4 * (2 + 1 + 1 + 2)
    moved = {opt: gdma_bytes(isa.decode(compile_for(top, "tiny", str(tmp_path / f"{opt}.bmodel"), opt=opt).commands))
             for opt in (2, 1)}
    assert moved[2] == bound < moved[1], moved


def test_a_stride_2_conv_after_a_pool_needs_the_even_rows_only(tmp_path):
    """x (1x5x23x23) -> MaxPool kernel 1 -> Relu -> 1x1 conv (1 filter, strides 2, 1): output row
    r reads pool row 2r, which reads x's row 2r, so the output needs x's 12 even rows. Hypothesis
    found it when the bound took the box around the needed rows (all 23 rows: 11,704 bytes) while
    the group's two slices load rows 0-10 and 12-22 (11,244). The skipped row is unused: NaN in
    every odd row changes no bit of the grouped result, which matches the Tpu interpreter. By hand:
    x's even rows (5 x 12 x 23 f32), the filter (5 f32), the output (12 x 23 f32)."""
    rng = np.random.default_rng(3)
    g = Graph(rng)
    g.shapes["x"] = (1, 5, 23, 23)
    pooled = g.node("MaxPool", ["x"], (1, 5, 23, 23), kernel_shape=[1, 1])
    out = g.node("Conv", [g.node("Relu", [pooled], (1, 5, 23, 23)), g.const((1, 5, 1, 1))], (1, 1, 12, 23),
                 kernel_shape=[1, 1], strides=[2, 1])
    model = g.model({"x": (1, 5, 23, 23)}, out)
    top = lowered(model)
    bound = lower_bound(top.module)
    assert bound == 4 * (5 * ((23 + 1) // 2) * 23 + 5 + 12 * 23)
    x = rng.standard_normal((1, 5, 23, 23)).astype(np.float32)
    odd_nan = x.copy()
    odd_nan[:, :, 1::2] = np.nan
    want = interpret(top, {"x": x})[out]
    moved = {}
    for opt in (2, 1):
        bm = compile_for(lowered(model), "tiny", str(tmp_path / f"{opt}.bmodel"), opt=opt)
        moved[opt] = gdma_bytes(isa.decode(bm.commands))
        got = run_bmodel(bm, {"x": x})[0][out]
        assert_f32_close(got, want.astype(np.float64), out)
        assert np.array_equal(run_bmodel(bm, {"x": odd_nan})[0][out], got)
    assert bound < moved[2] < moved[1], moved


def test_the_bound_counts_the_columns_and_lanes_a_slicing_may_skip(tmp_path):
    """Along W and C an op may be cut too (a group of one that does not fit otherwise), one column
    or one lane-wide part of channels at the finest: a 1x1 conv with strides (1, 2) on x (1x1x2x5)
    needs x's columns 0, 2 and 4 of both rows; a kernel-1 max pool on x (1x8x2x2) whose channels 0-1
    alone are taken (Slice) needs channels 0-3, the first 4-lane part of the tiny chip; row 1 alone
    of a 1x1 transposed conv with strides 2 on x (1x1x2x2) is an inserted zero row and needs no
    element of x. By hand: the needed elements of x, the filter (1 f32), the output."""
    rng = np.random.default_rng(4)
    g = Graph(rng)
    g.shapes["x"] = (1, 1, 2, 5)
    out = g.node("Conv", ["x", g.const((1, 1, 1, 1))], (1, 1, 2, 3), kernel_shape=[1, 1], strides=[1, 2])
    assert lower_bound(lowered(g.model({"x": (1, 1, 2, 5)}, out)).module) == 4 * (2 * 3 + 1 + 2 * 3)
    g = Graph(rng)
    g.shapes["x"] = (1, 8, 2, 2)
    pooled = g.node("MaxPool", ["x"], (1, 8, 2, 2), kernel_shape=[1, 1])
    out = g.node("Slice", [pooled, g.ints([0]), g.ints([2]), g.ints([1])], (1, 2, 2, 2))
    top = lowered(g.model({"x": (1, 8, 2, 2)}, out))
    assert [op.name for op in top.main_func().body.block.ops if op.name.startswith("tpu.")] == ["tpu.Pool2D",
                                                                                                "tpu.Slice"]
    bound = lower_bound(top.module)
    assert bound == 4 * (4 * 2 * 2 + 2 * 2 * 2)
    assert bound <= gdma_bytes(isa.decode(compile_for(top, "tiny", str(tmp_path / "s.bmodel"), opt=1).commands))
    g = Graph(rng)
    g.shapes["x"] = (1, 1, 2, 2)
    up = g.node("ConvTranspose", ["x", g.const((1, 1, 1, 1))], (1, 1, 3, 3), kernel_shape=[1, 1], strides=[2, 2])
    out = g.node("Slice", [up, g.ints([1]), g.ints([2]), g.ints([2])], (1, 1, 1, 3))
    assert lower_bound(lowered(g.model({"x": (1, 1, 2, 2)}, out)).module) == 4 * (0 + 1 + 3)


def test_no_group_costs_fewer_cycles_than_its_ops_bdc_floor(tmp_path):
    """The search skips a run whose ops' BDC floor (each op computed once, unsliced) cannot beat the
    best grouping found, and a planned run whose engine floor (its records' BDC and GDMA cycles, the
    prefetchable loads aside) cannot: exact only if no valid group's cost is below its floors. Every
    valid run of random networks, sliced or not, is costed at or above both (with the cost model's
    cycles), prefetched too (its records without the ahead op's whole loads, which
    `without_ahead_loads` takes out of its records as group_records leaves them out). Sliced groups
    and grouping are the search's outcome (drawn, not forced)."""
    tally = FeatureTally(("the search groups ops",))

    @settings(max_examples=max(10, settings.default.max_examples // 10))
    @given(groupable_networks(rows=(3, 96)))
    def check(net):
        runs = sliced = 0
        top = lowered(net[0])
        compile_for(top, "tiny", str(tmp_path / "1.bmodel"), opt=1)
        chip = chip_named("tiny")
        ops = [op for op in top.main_func().body.block.ops if op.name in KINDS or op.name in GLOBAL_ONLY]
        for i in range(len(ops) + 1):
            for j in range(i - 2, -1, -1):
                if static_reason(ops[j:i]) is not None:
                    break
                plan = first_fit_split(ops[j:i], chip)
                if isinstance(plan, str):
                    continue
                cost = schedule([r for _, r in group_records(plan, lambda t: 0)], chip).makespan
                assert sum(search._bdc_floor(op, chip) for op in ops[j:i]) <= cost
                tagged = tagged_core_records(plan, lambda t: 0)
                floor = search._engine_floor(tagged, search._ahead_loads(plan, chip)[1], chip)
                assert floor <= cost
                if plan.ahead_op is not None:
                    prefetched = core_records(plan, lambda t: 0, prefetched=True)
                    assert without_ahead_loads(plan, tagged) == prefetched
                    assert floor <= max(schedule(rs, chip).makespan for rs in prefetched)
                runs += 1
                sliced += plan.nsecs * plan.hsecs > 1
        pruned = [p.ops for p in search.search(ops, chip)]
        with pytest.MonkeyPatch.context() as m:  # every run planned and scheduled
            m.setattr(search, "_bdc_floor", lambda op, chip: 0)
            m.setattr(search, "_engine_floor", lambda plan, tagged, chip: 0)
            assert [p.ops for p in search.search(ops, chip)] == pruned
        tally.record(["the search groups ops"] if pruned else [], {"runs": runs, "sliced groups": sliced})

    check()
    tally.assert_each_in(1 / 4)
    tally.assert_parts_per_example("sliced groups", 1 / 4)
    tally.assert_parts_per_example("runs", 1)

"""The GDMA traffic bound (`layer_group.traffic.lower_bound`): every coefficient, input and output
once. It is a lower bound of what any compilation moves (random networks of the ops that join
groups, compiled for the tiny chip with groups and with groups of one), and a group that holds the
whole model unsliced moves exactly it, which a hand count of the model's tensors gives too."""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import event, given, settings

from tests.backend_support import compile_for, lowered
from tests.test_backend_cmodel import Graph
from tests.test_layer_group import Grouped, groupable_networks
from tpudsl.backend import isa
from tpudsl.backend.address_assign import nbytes
from tpudsl.backend.layer_group.traffic import gdma_bytes, lower_bound


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

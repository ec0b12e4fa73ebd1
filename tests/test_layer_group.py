"""Layer groups of several ops (`--layer-group="opt=2"`): random chains and small DAGs of the ops
that join groups (conv, pool, element-wise), with a Concat now and then that must cut them, compiled
for the `tiny` chip: the cmodel matches the Tpu interpreter (F32, 1e-5 relative) and the
groups-of-one compilation (opt=1). Groups of >= 2 ops, and groups sliced along H and along N,
must each occur in enough examples."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st

from tests.backend_support import assert_f32_close, compile_for, interpret, lowered
from tests.test_backend_cmodel import Graph, _window
from tpudsl.backend import isa
from tpudsl.backend.cmodel import run_bmodel
from tpudsl.ir.printer import print_module


@st.composite
def groupable_networks(draw):
    """(model, feed): 2-6 ops, each reading the last tensor (or, for a binary, an earlier one)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    g = Graph(rng)
    x = (draw(st.integers(1, 4)), draw(st.integers(1, 6)), draw(st.integers(3, 96)), draw(st.integers(2, 24)))
    g.shapes["x"] = x
    tensors = ["x"]
    for _ in range(draw(st.integers(2, 6))):
        src = tensors[-1]
        n, c, h, w = g.shapes[src]
        kind = draw(st.sampled_from(["conv", "conv", "conv", "pool", "binary", "binary", "relu", "concat"]))
        if kind == "conv":
            kh, sh, pt, pb, oh, dh = _window(draw, h, dilate=True)
            kw, sw, pl, pr, ow, dw = _window(draw, w)
            group, oc = (c, c) if draw(st.booleans()) else (1, draw(st.integers(1, 6)))
            ins = [src, g.const((oc, c // group, kh, kw))] + ([g.const((oc,))] if draw(st.booleans()) else [])
            out = g.node("Conv", ins, (n, oc, oh, ow), kernel_shape=[kh, kw], strides=[sh, sw],
                         pads=[pt, pl, pb, pr], group=group, dilations=[dh, dw])
        elif kind == "pool":
            kh, sh, pt, pb, oh, _ = _window(draw, h)
            kw, sw, pl, pr, ow, _ = _window(draw, w)
            pt, pb, pl, pr = (min(p, k // 2) for p, k in ((pt, kh), (pb, kh), (pl, kw), (pr, kw)))
            oh, ow = (h + pt + pb - kh) // sh + 1, (w + pl + pr - kw) // sw + 1
            out = g.node(draw(st.sampled_from(["MaxPool", "AveragePool"])), [src], (n, c, oh, ow),
                         kernel_shape=[kh, kw], strides=[sh, sw], pads=[pt, pl, pb, pr])
        elif kind == "binary":
            other = draw(st.sampled_from([t for t in tensors if g.shapes[t] == g.shapes[src]]))
            out = g.node(draw(st.sampled_from(["Add", "Sub", "Mul", "Max", "Min"])), [src, other], (n, c, h, w))
        elif kind == "concat":
            out = g.node("Concat", [src, src], (n, 2 * c, h, w), axis=1)
        else:
            out = g.node("Relu", [src], (n, c, h, w))
        tensors.append(out)
    return g.model({"x": x}, tensors[-1]), {"x": rng.standard_normal(x).astype(np.float32)}


def _groups(text: str) -> dict[int, list[tuple[int, int]]]:
    """group_id -> (nsecs, hsecs) of each of its ops, from the printed IR."""
    groups: dict[int, list[tuple[int, int]]] = {}
    for line in text.splitlines():
        gid = re.search(r"\bgroup_id = (\d+) : i64", line)
        if gid:
            secs = [int(re.search(rf"\b{k} = (\d+) : i64", line).group(1)) for k in ("nsecs", "hsecs")]  # type: ignore[union-attr]
            groups.setdefault(int(gid.group(1)), []).append(tuple(secs))  # type: ignore[arg-type]
    return groups


def test_groups_match_the_tpu_interpreter_and_groups_of_one(tmp_path):
    seen = Counter()

    @settings(max_examples=max(40, settings.default.max_examples // 4))
    @given(groupable_networks())
    def check(net):
        model, feed = net
        top = lowered(model)
        want = interpret(top, feed)
        got, _ = run_bmodel(compile_for(top, "tiny", str(tmp_path / "g.bmodel"), opt=2), feed)
        groups = _groups(print_module(top.module))
        alone, _ = run_bmodel(compile_for(top, "tiny", str(tmp_path / "s.bmodel"), opt=1), feed)
        for name, w in want.items():
            assert_f32_close(got[name], w, name)
            assert_f32_close(got[name], alone[name].astype(np.float64), name)
        for feature, present in (("group of >= 2 ops", bool(groups)),
                                 ("group sliced along H", any(s[0][1] > 1 for s in groups.values())),
                                 ("group sliced along N", any(s[0][0] > 1 for s in groups.values()))):
            if present:
                event(feature)
                seen[feature] += 1
        seen["examples"] += 1

    check()
    for feature, share in (("group of >= 2 ops", 3), ("group sliced along H", 20), ("group sliced along N", 10)):
        assert seen[feature] >= seen["examples"] / share, f"{feature}: {seen[feature]} of {seen['examples']}"


def _chain(shape, tail: int = 2):
    """x -> conv 3x3 -> conv 3x3 -> ... (`tail` convs) -> Add x: one group when it fits."""
    rng = np.random.default_rng(5)
    g = Graph(rng)
    g.shapes["x"] = shape
    t = "x"
    for _ in range(tail):
        t = g.node("Conv", [t, g.const((shape[1], shape[1], 3, 3))], shape, kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    out = g.node("Add", [t, "x"], shape)
    return g.model({"x": shape}, out), {"x": rng.standard_normal(shape).astype(np.float32)}


def test_a_group_keeps_its_intermediates_local_and_loads_weights_once(tmp_path):
    """Two convs and an Add in one group sliced along H: the intermediates are never stored, each
    filter is loaded once for the whole group, and fewer GDMA bytes move than with groups of one."""
    model, feed = _chain((1, 4, 96, 16))
    top = lowered(model)
    want = interpret(top, feed)
    bm = compile_for(top, "tiny", str(tmp_path / "g.bmodel"))
    groups = _groups(print_module(top.module))
    assert list(groups) == [0] and len(groups[0]) == 3 and groups[0][0][1] > 1, groups
    records = isa.decode(bm.commands)
    stores = [r for r in records if isinstance(r, isa.GdmaStore)]
    out_addr = next(op for op in top.main_func().body.block.ops if op.name == "tpu.Add").results[0].type.encoding
    assert {r.gaddr >= out_addr.value.data for r in stores} == {True} and len(stores) == groups[0][0][1]
    filters = [r for r in records if type(r) is isa.GdmaLoad and (r.n, r.c, r.h, r.w) == (1, 4, 4, 9)]
    assert len(filters) == 2
    got, _ = run_bmodel(bm, feed)
    for name, w in want.items():
        assert_f32_close(got[name], w, name)
    alone = isa.decode(compile_for(top, "tiny", str(tmp_path / "s.bmodel"), opt=1).commands)
    moved = lambda rs: sum(r.n * r.c * r.h * r.w for r in rs if isinstance(r, isa.GdmaLoad))  # noqa: E731
    assert moved(records) < moved(alone)

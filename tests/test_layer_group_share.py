"""A group loads a tensor from outside once per slice however many of its ops read it, when their
parts of it are the same tile in every slice (`plan._shared_loads`): a residual block's input
read by its conv and by the Add.

The block's input t is a Concat's result (a Concat joins no group, so t always comes from outside
the group, in F32 and INT8 alike): t -> conv 1x1 -> Add(conv, t), or t -> conv 3x3 -> Relu ->
conv 3x3 -> Add(conv, t) (ResNet's basic block, as layer1.0 reads the max pool's output),
compiled for the tiny chip by the real search. The oracle is the three-level check: the cmodel
running the bmodel equals the Tpu interpreter (F32 within 1e-5 of the tensor's scale, INT8 bit for
bit). The bytes are counted from the shapes, not from the plan: where the block's conv and Add are
in one group and their parts of t are equal in every slice (a 1x1 conv reads no halo; a 3x3 conv
reads all of t's rows when the group is not cut along H), the stream loads t once per slice, each
time the slice's part (N and H cut into ceil-sized parts), and so moves exactly t's size in bytes
(n x c x h x w x element bytes) instead of twice that; where the 3x3 conv reads halo rows the Add
does not, every slice loads two parts of t.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
from hypothesis import strategies as st
from hypothesis import settings

from tests.backend_support import assert_f32_close, compile_for, int8_module, interpret, lowered
from tests.feature_tally import FeatureTally, run_each
from tests.test_backend_cmodel import Graph
from tpudsl.backend import isa
from tpudsl.backend.cmodel import run_bmodel
from tpudsl.backend.layer_group.region import members
from tpudsl.dialects import make_context
from tpudsl.passes import pass_class


@st.composite
def blocks(draw, kind: str, rows: tuple[int, int], n: tuple[int, int] = (1, 2), c: tuple[int, int] = (1, 2),
           w: tuple[int, int] = (8, 24)):
    """(model, feed, kind): x (n, c, rows, w) -> t = Concat(x, x) along C -> the block of `kind`."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    g = Graph(rng)
    x = (draw(st.integers(*n)), draw(st.integers(*c)), draw(st.integers(*rows)), draw(st.integers(*w)))
    g.shapes["x"] = x
    shape = (x[0], 2 * x[1], x[2], x[3])
    c = shape[1]
    t = g.node("Concat", ["x", "x"], shape, axis=1)
    if kind == "1x1":
        y = g.node("Conv", [t, g.const((c, c, 1, 1))], shape, kernel_shape=[1, 1])
    else:
        conv = lambda src: g.node("Conv", [src, g.const((c, c, 3, 3))], shape,  # noqa: E731
                                  kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        y = conv(g.node("Relu", [conv(t)], shape))
    out = g.node("Add", [y, t], shape)
    if draw(st.booleans()):
        out = g.node("Relu", [out], shape)
    return g.model({"x": x}, out), {"x": rng.standard_normal(x).astype(np.float32)}, kind


def _ceil_parts(total: int, secs: int) -> list[int]:
    """The sizes of `total` cut into `secs` parts of ceil(total / secs), the last what is left."""
    step = -(-total // secs)
    return [min(step, total - b) for b in range(0, total, step)]


def _check(net, mode: str, tmp_path) -> list[str]:
    """Compile, run, compare; return the features the example shows."""
    model, feed, kind = net
    shape = feed["x"].shape
    top = lowered(model, mode) if mode == "F32" else int8_module(model, shape, tmp_path)
    want = interpret(top, feed)  # before --weight-reorder merges an INT8 conv's coefficients
    if mode == "INT8":
        pass_class("weight-reorder")().apply(make_context(), top.module)
    bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
    got, _ = run_bmodel(bm, feed)
    for name, w in want.items():
        if mode == "F32":
            assert_f32_close(got[name], w, name)
        else:
            assert np.array_equal(got[name], w), name
    concat = next(op for op in top.module.walk() if op.name == "tpu.Concat")
    t = concat.results[0]
    readers = [(op, v.owner) for g in top.module.walk() if g.name == "tpu.Group" for op in members(g)
               for v in op.operands if getattr(v.owner, "name", None) == "tpu.Load" and v.owner.operands[0] is t]
    if len(readers) < 2:  # the conv and the Add in different groups: nothing to share
        return [f"{mode} {kind}: the block's conv and Add in different groups"]
    group = readers[0][0].parent_op()
    assert all(op.parent_op() is group for op, _ in readers)
    a = {k: group.attributes[k].value.data for k in ("nsecs", "hsecs")}
    assert "csecs" not in group.attributes and "wsecs" not in group.attributes  # N x H fits these shapes
    n, c, h, w = (d.data for d in t.type.shape)
    esize = 1 if mode == "INT8" else 4
    gaddr = t.type.encoding.value.data
    from_t = [r for r in isa.decode(bm.commands)
              if type(r) is isa.GdmaLoad and gaddr <= r.gaddr < gaddr + n * c * h * w * esize]
    loaded = sum(r.n * r.c * r.h * r.w for r in from_t) * esize
    parts = Counter((pn, c, ph, w) for pn in _ceil_parts(n, a["nsecs"]) for ph in _ceil_parts(h, a["hsecs"]))
    equal_parts = kind == "1x1" or a["hsecs"] == 1  # else the 3x3 conv's halo rows make them differ
    if equal_parts:
        assert len({load for _, load in readers}) == 1, "one tpu.Load of t in the group, read by both"
        assert Counter((r.n, r.c, r.h, r.w) for r in from_t) == parts, (Counter(
            (r.n, r.c, r.h, r.w) for r in from_t), parts)
        # each reader loading its own part moves 2 x t's bytes; once per slice moves t's bytes
        assert loaded == n * c * h * w * esize, (loaded, n * c * h * w * esize)
        cut = "sliced along H" if a["hsecs"] > 1 else "sliced along N" if a["nsecs"] > 1 else "unsliced"
        return [f"{mode} {kind}: t loaded once per slice, {cut}"]
    assert len({load for _, load in readers}) == 2 and len(from_t) == 2 * sum(parts.values())
    assert loaded > n * c * h * w * esize  # halo rows and the Add's rows again
    return [f"{mode} {kind}: t loaded twice per slice (halo rows), sliced along H"]


def test_a_group_loads_a_tensor_its_conv_and_add_both_read_once_per_slice(tmp_path_factory):
    """Each run draws blocks shaped for the case it exists for (rows that need H slices or fit
    unsliced, on the tiny chip) and requires that case in most of its examples (the search decides
    the grouping and the slices: drawn, not forced)."""
    each = max(4, settings.default.max_examples // 25)
    runs = [
        ("F32", blocks("1x1", (120, 200)), "F32 1x1: t loaded once per slice, sliced along H"),
        ("F32", blocks("3x3", (4, 16)), "F32 3x3: t loaded once per slice, unsliced"),
        ("F32", blocks("3x3", (28, 36), n=(2, 2), c=(2, 2), w=(20, 24)), "F32 3x3: t loaded once per slice, sliced along N"),
        ("F32", blocks("3x3", (112, 160), n=(1, 1)), "F32 3x3: t loaded twice per slice (halo rows), sliced along H"),
        ("INT8", blocks("1x1", (400, 700), n=(1, 1)), "INT8 1x1: t loaded once per slice, sliced along H"),
        ("INT8", blocks("3x3", (4, 16), n=(1, 1)), "INT8 3x3: t loaded once per slice, unsliced"),
    ]
    tally = FeatureTally(tuple(feature for *_, feature in runs))

    def check(case, features):
        mode, net = case
        tally.record(_check(net, mode, tmp_path_factory.mktemp("s")))

    run_each(check, [(strategy.map(lambda net, mode=mode: (mode, net)), each, ()) for mode, strategy, _ in runs])
    tally.assert_each_in(3 / (4 * len(runs)))  # each run's case in at least 3 in 4 of its examples

"""A group loads a tensor from outside once per slice however many of its ops read it, when each
reader's part of it lies inside the largest reader's part in every slice and isa.py's local layout
can address it there (`plan._shared_loads`): a residual block's input read by its first conv, halo
rows and all, and by the Add, which reads its rows in place inside that load.

The block's input t is a Concat's result (a Concat joins no group, so t always comes from outside
the group, in F32 and INT8 alike): t -> conv 1x1 -> Add(conv, t); t -> conv 3x3 -> Relu -> conv 3x3
-> Add(conv, t) (ResNet's basic block, as layer1.0 reads the max pool's output); or RepVGG's block,
Add(Add(conv 1x1(t), conv 3x3(t)), t) (a later reader's part is the larger), compiled for the tiny chip
(4 lanes) by the real search. The oracle is the three-level check: the cmodel running the bmodel
equals the Tpu interpreter (F32 within 1e-5 of the tensor's scale, INT8 bit for bit). The loads are
counted from the shapes, not from the plan: the group is cut on its last op's output into
ceil-sized N and H parts; for the output rows [a, b) of a slice the readers' parts of t are rows
[a - k, b + k) clipped to t's rows, k the halo of the reader (0 for the 1x1 conv and the Add, 2 for
the basic block's first conv, which feeds a second 3x3 conv, 1 for RepVGG's 3x3 conv). Where t
has at most 4 channels and a slice one N, every part is one plane per lane, which the layout
addresses inside a larger part: the stream loads t once per slice, the largest part, and (no halo)
moves exactly t's bytes. With 6-8 channels (two channel groups per lane) and halo rows, a smaller
part's planes are not the larger's rows apart: every slice loads both parts.
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

HALO = {"1x1": 0, "3x3": 2, "repvgg": 1}  # rows above and below the output rows the largest reader of t reads
LANES, EU = 4, 16  # the tiny chip's lanes and EU bytes (a plane's length in a lane is rounded up to EU bytes)


@st.composite
def blocks(draw, kind: str, rows: tuple[int, int], n: tuple[int, int] = (1, 2), c: tuple[int, int] = (1, 2),
           w: tuple[int, int] = (8, 24), w_step: int = 1):
    """(model, feed, kind): x (n, c, rows, w) -> t = Concat(x, x) along C -> the block of `kind`; w a
    multiple of `w_step` (a row of a multiple of EU bytes: a part at any row offset in a larger part
    ends inside its rounded plane)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    g = Graph(rng)
    x = (draw(st.integers(*n)), draw(st.integers(*c)), draw(st.integers(*rows)),
         draw(st.integers(-(-w[0] // w_step), w[1] // w_step)) * w_step)
    g.shapes["x"] = x
    shape = (x[0], 2 * x[1], x[2], x[3])
    c = shape[1]
    t = g.node("Concat", ["x", "x"], shape, axis=1)
    conv = lambda src, k: g.node("Conv", [src, g.const((c, c, k, k))], shape,  # noqa: E731
                                 kernel_shape=[k, k], pads=[k // 2] * 4)
    if kind == "1x1":
        out = g.node("Add", [conv(t, 1), t], shape)
    elif kind == "3x3":
        out = g.node("Add", [conv(g.node("Relu", [conv(t, 3)], shape), 3), t], shape)
    else:  # the 1x1 conv reads t first, with a smaller part than the 3x3 conv's, then the last Add
        small = conv(t, 1)
        out = g.node("Add", [g.node("Add", [small, conv(t, 3)], shape), t], shape)
    if draw(st.booleans()):
        out = g.node("Relu", [out], shape)
    return g.model({"x": x}, out), {"x": rng.standard_normal(x).astype(np.float32)}, kind


def _ceil_ranges(total: int, secs: int) -> list[tuple[int, int]]:
    """`total` cut into `secs` parts of ceil(total / secs), the last what is left: [start, end) each."""
    step = -(-total // secs)
    return [(b, min(b + step, total)) for b in range(0, total, step)]


def _plane(rows: int, w: int, esize: int) -> int:
    """Bytes of one plane of `rows` rows in a lane: rounded up to the EU width."""
    return -(-rows * w * esize // EU) * EU


def _inside(small: tuple[int, int], large: tuple[int, int], w: int, esize: int) -> bool:
    """Whether rows `small` read as one plane at their offset inside the plane of rows `large` end
    inside it, the plane lengths rounded up to EU bytes each."""
    return (small[0] - large[0]) * w * esize + _plane(small[1] - small[0], w, esize) <= _plane(
        large[1] - large[0], w, esize)


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
    if len(readers) < 2:  # the convs and the Add in different groups: nothing to share
        return [f"{mode} {kind}: the block's readers of t in different groups"]
    group = readers[0][0].parent_op()
    assert all(op.parent_op() is group for op, _ in readers)
    a = {k: group.attributes[k].value.data for k in ("nsecs", "hsecs")}
    assert "csecs" not in group.attributes and "wsecs" not in group.attributes  # N x H fits these shapes
    n, c, h, w = (d.data for d in t.type.shape)
    esize = 1 if mode == "INT8" else 4
    gaddr = t.type.encoding.value.data
    from_t = [r for r in isa.decode(bm.commands)
              if type(r) is isa.GdmaLoad and gaddr <= r.gaddr < gaddr + n * c * h * w * esize]
    loads = Counter((r.n, r.c, r.h, r.w) for r in from_t)
    halo = HALO[kind] if a["hsecs"] > 1 else 0  # unsliced along H, every reader reads all of t's rows
    slices = [(b - f, rows) for f, b in _ceil_ranges(n, a["nsecs"]) for rows in _ceil_ranges(h, a["hsecs"])]
    wide = [(max(s - halo, 0), min(e + halo, h)) for _, (s, e) in slices]
    large = Counter((pn, c, e - s, w) for (pn, _), (s, e) in zip(slices, wide))
    cut = "sliced along H" if a["hsecs"] > 1 else "sliced along N" if a["nsecs"] > 1 else "unsliced"
    # a part inside a larger one is addressable there when their rows are as many (no halo), or when
    # each lane holds one plane of each (one N, at most LANES channels) and the smaller ends inside
    # the larger's plane
    if halo == 0 or (c <= LANES and all(pn == 1 and _inside(rows, big, w, esize)
                                        for (pn, rows), big in zip(slices, wide))):
        assert len({load for _, load in readers}) == 1, "one tpu.Load of t in the group, read by every reader"
        assert loads == large, (loads, large)  # once per slice, the largest part
        if halo == 0:  # each reader loading its own part moves 2 x t's bytes; once per slice t's bytes
            assert sum(r.n * r.c * r.h * r.w for r in from_t) * esize == n * c * h * w * esize
        return [f"{mode} {kind}: t loaded once per slice, {cut}"]
    small = Counter((pn, c, e - s, w) for pn, (s, e) in slices)
    assert len({load for _, load in readers}) == 2 and loads == large + small, (loads, large + small)
    return [f"{mode} {kind}: t loaded twice per slice, {cut}"]


def test_a_group_loads_a_tensor_its_readers_read_inside_one_part_once_per_slice(tmp_path_factory):
    """Each run draws blocks shaped for the case it exists for (rows that need H slices or fit
    unsliced, on the tiny chip; channels on one or two channel groups per lane) and requires that
    case in most of its examples (the search decides the grouping and the slices: drawn, not forced)."""
    each = max(4, settings.default.max_examples // 33)
    runs = [
        ("F32", blocks("1x1", (120, 200)), "F32 1x1: t loaded once per slice, sliced along H"),
        ("F32", blocks("3x3", (4, 16)), "F32 3x3: t loaded once per slice, unsliced"),
        ("F32", blocks("3x3", (28, 36), n=(2, 2), c=(2, 2), w=(20, 24)), "F32 3x3: t loaded once per slice, sliced along N"),
        ("F32", blocks("3x3", (160, 240), n=(1, 1), w_step=4), "F32 3x3: t loaded once per slice, sliced along H"),
        ("F32", blocks("3x3", (60, 90), n=(1, 1), c=(3, 4)), "F32 3x3: t loaded twice per slice, sliced along H"),
        ("F32", blocks("repvgg", (120, 200), n=(1, 1), w_step=4), "F32 repvgg: t loaded once per slice, sliced along H"),
        ("INT8", blocks("1x1", (400, 700), n=(1, 1)), "INT8 1x1: t loaded once per slice, sliced along H"),
        ("INT8", blocks("3x3", (4, 16), n=(1, 1)), "INT8 3x3: t loaded once per slice, unsliced"),
        ("INT8", blocks("3x3", (400, 700), n=(1, 1), w=(16, 32), w_step=16), "INT8 3x3: t loaded once per slice, sliced along H"),
    ]
    tally = FeatureTally(tuple(feature for *_, feature in runs))

    def check(case, features):
        mode, net = case
        tally.record(_check(net, mode, tmp_path_factory.mktemp("s")))

    run_each(check, [(strategy.map(lambda net, mode=mode: (mode, net)), each, ()) for mode, strategy, _ in runs])
    tally.assert_each_in(3 / (4 * len(runs)))  # each run's case in at least 3 in 4 of its examples


def test_a_downsampling_conv_reads_the_block_input_on_to_the_end_of_the_3x3_convs_load(tmp_path):
    """ResNet's downsampling block on two channel groups per lane: t (1, 8, 16, 16) read by the 3x3
    stride-2 conv (pads 1: rows 0 .. 15) and by the 1x1 stride-2 downsampling conv (rows 0, 2, .., 14:
    15 rows, whose 15-row planes would not be the 16-row planes' length apart). The 1x1 conv reads
    on to the end of the 3x3 conv's part (row 15, which none of its windows reads), so t is loaded
    once, whole; the cmodel equals the Tpu interpreter."""
    g = Graph(np.random.default_rng(0))
    x, shape, half = (1, 4, 16, 16), (1, 8, 16, 16), (1, 8, 8, 8)
    g.shapes["x"] = x
    t = g.node("Concat", ["x", "x"], shape, axis=1)
    conv = lambda src, k, stride, out: g.node("Conv", [src, g.const((8, 8, k, k))], out,  # noqa: E731
                                              kernel_shape=[k, k], pads=[k // 2] * 4, strides=[stride] * 2)
    first = g.node("Relu", [conv(t, 3, 2, half)], half)
    out = g.node("Add", [conv(first, 3, 1, half), conv(t, 1, 2, half)], half)
    top = lowered(g.model({"x": x}, out), "F32")
    feed = {"x": np.random.default_rng(1).standard_normal(x).astype(np.float32)}
    want = interpret(top, feed)
    bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
    got, _ = run_bmodel(bm, feed)
    for name, w in want.items():
        assert_f32_close(got[name], w, name)
    group, = (op for op in top.module.walk() if op.name == "tpu.Group")
    assert [op.name for op in members(group)] == ["tpu.Conv2D", "tpu.Conv2D", "tpu.Conv2D", "tpu.Add"]
    t_value = next(op for op in top.module.walk() if op.name == "tpu.Concat").results[0]
    gaddr = t_value.type.encoding.value.data
    from_t = [(r.n, r.c, r.h, r.w) for r in isa.decode(bm.commands)
              if type(r) is isa.GdmaLoad and gaddr <= r.gaddr < gaddr + int(np.prod(shape)) * 4]
    assert from_t == [shape]

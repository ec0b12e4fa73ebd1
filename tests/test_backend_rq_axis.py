"""BdcRequantAxis (opcode 85, tpu.RequantIntAxis) and the grouped INT8 Deconv it follows (BdcDeconvQ
writing int32 sums) on the `tiny` chip (4 lanes x 16 KiB: sliced along N and H): the .bmodel run on
the cmodel equals the Tpu interpreter bit for bit (the cmodel's arithmetic, cmodel/rq_axis.py, is
written apart from the interpreter's); the record alone against big integers from its definition."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st

from tests.backend_support import int8_bit_exact, int8_module
from tests.feature_tally import FeatureTally
from tests.test_backend_cmodel import Graph, _secs
from tests.test_backend_int8_records import _run_one
from tests.test_requant import ref_round
from tpudsl.backend import isa
from tpudsl.dialects.attrs import ROUND_MODES
from tpudsl.ir.printer import print_module


@st.composite
def grouped_deconvs(draw):
    """(model, shape): a grouped ConvTranspose (depthwise too; bias or not; stride 1 or 2) of an
    input up to 2 x 4 x 96 x 20, maybe followed by a ReLU (a Lut) or a 3x3 conv."""
    g = Graph(np.random.default_rng(draw(st.integers(0, 2**16))))
    group = draw(st.sampled_from([2, 4]))
    ic = group * draw(st.integers(1, 2))
    x = (draw(st.integers(1, 2)), ic, draw(st.integers(24, 96)), draw(st.integers(6, 20)))
    g.shapes["x"] = x
    n, _, h, w = x
    s, ocg = draw(st.sampled_from([1, 2, 2])), draw(st.integers(1, 2))  # stride 2: int32 sums that need H slices
    k = draw(st.integers(s, 3))
    oc = group * ocg
    ins = ["x", g.const((ic, ocg, k, k))] + ([g.const((oc,))] if draw(st.booleans()) else [])
    y = g.node("ConvTranspose", ins, (n, oc, (h - 1) * s + k, (w - 1) * s + k), kernel_shape=[k, k],
               strides=[s, s], group=group)
    tail = draw(st.sampled_from(["none", "relu", "conv"]))
    if tail == "relu":
        y = g.node("Relu", [y], g.shapes[y])
    elif tail == "conv":
        y = g.node("Conv", [y, g.const((oc, oc, 3, 3))], g.shapes[y], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    return g.model({"x": x}, y), x


FEATURES = ("BdcRequantAxis", "int32 sums", "sliced along H", "asymmetric")


def test_grouped_int8_deconvs_are_bit_exact_on_the_tiny_chip(tmp_path_factory):
    tally = FeatureTally(FEATURES)

    @settings(max_examples=max(6, settings.default.max_examples // 25))
    @given(grouped_deconvs(), st.booleans())
    def check(net, asym):
        model, shape = net
        d = tmp_path_factory.mktemp("rq")
        top = int8_module(model, shape, d, asymmetric=asym)
        feed = {"x": np.random.default_rng(5).standard_normal(shape).astype(np.float32)}
        records = int8_bit_exact(top, feed, str(d / "m.bmodel"))
        names = {type(r).__name__ for r in records}
        names |= {"int32 sums" for r in records if isinstance(r, isa.BdcDeconvQ) and r.out_dtype == isa.DTYPES["i32"]}
        names |= {"sliced along H"} if max(_secs(print_module(top.module), "hsecs"), default=1) > 1 else set()
        names |= {"asymmetric"} if asym else set()
        tally.record(names)

    check()
    tally.assert_each_in(1 / 4)


@settings(max_examples=max(20, settings.default.max_examples // 4))
@given(st.integers(0, 2**32 - 1), st.sampled_from(["i32", "i8", "u8"]), st.sampled_from(["i8", "u8"]),
       st.sampled_from(ROUND_MODES), st.integers(1, 6))
def test_requant_axis_record_is_its_definition(seed, src, dst, mode, c):
    """Channel j: sat(round((x - in_zp) m_j / 2^rshift_j) + zp_j) by the round mode, in fractions
    (c > 4 spans two channel groups of the tiny chip's lanes)."""
    rng = np.random.default_rng(seed)
    lo_in, hi_in, dt_in = {"i32": (-(2**31), 2**31 - 1, np.int32), "i8": (-128, 127, np.int8),
                           "u8": (0, 255, np.uint8)}[src]
    lo, hi, dt = {"i8": (-128, 127, np.int8), "u8": (0, 255, np.uint8)}[dst]
    x = rng.integers(lo_in, hi_in, (2, c, 1, 3), endpoint=True).astype(dt_in)
    in_zp = 0 if src == "i32" else int(rng.integers(-5, 6))
    rows = [(int(rng.integers(-(2**31) + 1, 2**31)), -int(rng.integers(-2, 63)), int(rng.integers(lo, hi + 1)))
            for _ in range(c)]
    quant = np.array(rows, np.int64).astype(np.int32).reshape(1, c, 1, 3)
    r = isa.BdcRequantAxis(isa.DTYPES[src], isa.DTYPES[dst], 0, 2, c, 1, 3, 64, 128, in_zp, isa.ROUND_MODES[mode])
    got = _run_one(r, {0: x, 128: quant}, (2, c, 1, 3), dt)
    for j, (m, neg_shift, zp) in enumerate(rows):
        want = [max(lo, min(hi, ref_round(Fraction((int(v) - in_zp) * m) / Fraction(2) ** min(-neg_shift, 63), mode)
                             + zp)) for v in x[:, j].ravel()]
        assert got[:, j].ravel().tolist() == want, (j, mode)
    event(mode)
    event("left shift" if any(r[1] > 0 for r in rows) else "right shifts")

"""The newer INT8 forms in the backend: Sub (BdcBinaryQ with the Sub code), MulConst (BdcConstQ)
and average pools whose pads are not counted (BdcPoolQ, per-position divisor) in random chains with
convs and adds, calibrated, lowered to symmetric INT8, compiled for the
`tiny` chip (sliced along N and H) and run on the cmodel: bit-exact against the Tpu interpreter
(whose INT8 kernels are written apart from the cmodel's). The records' arithmetic is also checked
against big integers computed here from docs/quantization.md's formulas."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import onnx
from hypothesis import event, given, settings
from hypothesis import strategies as st

from tests.backend_support import deploy_int8, int8_bit_exact, int8_module
from tests.feature_tally import FeatureTally
from tests.test_backend_cmodel import Graph, _secs
from tests.test_backend_int8 import graph_with_input
from tpudsl.backend import isa
from tpudsl.backend.chips import CHIPS
from tpudsl.backend.bmodel import read_bmodel
from tpudsl.backend.cmodel import run_bmodel
from tpudsl.ir.module import read_npz
from tpudsl.ir.printer import print_module


KINDS = ("sub", "mulconst", "neg", "add", "conv", "avgpool")  # the first op of `networks(first=KIND)`


def min_h_sliced(c: int, w: int) -> int:
    """The least h at which an int8 (1, c, h, w) tensor and a second of its shape do not fit in the
    tiny chip's local memory: every op of `networks` has an input and an output of that shape (the
    whole first image at least, N slices cannot go below it), so each must be sliced along H
    whatever layer group it is in."""
    chip = CHIPS["tiny"]
    h = chip.lmem_bytes // (2 * isa.cgroups(c, chip.lanes) * w)  # lane_bytes is at least c-groups x h x w
    while 2 * isa.lane_bytes(1, c, h, w, 1, chip.lanes, chip.eu_bytes) <= chip.lmem_bytes:
        h += 1
    return h


@st.composite
def networks(draw, first: str):
    """(model, shape): 2-4 of Sub, Mul by a scalar (MulConst), Neg (MulConst -1), Add, a 3x3 conv and
    an average pool of stride 1 with k // 2 pads not counted (odd k: ONNX's default
    count_include_pad 0), `first` (one of KINDS) first and read by the second, each other reading the
    last tensor or the one before (same shapes throughout, tall enough that every op is sliced along
    H: `min_h_sliced`). The test gives each kind the same number of examples as `first`:
    hypothesis's draws of a kind cluster, a fixed first kind cannot."""
    g = Graph(np.random.default_rng(draw(st.integers(0, 2**16))))
    n, c, w = draw(st.integers(1, 2)), draw(st.integers(1, 5)), draw(st.integers(8, 48))
    x = g.shapes["x"] = (n, c, draw(st.integers(min_h_sliced(c, w), min_h_sliced(c, w) + 4)), w)
    tensors = ["x"]
    for i, kind in enumerate([first] + [None] * draw(st.integers(1, 3))):
        src = draw(st.sampled_from(tensors[-2:])) if i != 1 else tensors[-1]  # `first`'s result is always read
        kind = kind or draw(st.sampled_from(["sub", "mulconst", "mulconst", "neg", "add", "conv", "avgpool"]))
        if kind in ("sub", "add"):
            out = g.node(kind.capitalize(), [src, draw(st.sampled_from(tensors))], x)
        elif kind == "mulconst":
            out = g.node("Mul", [src, g.const(())], x)
        elif kind == "neg":
            out = g.node("Neg", [src], x)
        elif kind == "avgpool":
            kh, kw = draw(st.sampled_from([(3, 3), (5, 5), (1, 3), (3, 1), (5, 3)]))
            out = g.node("AveragePool", [src], x, kernel_shape=[kh, kw], pads=[kh // 2, kw // 2, kh // 2, kw // 2])
        else:
            out = g.node("Conv", [src, g.const((x[1], x[1], 3, 3))], x, kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        tensors.append(out)
    return g.model({"x": x}, tensors[-1]), x


FEATURES = ("BdcBinaryQ Sub", "BdcConstQ", "BdcConstQ negative", "BdcPoolQ pads not counted", "sliced along H")


def test_random_sub_mulconst_avgpool_networks_are_bit_exact(tmp_path_factory):
    tally = FeatureTally(FEATURES)

    def check(net):
        model, shape = net
        d = tmp_path_factory.mktemp("f")
        top = int8_module(model, shape, d)
        feed = {"x": np.random.default_rng(3).standard_normal(shape).astype(np.float32)}
        records = int8_bit_exact(top, feed, str(d / "m.bmodel"))
        names = {"BdcBinaryQ Sub" for r in records if isinstance(r, isa.BdcBinaryQ) and r.op == isa.BINARY_OPS["Sub"]}
        names |= {"BdcConstQ" for r in records if isinstance(r, isa.BdcConstQ)}
        names |= {"BdcPoolQ pads not counted" for r in records if isinstance(r, isa.BdcPoolQ) and not r.count_include_pad}
        names |= {"BdcConstQ negative" for r in records if isinstance(r, isa.BdcConstQ) and r.multiplier < 0}
        if max(_secs(print_module(top.module), "hsecs"), default=1) > 1:
            names.add("sliced along H")
        tally.record(names)

    # An eighth of the profile's budget (24 in CI, 4 per first kind): each example calibrates, lowers
    # and compiles, and its tall tensors make the group search try many H splits. At 48 (a quarter)
    # every form showed 3.5-6 times its floor (Sub 17, MulConst 29, negative 19, pools 23 of 48
    # against 4.8); by construction each is first in a sixth of the examples, whatever the count.
    budget = settings(max_examples=max(2, settings.default.max_examples // (8 * len(KINDS))))
    for first in KINDS:
        budget(given(networks(first))(check))()
    # Each form is the first op of a sixth of the examples (a Sub, a MulConst, a Neg, an average pool)
    # and may come again later: at least a tenth each, with margin; every example is sliced along H.
    tally.assert_each_in(1 / 10)
    assert tally.seen["sliced along H"] == tally.seen["examples"], dict(tally.seen)


def _round_half_away(q: Fraction) -> int:
    whole = abs(q.numerator) // q.denominator
    return (1 if q >= 0 else -1) * (whole + (abs(q) - whole >= Fraction(1, 2)))


def _sat8(v: int) -> int:
    return max(-128, min(127, v))


def _run_one(record, inputs: dict[int, np.ndarray], out_shape) -> np.ndarray:
    """One BDC record on the cmodel's memory, its int8 inputs at local addresses."""
    from tpudsl.backend.chips import CHIPS
    from tpudsl.backend.cmodel.engine import HANDLERS
    from tpudsl.backend.cmodel.memory import Memory

    m = Memory(CHIPS["tiny"], 64)
    for addr, value in inputs.items():
        m.write_local(addr, value)
    HANDLERS[type(record)](m, record)
    return m.read_local(record.out_addr, out_shape, np.dtype(np.int8))


@settings(max_examples=max(20, settings.default.max_examples // 2))
@given(st.lists(st.integers(-128, 127), min_size=6, max_size=6), st.lists(st.integers(-128, 127), min_size=6,
       max_size=6), st.integers(-2**31 + 1, 2**31 - 1), st.integers(-2**31 + 1, 2**31 - 1), st.integers(-8, 40))
def test_int8_sub_record_is_the_exact_quotient(a, b, m0, m1, shift):
    """BdcBinaryQ Sub: sat8(round_half_away((a m0 - b m1) / 2^shift)), in fractions."""
    a_, b_ = np.array(a, np.int8).reshape(1, 2, 1, 3), np.array(b, np.int8).reshape(1, 2, 1, 3)
    r = isa.BdcBinaryQ(isa.DTYPES["i8"], isa.BINARY_OPS["Sub"], 0, 1, 2, 1, 3, 64, 1, 2, 1, 3, 128, 1, 2, 1, 3,
                       0, -1.0, m0, m1, shift, isa.ROUND_MODES["HalfAwayFromZero"])
    got = _run_one(r, {0: a_, 64: b_}, (1, 2, 1, 3)).ravel().tolist()
    want = [_sat8(_round_half_away(Fraction(x * m0 - y * m1) / Fraction(2) ** shift)) for x, y in zip(a, b)]
    event("saturated" if any(abs(v) >= 127 for v in want) else "in range")
    assert got == want


@settings(max_examples=max(20, settings.default.max_examples // 2))
@given(st.lists(st.integers(-128, 127), min_size=6, max_size=6), st.integers(-2**31 + 1, 2**31 - 1),
       st.integers(-8, 40), st.booleans())
def test_int8_mulconst_record_is_the_exact_quotient(x, multiplier, shift, relu):
    """BdcConstQ: sat8(round_half_away(x multiplier / 2^shift)), then the fused relu, in fractions."""
    x_ = np.array(x, np.int8).reshape(1, 2, 1, 3)
    r = isa.BdcConstQ(isa.DTYPES["i8"], isa.CONST_OPS["MulConst"], 0, 0, 1, 2, 1, 3, 64, 0.5, int(relu), -1.0,
                      multiplier, shift, isa.ROUND_MODES["HalfAwayFromZero"])
    got = _run_one(r, {0: x_}, (1, 2, 1, 3)).ravel().tolist()
    want = [_sat8(_round_half_away(Fraction(v * multiplier) / Fraction(2) ** shift)) for v in x]
    want = [max(v, 0) for v in want] if relu else want
    event("negative multiplier" if multiplier < 0 else "positive multiplier")
    assert got == want


@settings(max_examples=max(20, settings.default.max_examples // 2))
@given(st.floats(2.0**-30, 2.0**10, width=32), st.integers(1, 25))
def test_scale_and_shift_is_the_lowerings(scale, k):
    """The cmodel's get_scale_and_shift (written again) gives the lowering's (interp/requant.py)
    constants for the per-position divisors scale / k of an average pool."""
    from tpudsl.backend.cmodel.arith_int8 import scale_and_shift
    from tpudsl.interp.requant import scale_and_shift as lowering_scale_and_shift

    event("k > 1" if k > 1 else "k = 1")
    assert scale_and_shift(scale / k) == lowering_scale_and_shift(scale / k)


def test_model_deploy_int8_writes_the_new_forms_bit_exact(tmp_path, capsys):
    """Conv -> AveragePool (3x3, stride 2, pads not counted) -> Sub of a second pool -> Mul by
    -0.75 through model_deploy INT8 on bm1684x: the .bmodel is written with the new records and
    its output equals the Tpu interpreter's."""
    g = Graph(np.random.default_rng(4))
    g.shapes["x"] = (1, 3, 15, 15)
    c = g.node("Conv", ["x", g.const((4, 3, 3, 3))], (1, 4, 15, 15), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    a = g.node("AveragePool", [c], (1, 4, 8, 8), kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    m = g.node("MaxPool", [c], (1, 4, 8, 8), kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    s = g.node("Sub", [a, m], (1, 4, 8, 8))
    g.inits.append(onnx.numpy_helper.from_array(np.array(-0.75, np.float32), "k"))
    out = g.node("Mul", [s, "k"], (1, 4, 8, 8))
    assert deploy_int8(tmp_path, "f", g.model({"x": (1, 3, 15, 15)}, out),
                       lambda rng: {"x": rng.standard_normal((1, 3, 15, 15)).astype(np.float32)}, "0.9,0.6") == 0
    err = capsys.readouterr().err
    assert "bmodel check passed: 1 outputs of the cmodel equal the Tpu interpreter's (INT8, bit-exact)" in err, err
    bm = read_bmodel(str(tmp_path / "f.bmodel"))
    records = isa.decode(bm.commands)
    assert any(isinstance(r, isa.BdcPoolQ) and not r.count_include_pad for r in records)
    assert any(isinstance(r, isa.BdcBinaryQ) and r.op == isa.BINARY_OPS["Sub"] for r in records)
    assert any(isinstance(r, isa.BdcConstQ) and r.multiplier < 0 for r in records)
    got, _ = run_bmodel(bm, read_npz(str(tmp_path / "f_in_f32.npz")))
    want = np.load(tmp_path / "f_bm1684x_int8_sym_tpu_outputs.npz")[out]
    assert np.array_equal(got[out], want)


# ---- INT8 AddConst / SubConst (BdcConstSumQ) ----

CONST_SUMS = {"AddConst": ("Add", False), "SubConst": ("Sub", False), "SubConst reverse": ("Sub", True)}


@st.composite
def const_sum_networks(draw, kind: str):
    """(model, shape): maybe a 3x3 conv, then x + c, x - c or c - x (`kind`, a key of CONST_SUMS) with
    c a drawn scalar, then maybe an Add of it with the tensor before, a Sub after c - x (an
    element-wise neighbour to share a layer group with)."""
    g, x = graph_with_input(draw, 2, 5, 40, 16)
    src = "x"
    if draw(st.booleans()):
        src = g.node("Conv", [src, g.const((x[1], x[1], 3, 3))], x, kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    op, reverse = CONST_SUMS[kind]
    name = f"c{len(g.inits)}"
    g.inits.append(onnx.numpy_helper.from_array(np.array(draw(st.floats(-6.0, 6.0, width=32)), np.float32), name))
    out = g.node(op, [name, src] if reverse else [src, name], x)
    if draw(st.booleans()):  # c - x + x would be the constant c (an empty calibration range): - x then
        out = g.node("Sub" if reverse else "Add", [out, src], x)
    return g.model({"x": x}, out), x


def _const_sum_kind(r: isa.BdcConstSumQ) -> str:
    return "SubConst reverse" if r.reverse else ("AddConst" if r.op == isa.CONST_OPS["AddConst"] else "SubConst")


def test_random_addconst_subconst_networks_are_bit_exact(tmp_path_factory):
    """Each kind symmetric and asymmetric (one strategy each): the cmodel's BdcConstSumQ equals the
    Tpu interpreter's AddConst / SubConst bit for bit (12 examples in CI)."""
    tally = FeatureTally(tuple(f"{kind} {form}" for kind in CONST_SUMS for form in ("symmetric", "asymmetric")))

    def check(net, asym, kind):
        model, shape = net
        d = tmp_path_factory.mktemp("k")
        top = int8_module(model, shape, d, asymmetric=asym)
        feed = {"x": np.random.default_rng(9).standard_normal(shape).astype(np.float32)}
        records = int8_bit_exact(top, feed, str(d / "m.bmodel"))
        kinds = {_const_sum_kind(r) for r in records if isinstance(r, isa.BdcConstSumQ)}
        tally.record({f"{k} {'asymmetric' if asym else 'symmetric'}" for k in kinds})

    budget = settings(max_examples=max(1, settings.default.max_examples // 100))
    for kind in CONST_SUMS:
        for asym in (False, True):
            budget(given(const_sum_networks(kind), st.just(asym), st.just(kind))(check))()
    tally.assert_each_in(1 / 8)  # every example of a strategy (a sixth of them) has its kind's record


@settings(max_examples=max(20, settings.default.max_examples // 4))
@given(st.sampled_from(list(CONST_SUMS)), st.sampled_from(["i8", "u8"]), st.sampled_from(["i8", "u8"]),
       st.lists(st.integers(0, 255), min_size=6, max_size=6), st.integers(-128, 127), st.integers(-128, 127),
       st.integers(-2**31 + 1, 2**31 - 1), st.integers(0, 40), st.integers(-2**53 + 1, 2**53 - 1), st.booleans())
def test_const_sum_record_is_the_exact_quotient(kind, src, dst, raw, in_zp, out_zp, multiplier, shift, const, relu):
    """BdcConstSumQ: sat(round_half_away(((x - in_zp) m +- C) / 2^shift) + out_zp), then the relu, in
    fractions."""
    in_type, (out_type, lo, hi) = (np.int8 if src == "i8" else np.uint8), {"i8": (np.int8, -128, 127),
                                                                           "u8": (np.uint8, 0, 255)}[dst]
    x = np.array(raw, np.uint8).astype(in_type).reshape(1, 2, 1, 3)
    op = isa.CONST_OPS[kind.split()[0]]
    r = isa.BdcConstSumQ(isa.DTYPES[src], isa.DTYPES[dst], op, int(kind.endswith("reverse")), 0, 1, 2, 1, 3, 64,
                         in_zp, out_zp, multiplier, shift, isa.ROUND_MODES["HalfAwayFromZero"], const, int(relu), -1.0)
    sums = {"AddConst": lambda p: p + const, "SubConst": lambda p: p - const, "SubConst reverse": lambda p: const - p}
    got = _run_one(r, {0: x}, (1, 2, 1, 3)).view(out_type).ravel().tolist()
    want = [max(lo, min(hi, _round_half_away(Fraction(sums[kind]((int(v) - in_zp) * multiplier), 2**shift)) + out_zp))
            for v in x.ravel()]
    want = [max(v, 0) for v in want] if relu else want
    event(kind)
    assert got == want


def test_reversed_subconst_joins_a_layer_group_sliced_along_h(tmp_path):
    """Conv -> 1.5 - x -> Add on the tiny chip: the three ops are one tpu.Group sliced along H, and
    the .bmodel equals the Tpu interpreter bit for bit, symmetric and asymmetric."""
    for asym in (False, True):
        g = Graph(np.random.default_rng(1))
        x = g.shapes["x"] = (2, 5, 40, 16)
        c = g.node("Conv", ["x", g.const((5, 5, 3, 3))], x, kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        g.inits.append(onnx.numpy_helper.from_array(np.array(1.5, np.float32), "k"))
        out = g.node("Add", [g.node("Sub", ["k", c], x), c], x)
        d = tmp_path / str(asym)
        d.mkdir()
        top = int8_module(g.model({"x": x}, out), x, d, asymmetric=asym)
        feed = {"x": np.random.default_rng(2).standard_normal(x).astype(np.float32)}
        records = int8_bit_exact(top, feed, str(d / "m.bmodel"))
        assert any(isinstance(r, isa.BdcConstSumQ) and r.reverse for r in records)
        text = print_module(top.module)
        group = text[text.index('"tpu.Group"'):]
        assert group.index('"tpu.Conv2D"') < group.index('"tpu.SubConst"') < group.index('"tpu.Add"') \
            < group.index('"tpu.Store"'), group
        assert max(_secs(text, "hsecs")) > 1

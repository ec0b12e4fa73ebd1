"""The INT8 records of opcodes 53-59 in random networks on the `tiny` chip (4 lanes x 16 KiB, so ops
are sliced along N and H and ordinary window/element-wise ops form layer groups): Deconv
(BdcDeconvQ), Softmax (BdcSoftmaxQ), per-column MatMul (BdcMatMulQZ) and asymmetric INT8 (zero
points and uint8 tensors: BdcConvQZ, BdcPoolQZ, BdcBinaryQZ, BdcMatMulQZ, BdcRequantZ), calibrated
(minmax), lowered, compiled as model_deploy does and run on the cmodel: bit-exact against the Tpu
interpreter, whose INT8 kernels are written apart from the cmodel's (arith_int8.py). Each record
is also checked against big integers computed here from its definition in isa.py."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st

from tests.backend_support import int8_bit_exact, int8_module
from tests.feature_tally import FeatureTally
from tests.test_backend_cmodel import Graph, _secs
from tests.test_backend_int8 import KINDS as INT8_KINDS
from tests.test_backend_int8 import graph_with_input
from tests.test_backend_int8 import networks as int8_networks
from tests.test_backend_int8_forms import KINDS as FORM_KINDS
from tests.test_backend_int8_forms import networks as form_networks
from tpudsl.backend import isa
from tpudsl.ir.printer import print_module

NEW_KINDS = ("deconv", "softmax", "matmul")  # the first op of `networks(first=KIND)`


@st.composite
def networks(draw, first: str):
    """(model, shape): `first` (a ConvTranspose, a Softmax along C, H or W, or a MatMul on the last
    dim by a weight, quantized per column) then 0-2 of those, 3x3 convs, average pools and Adds,
    each reading the last tensor (a ConvTranspose of a large input, or a Softmax of a 1x1x1 row, is
    an Add instead)."""
    g, x = graph_with_input(draw, 2, 4, 160, 40)
    tensors = ["x"]
    for kind in [first] + [None] * draw(st.integers(0, 2)):
        src = tensors[-1]
        n, c, h, w = g.shapes[src]
        kind = kind or draw(st.sampled_from([*NEW_KINDS, "conv", "avgpool", "add"]))
        if kind == "deconv" and h * w <= 6400:  # else an Add: the cmodel's time
            s = draw(st.sampled_from([1, 2, 2]))  # stride 2 (zero insertion) twice as often
            k, d = draw(st.integers(s, 3)), draw(st.integers(1, 2))  # k >= s: every output row reads input
            p0 = draw(st.integers(0, (k - 1) * d))  # at least one output row and column:
            p1 = draw(st.integers(0, min((k - 1) * d, (min(h, w) - 1) * s + (k - 1) * d - p0)))
            extra = draw(st.integers(0, s - 1))
            size = [(v - 1) * s + (k - 1) * d + 1 - p0 - p1 + extra for v in (h, w)]
            oc = draw(st.integers(1, 4))
            ins = [src, g.const((c, oc, k, k))] + ([g.const((oc,))] if draw(st.booleans()) else [])
            out = g.node("ConvTranspose", ins, (n, oc, *size), kernel_shape=[k, k], strides=[s, s], dilations=[d, d],
                         pads=[p0, p0, p1, p1], output_padding=[extra, extra])
        elif kind == "softmax" and max(c, h, w) > 1:  # along a dim of 1 it is constant (an empty asymmetric range)
            axis = draw(st.sampled_from([a for a, size in ((1, c), (2, h), (3, w)) if size > 1]))
            out = g.node("Softmax", [src], (n, c, h, w), axis=axis)
        elif kind == "matmul":
            k = draw(st.integers(1, 12))
            out = g.node("MatMul", [src, g.const((w, k))], (n, c, h, k))
        elif kind == "conv":
            out = g.node("Conv", [src, g.const((c, c, 3, 3))], (n, c, h, w), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        elif kind == "avgpool":
            out = g.node("AveragePool", [src], (n, c, h, w), kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         count_include_pad=1)
        else:
            out = g.node("Add", [src, draw(st.sampled_from([t for t in tensors if g.shapes[t] == (n, c, h, w)]))],
                         (n, c, h, w))
        tensors.append(out)
    return g.model({"x": x}, tensors[-1]), x


def _features(records: list[isa.Record], text: str) -> set[str]:
    """What an example exercised, by its records and the compiled module's text."""
    names = {type(r).__name__ for r in records}
    names |= {"BdcDeconvQ stride 2" for r in records if isinstance(r, isa.BdcDeconvQ) and r.sh == 2}
    names |= {"BdcMatMulQZ per column" for r in records
              if isinstance(r, isa.BdcMatMulQZ) and r.quant_addr != isa.NO_ADDR}
    names |= {"zero point" for r in records if any(getattr(r, k, 0) for k in ("in_zp", "out_zp", "a_zp", "b_zp"))}
    names |= {"BdcRequantZ requantizes" for r in records if isinstance(r, isa.BdcRequantZ)
              and isa.DTYPE_NAMES[r.dtype] in ("i8", "u8") and isa.DTYPE_NAMES[r.out_dtype] in ("i8", "u8")}
    if max(_secs(text, "hsecs"), default=1) > 1:
        names.add("sliced along H")
    if "!quant.uniform<u8" in text:
        names.add("uint8 tensor")
    if '"tpu.Group"' in text:  # a layer group of several ops is a region
        names.add("layer group of several ops")
    return names


def _run(cases, features: tuple[str, ...], tmp_path_factory, asymmetric) -> None:
    """Each (strategy, share) of `cases` gets `share` of the profile's budget; every feature must be
    in at least a tenth of all examples (asymmetric: a function of the drawn example, or a bool)."""
    tally = FeatureTally(features)

    def check(net, asym):
        model, shape = net
        d = tmp_path_factory.mktemp("r")
        top = int8_module(model, shape, d, asymmetric=asym, matmul_perchannel=True)
        feed = {"x": np.random.default_rng(5).standard_normal(shape).astype(np.float32)}
        names = _features(int8_bit_exact(top, feed, str(d / "m.bmodel")), print_module(top.module))
        names |= {"asymmetric"} if asym else set()
        tally.record(names)

    for strategy, share in cases:
        settings(max_examples=max(2, int(settings.default.max_examples * share)))(given(strategy, asymmetric)(check))()
    tally.assert_each_in(1 / 10)


NEW_FEATURES = ("BdcDeconvQ", "BdcDeconvQ stride 2", "BdcSoftmaxQ", "BdcMatMulQZ per column", "asymmetric",
                "sliced along H")


def test_random_deconv_softmax_matmul_networks_are_bit_exact(tmp_path_factory):
    """48 examples in CI, symmetric or asymmetric as drawn."""
    _run([(networks(k), 1 / 12) for k in NEW_KINDS], NEW_FEATURES, tmp_path_factory, st.booleans())


ASYM_FEATURES = ("BdcConvQZ", "BdcPoolQZ", "BdcBinaryQZ", "BdcMatMulQZ", "BdcRequantZ requantizes", "uint8 tensor",
                 "zero point", "sliced along H", "layer group of several ops")


def test_random_asymmetric_networks_are_bit_exact(tmp_path_factory):
    """The chains of test_backend_int8 and test_backend_int8_forms (one strategy per first kind),
    lowered asymmetric: 60 examples in CI, 6 per kind of test_backend_int8 and 3 per kind of
    test_backend_int8_forms (tall: the group search's costliest networks)."""
    cases = [(int8_networks(k), 1 / 32) for k in INT8_KINDS] + [(form_networks(k), 1 / 64) for k in FORM_KINDS]
    _run(cases, ASYM_FEATURES, tmp_path_factory, st.just(True))


# ---- the records against big integers ----

def _round_half_away(q: Fraction) -> int:
    whole = abs(q.numerator) // q.denominator
    return (1 if q >= 0 else -1) * (whole + (abs(q) - whole >= Fraction(1, 2)))


def _run_one(record, inputs: dict[int, np.ndarray], out_shape, out_dtype) -> np.ndarray:
    """One BDC record on the cmodel's memory, its inputs at local addresses."""
    from tpudsl.backend.chips import CHIPS
    from tpudsl.backend.cmodel.engine import HANDLERS
    from tpudsl.backend.cmodel.memory import Memory

    m = Memory(CHIPS["tiny"], 64)
    for addr, value in inputs.items():
        m.write_local(addr, value)
    HANDLERS[type(record)](m, record)
    return m.read_local(record.out_addr, out_shape, np.dtype(out_dtype))


STORAGE = {"i8": (np.int8, -128, 127), "u8": (np.uint8, 0, 255)}


@settings(max_examples=max(20, settings.default.max_examples // 4))
@given(st.sampled_from(["i8", "u8"]), st.sampled_from(["i8", "u8"]), st.integers(0, 2**32 - 1),
       st.integers(-128, 127), st.integers(-128, 127), st.integers(-2**31 + 1, 2**31 - 1), st.integers(-4, 40),
       st.booleans())
def test_requant_z_record_is_the_exact_quotient(src, dst, seed, in_zp, out_zp, multiplier, shift, relu):
    """BdcRequantZ integer -> integer: sat(round_half_away((x - in_zp) m / 2^shift) + out_zp), relu."""
    (st_in, lo_in, hi_in), (st_out, lo, hi) = STORAGE[src], STORAGE[dst]
    x = np.random.default_rng(seed).integers(lo_in, hi_in + 1, 6).astype(st_in).reshape(1, 2, 1, 3)
    r = isa.BdcRequantZ(isa.DTYPES[src], isa.DTYPES[dst], 0, 1, 2, 1, 3, 64, in_zp, out_zp, multiplier, shift,
                        isa.ROUND_MODES["HalfAwayFromZero"], int(relu), -1.0, 0.0)
    got = _run_one(r, {0: x}, (1, 2, 1, 3), st_out).ravel().tolist()
    want = [max(lo, min(hi, _round_half_away(Fraction((int(v) - in_zp) * multiplier) / Fraction(2) ** shift) + out_zp))
            for v in x.ravel()]
    want = [max(v, 0) for v in want] if relu else want
    event("saturated" if any(v in (lo, hi) for v in want) else "in range")
    assert got == want


@settings(max_examples=max(20, settings.default.max_examples // 4))
@given(st.integers(0, 2**32 - 1), st.integers(-128, 127), st.sampled_from(["i8", "u8"]),
       st.floats(1e-4, 0.1), st.integers(1, 7))
def test_softmax_q_record_is_its_definition(seed, out_zp, dst, scale, c):
    """BdcSoftmaxQ along C (c > 4 spans two channel groups of the tiny chip's lanes): e = table[max - x],
    sat(round_half_away((e / sum e) / scale) + out_zp), the two divisions in Python floats (float64,
    as the record defines them) and the rounding in fractions."""
    rng = np.random.default_rng(seed)
    st_out, lo, hi = STORAGE[dst]
    x = rng.integers(-128, 128, (1, c, 1, 3)).astype(np.int8)
    table = np.concatenate([[2**16], rng.integers(0, 2**16, 255)]).astype(np.int32)
    r = isa.BdcSoftmaxQ(isa.DTYPES["i8"], 0, 1, c, 1, 3, 64, 128, isa.DTYPES[dst], out_zp, scale)
    copies = np.broadcast_to(table, (1, min(c, 4), 1, 256)).copy()  # one per lane
    got = _run_one(r, {0: x, 128: copies}, (1, c, 1, 3), st_out)
    for j in range(3):
        e = [int(table[int(x[0, :, 0, j].max()) - int(v)]) for v in x[0, :, 0, j]]
        want = [max(lo, min(hi, _round_half_away(Fraction((v / sum(e)) / scale)) + out_zp)) for v in e]
        assert got[0, :, 0, j].tolist() == want
    event("saturated" if (got == lo).any() or (got == hi).any() else "in range")


def test_unmerged_per_column_matmul_and_deconv_are_errors_naming_them(tmp_path):
    """Before --weight-reorder an INT8 Deconv has no merged tile and a per-column MatMul no `multi`
    operand: layer-group stops naming each; after it, a second --weight-reorder changes nothing."""
    import pytest

    from tpudsl.dialects import make_context
    from tpudsl.ir.diagnostics import TpudslError
    from tpudsl.passes import pass_class

    g = Graph(np.random.default_rng(2))
    g.shapes["x"] = (1, 2, 5, 4)
    d = g.node("ConvTranspose", ["x", g.const((2, 3, 2, 2))], (1, 3, 10, 8), kernel_shape=[2, 2], strides=[2, 2])
    m = g.node("MatMul", ["x", g.const((4, 3))], (1, 2, 5, 3))  # its own model: x -> MatMul
    for last, error, merged in ((m, "per-column multipliers and shifts are the `multi` operand", "tensor<1x3x1x2xi32>"),
                                (d, "an INT8 deconv's bias, multipliers and shifts are one merged",
                                 "coeff_merged = true")):
        top = int8_module(g.model({"x": (1, 2, 5, 4)}, last), (1, 2, 5, 4), tmp_path, matmul_perchannel=True)
        with pytest.raises(TpudslError, match=error):
            for p in ("address-assign", "layer-group"):
                pass_class(p)().apply(make_context(), top.module)
        pass_class("weight-reorder")().apply(make_context(), top.module)
        once = print_module(top.module)
        pass_class("weight-reorder")().apply(make_context(), top.module)
        assert print_module(top.module) == once and merged in once


def test_per_axis_zero_points_are_an_error_naming_them(tmp_path):
    """The records hold one zero point per tensor: a per-channel filter with zero points (written by
    hand; the lowering's weights are symmetric) is refused, naming them."""
    from tpudsl.backend.codegen import without_instructions
    from tpudsl.backend.slicing import check_modelled
    from tpudsl.ir.diagnostics import TpudslError
    from tpudsl.ir.module import load_module

    q = "!quant.uniform<i8:f32, 1.000000e-02>"
    w = "!quant.uniform<i8<-127:127>:f32:0, {1.000000e-02:3,2.000000e-02}>"
    (tmp_path / "m.mlir").write_text(f'''module attributes {{module.name = "m", module.state = "TPU_LOWERED", module.mode = "INT8", module.chip = "tiny", module.weight_file = "w.npz"}} {{
  func.func @main(%arg0: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {{
    %0 = "top.Input"(%arg0) : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> loc("x")
    %1 = "tpu.Cast"(%0) : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4x{q}> loc("x_int8")
    %2 = "top.Weight"() : () -> tensor<2x1x1x1x{w}> loc("w")
    %3 = "top.None"() : () -> none loc("none")
    %4 = "tpu.Conv2D"(%1, %2, %3) {{kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], with_bias = false, multiplier = [1, 1], rshift = [0, 0]}} : (tensor<1x1x4x4x{q}>, tensor<2x1x1x1x{w}>, none) -> tensor<1x2x4x4x{q}> loc("conv")
    %5 = "tpu.Cast"(%4) : (tensor<1x2x4x4x{q}>) -> tensor<1x2x4x4xf32> loc("y")
    return %5 : tensor<1x2x4x4xf32>
  }}
}}
''')
    np.savez(tmp_path / "w.npz", w=np.ones((2, 1, 1, 1), np.int8))
    top = load_module(tmp_path / "m.mlir")
    conv = next(op for op in top.main_func().walk() if op.name == "tpu.Conv2D")
    assert without_instructions(top.module) is conv
    try:
        check_modelled(conv)
    except TpudslError as e:
        assert 'op "conv": per-axis zero points [3, 0] are not modelled' in str(e), str(e)
    else:
        raise AssertionError("no error")

"""The quant dialect types (tpudsl/dialects/quant.py) against upstream MLIR (iree's bindings):
random spellings parse and print as upstream prints them, read back to the same type, and the
accessors give the parameters written; bad types are errors with a position."""

from __future__ import annotations

import io
import math
import struct

import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from iree.compiler import ir
from xdsl.dialects.builtin import Float32Type, IntegerType, Signedness

from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from tests.feature_tally import FeatureTally
from upstream_mlir import UPSTREAM_CONTEXT
from tpudsl.dialects import make_context
from tpudsl.dialects.quant import AnyQuantizedType, CalibratedQuantizedType, UniformQuantizedType, default_range
from tpudsl.ir.attr_text import attr_text
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.parser import parse_module

# name -> (smallest, largest) positive value, as written independently of the code under test
EXPRESSED = {"f16": (2.0**-24, 65504.0), "bf16": (2.0**-133, 3.3895313892515355e38),
             "f32": (2.0**-149, 3.4028234663852886e38), "f64": (5e-324, 1.7976931348623157e308)}
WRAP = '"x.y"() : () -> tensor<2x{}>'


def upstream(type_text: str) -> str:
    with UPSTREAM_CONTEXT:
        return _element(ir.Module.parse(WRAP.format(type_text)).operation.get_asm())


def _element(asm: str) -> str:
    return asm.split("tensor<2x", 1)[1].rsplit(">", 1)[0]


_OURS = make_context(allow_unregistered=True)


def ours_type(type_text: str):
    module = parse_module(WRAP.format(type_text), "t.mlir", _OURS)
    return module.body.block.first_op.results[0].type.element_type


def spaced(draw, parts: list[str]) -> str:
    """Join tokens with random whitespace (upstream ignores it)."""
    return "".join(p + draw(st.sampled_from(["", "", " ", "  "])) for p in parts)


def float_spellings(draw, value: float) -> str:
    """A literal MLIR reads as `value`: repr, %e with any precision that keeps it, or hex bits
    (not for negatives: upstream rejects `-0x...`)."""
    negative = math.copysign(1.0, value) < 0
    style = draw(st.sampled_from(["repr", "e"] if negative else ["repr", "e", "hex"]))
    event(f"float spelled {style}")
    if style == "hex":
        return "0x" + struct.pack(">d", value).hex().upper()
    text = repr(value) if style == "repr" else f"{value:.17e}"
    if "." not in text:  # MLIR reads a literal without a dot as an integer
        mantissa, _, exponent = text.partition("e")
        text = mantissa + ".0" + ("e" + exponent if exponent else "")
    return text


@st.composite
def uniform_cases(draw, per_axis: bool | None = None):
    """per_axis given: that form, with an explicit storage range other than the default (width >= 2)
    and a nonzero first zero point; otherwise all drawn."""
    forced = per_axis is not None
    prefix = draw(st.sampled_from(["i", "si", "ui", "u"]))
    width = draw(st.integers(2, 32) if forced else st.sampled_from([1, 4, 8, 8, 8, 16, 32]) | st.integers(1, 32))
    signed = prefix in ("i", "si")
    dmin, dmax = default_range(signed, width)
    lo, hi = dmin, dmax
    parts = [f"!quant.uniform<", f"{prefix}{width}"]
    if forced or draw(st.booleans()):
        lo = draw(st.integers(dmin + forced, dmax - 1))
        hi = draw(st.integers(lo + 1, dmax))
        parts += ["<", str(lo), ":", str(hi), ">"]
        event("explicit storage range")
    expressed = draw(st.sampled_from(list(EXPRESSED)))
    parts += [":", expressed]
    smallest, largest = EXPRESSED[expressed]
    per_axis = draw(st.booleans()) if per_axis is None else per_axis
    axis = draw(st.integers(0, 5)) if per_axis else None
    if per_axis:
        parts += [":", str(axis)]
    parts.append(",")
    n = draw(st.integers(1, 4)) if per_axis else 1
    scales, zero_points = [], []
    items = []
    for _ in range(n):
        scale = draw(st.floats(smallest, largest) | st.sampled_from([smallest, largest, 1.0, 0.0123]))
        zp = draw(st.integers(lo, hi).filter(bool) if forced and not zero_points
                  else st.integers(lo, hi) | st.just(0 if lo <= 0 <= hi else lo))
        scales.append(scale)
        zero_points.append(zp)
        items += [float_spellings(draw, scale)] + ([":", str(zp)] if zp or draw(st.booleans()) else [])
        items.append(",")
    items.pop()
    parts += (["{"] + items + ["}"]) if per_axis else items
    parts.append(">")
    text = spaced(draw, parts)
    event("per axis" if per_axis else "per tensor")
    return text, dict(signed=signed, width=width, lo=lo, hi=hi, axis=axis, scales=scales, zero_points=zero_points)


def test_uniform_types_print_like_upstream():
    """Three quarters of the examples drawn, then an eighth per axis and an eighth per tensor, each
    with an explicit range and a nonzero zero point: every floor holds by construction."""
    tally = FeatureTally(("per axis", "per tensor", "nonzero zero point", "explicit range"))

    def prop(case):
        text, want = case
        t = ours_type(text)
        assert attr_text(t) == upstream(text)
        assert ours_type(attr_text(t)) == t  # our print reads back to the same type
        assert isinstance(t, UniformQuantizedType)
        assert (t.is_signed, t.storage_width, t.storage_type_min, t.storage_type_max) == (
            want["signed"], want["width"], want["lo"], want["hi"])
        assert t.quantized_dimension == want["axis"]
        assert t.scales == tuple(want["scales"]) and t.zero_points == tuple(want["zero_points"])
        tally.record({"per axis" if t.is_per_axis else "per tensor",
                      *(["nonzero zero point"] if any(want["zero_points"]) else []),
                      *(["explicit range"] if (want["lo"], want["hi"]) != default_range(want["signed"], want["width"])
                        else [])})

    forced = settings.default.max_examples // 8
    settings(max_examples=settings.default.max_examples - 2 * forced)(given(uniform_cases())(prop))()
    for per_axis in (True, False):
        settings(max_examples=forced)(given(uniform_cases(per_axis))(prop))()
    tally.assert_each_in(1 / 10)


@st.composite
def calibrated_cases(draw, negative_min: bool = False):
    expressed = draw(st.sampled_from(list(EXPRESSED)))
    # No -0.0: the shared upstream context uniques types by `==` on doubles, so it may hand back
    # an earlier type holding 0.0 (test_negative_zero_keeps_its_sign uses a fresh context).
    finite = st.floats(-1e30, 1e30, allow_nan=False) | st.sampled_from([0.0, -2.5, 3.1])
    lo, hi = draw(finite) + 0.0, draw(finite) + 0.0
    if negative_min:
        lo = -abs(lo) or -2.5
    assume(lo != hi)
    lo, hi = min(lo, hi), max(lo, hi)
    parts = ["!quant.calibrated<", expressed, "<", float_spellings(draw, lo), ":", float_spellings(draw, hi), ">", ">"]
    return spaced(draw, parts), lo, hi


def test_calibrated_types_print_like_upstream():
    """A negative min in a tenth of the examples, by construction (the last quarter)."""
    tally = FeatureTally(("negative min",))

    def prop(case):
        text, lo, hi = case
        t = ours_type(text)
        assert attr_text(t) == upstream(text)
        assert ours_type(attr_text(t)) == t
        assert isinstance(t, CalibratedQuantizedType) and (t.min, t.max) == (lo, hi)
        tally.record(["negative min"] if lo < 0 else [])

    forced = settings.default.max_examples // 4
    settings(max_examples=settings.default.max_examples - forced)(given(calibrated_cases())(prop))()
    settings(max_examples=forced)(given(calibrated_cases(negative_min=True))(prop))()
    tally.assert_each_in(1 / 10)


def test_negative_zero_keeps_its_sign():
    text = "!quant.calibrated<f32<-0.0:1.0>>"
    # A fresh context, not UPSTREAM_CONTEXT: that one uniques types by `==` on doubles, so after
    # any test parsed f32<0.0:1.0> it would hand that type back for -0.0.
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    with ctx:
        want = _element(ir.Module.parse(WRAP.format(text)).operation.get_asm())
    assert attr_text(ours_type(text)) == want == "!quant.calibrated<f32<-0.000000e+00:1.000000e+00>>"


def test_make_builds_the_parsed_type():
    per_axis = UniformQuantizedType.make("i8", Float32Type(), [0.1, 0.2], [0, 3], axis=0, storage_range=(-127, 127))
    assert per_axis == ours_type("!quant.uniform<i8<-127:127>:f32:0, {0.1,0.2:3}>")
    assert attr_text(per_axis) == "!quant.uniform<i8<-127:127>:f32:0, {1.000000e-01,2.000000e-01:3}>"
    with pytest.raises(ValueError, match="per-axis"):
        _ = per_axis.scale
    unsigned = UniformQuantizedType.make("u8", Float32Type(), [0.5], [128])
    assert unsigned.storage_type == IntegerType(8, Signedness.SIGNLESS)
    assert (unsigned.scale, unsigned.zero_point, unsigned.storage_type_max) == (0.5, 128, 255)
    calibrated = CalibratedQuantizedType.make(Float32Type(), -2.5, 3.1)
    assert calibrated == ours_type("!quant.calibrated<f32<-2.5:3.1>>")


@pytest.mark.parametrize("text", ["!quant.any<i8<-8:7>:f32>", "!quant.any<i8>", "!quant.any< u8 : f16 >",
                                  "!quant.any<i8<-128:127>>", "!quant.any<ui16<1:9>:bf16>"])
def test_any_types_print_like_upstream(text):
    t = ours_type(text)
    assert isinstance(t, AnyQuantizedType) and attr_text(t) == upstream(text)


def test_xdsl_printer_output_reads_back():
    """xDSL's own printer (str(), generic dumps) spells the floats losslessly; its text parses back."""
    for text in ("!quant.uniform<u8<1:255>:f32:2, {0.1:3,1.0e-30:2}>", "!quant.calibrated<f16<-0.1:3.0e+20>>",
                 "!quant.any<si4<-7:7>:bf16>", "!quant.any<i8>"):
        t = ours_type(text)
        out = io.StringIO()
        Printer(stream=out).print_attribute(t)
        assert Parser(_OURS, out.getvalue()).parse_type() == t, out.getvalue()


@pytest.mark.parametrize("build", [
    lambda: UniformQuantizedType.make("u8", Float32Type(), [0.5], [0], storage_range=(0, 256)),
    lambda: UniformQuantizedType.make("i8", Float32Type(), [0.5], [0], storage_range=(-129, 0)),
    lambda: UniformQuantizedType.make("i8", Float32Type(), [0.5], [-128], storage_range=(-127, 127)),
    lambda: UniformQuantizedType.make("i8", Float32Type(), [0.0], [0]),
    lambda: UniformQuantizedType.make("i8", Float32Type(), [0.5, 0.25], [0, 0]),
    lambda: UniformQuantizedType.make("i8", IntegerType(32), [0.5], [0]),
    lambda: CalibratedQuantizedType.make(Float32Type(), 1.0, float("inf")),
])
def test_make_verifies(build):
    with pytest.raises(VerifyException, match="^quant: "):
        build()


# Rejected by upstream too (the message is ours; the position is the offending token or the type).
BOTH_REJECT = [
    "!quant.uniform<i8:f32, -0.5>", "!quant.uniform<i8:f32, 0.0>", "!quant.uniform<i8:f32, 5>",
    "!quant.uniform<i8:f16, 1.0e-8>", "!quant.uniform<i33:f32, 0.5>", "!quant.uniform<i8<5:5>:f32, 0.5>",
    "!quant.uniform<u8<0:256>:f32, 0.5>", "!quant.uniform<i8:f32:-1, {0.1}>", "!quant.uniform<i8:f32, {1.0}>",
    "!quant.uniform<i8:f32:0, {}>", "!quant.uniform<i8:i32, 1.0>", "!quant.calibrated<f32<3.0:-1.0>>",
    "!quant.calibrated<f32<1.0:1.0>>", "!quant.calibrated<f32<-0x3FF0000000000000:2.0>>",
    "!quant.calibrated<i32<-1.0:1.0>>", "!quant.uniform<x8:f32, 0.5>", "!quant.uniform<i8:f32:2147483648, {1.0}>",
]
# Accepted by upstream, errors here: zero points outside the storage range, an infinite
# calibrated bound, and what is not modelled (sub-channel blocks, float storage).
ONLY_WE_REJECT = [
    "!quant.uniform<i8:f32, 1.0:-129>", "!quant.uniform<u8:f32:0, {0.5:300}>",
    "!quant.calibrated<f32<1.0:1.0e400>>", "!quant.uniform<i8:f32:{0:1, 1:2}, {{2.0:10, 3.0:20}}>",
    "!quant.uniform<f8E4M3FN:f32, 0.5>",
]


@pytest.mark.parametrize("text", BOTH_REJECT + ONLY_WE_REJECT)
def test_bad_types_are_errors_with_a_position(text):
    with pytest.raises(TpudslError, match=r"^t\.mlir:1:\d+: error: "):
        ours_type(text)
    if text in BOTH_REJECT:
        with pytest.raises(Exception):
            upstream(text)
    else:
        upstream(text)


def test_quantile_types_are_kept_as_written_in_every_context():
    """`!quant.quantile` (not upstream) parses without --allow-unregistered-dialect and prints back
    as written, in each of several contexts (they share its class: tpudsl/dialects/__init__.py)."""
    from tpudsl.ir.printer import print_module

    t = "tensor<4x!quant.quantile<i8:f16:f32, {-1.0,-0.5,0.5,1.0}:0.1>>"
    text = f"func.func @main(%arg0: {t}) -> {t} {{\n  return %arg0 : {t}\n}}"
    for _ in range(2):
        printed = print_module(parse_module(text, "q.mlir", make_context()))
        assert printed.count("!quant.quantile<i8:f16:f32, {-1.0,-0.5,0.5,1.0}:0.1>") == 3, printed

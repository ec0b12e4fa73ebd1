"""INT8 in the backend: random conv / pool / add / mul / concat / activation (Lut) / matmul chains,
calibrated (minmax, the calibration API on two random samples), lowered to symmetric INT8, compiled
for the `tiny` chip (4 lanes x 16 KiB, so ops are sliced along N and H), run on the cmodel and
compared with the Tpu interpreter: bit-exact. The cmodel's INT8 arithmetic (arith_int8.py) is
written apart from the interpreter's (interp/requant.py), so agreement is a check of both.

model_deploy INT8 of a ResNet-18-shaped model on bm1684x writes the .bmodel and passes the third
comparison (bit-exact). The records' own rounding is checked against big integers here too."""

from __future__ import annotations

import re
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import StringAttr

from tests.backend_support import deploy_int8, int8_bit_exact, int8_module
from tests.feature_tally import FeatureTally
from tests.test_backend_cmodel import Graph, _secs, _window
from tests.test_requant import ref_round
from tpudsl.backend import isa
from tpudsl.backend.bmodel import read_bmodel
from tpudsl.backend.cmodel import arith_int8, run_bmodel
from tpudsl.dialects import make_context
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.printer import print_module
from tpudsl.passes import pass_class

ACTIVATIONS = ("Relu", "Sigmoid", "Tanh")
KINDS = ("conv", "maxpool", "avgpool", "add", "mul", "concat", "act")  # the first op of `networks(first=KIND)`


def graph_with_input(draw, n: int, c: int, h: int, w: int) -> tuple[Graph, tuple[int, int, int, int]]:
    """A Graph of a drawn seed and its input "x" of a drawn shape up to (n, c, h, w) (h >= 3, w >= 2)."""
    g = Graph(np.random.default_rng(draw(st.integers(0, 2**16))))
    x = (draw(st.integers(1, n)), draw(st.integers(1, c)), draw(st.integers(3, h)), draw(st.integers(2, w)))
    g.shapes["x"] = x
    return g, x


@st.composite
def networks(draw, first: str, requant: bool = False):
    """(model, shape): a chain of 1-4 ops that all have an INT8 form, `first` (one of KINDS) first,
    each reading the last tensor or the one before, and maybe a linear head (an INT8 MatMul: Gemm
    with bias after a Flatten, or MatMul on the last dim). The test gives each kind the same number
    of examples as `first`: hypothesis's draws of a kind cluster (a 1-in-12 kind was in 0 of 50
    examples of some random runs), a fixed first kind cannot. `requant`: `first` ("act") a Tanh and
    the next op a Concat of its output and x: tanh(m) < m = max|x|, so the Concat's scale is x's and
    the Tanh's int8 output is requantized to it (a RequantInt: BdcRequant); nothing after it but the
    head (a later op could read the Tanh and leave the Concat dead)."""
    g, x = graph_with_input(draw, 4, 6, 160, 64)
    tensors = ["x"]
    for i, kind in enumerate([first, "concat"] if requant else [first] + [None] * draw(st.integers(0, 3))):
        tanh_x = requant and i == 1  # the Concat of the Tanh's output and x
        src = tensors[-1] if tanh_x else draw(st.sampled_from(tensors[-2:]))
        n, c, h, w = g.shapes[src]
        kind = kind or draw(st.sampled_from(["conv", "conv", "maxpool", "avgpool", "add", "mul", "concat", "act"]))
        if kind == "conv":
            kh, sh, pt, pb, oh, dh = _window(draw, h, dilate=True)
            kw, sw, pl, pr, ow, dw = _window(draw, w, dilate=True)
            group, oc = (c, c) if draw(st.booleans()) else (1, draw(st.integers(1, 6)))
            ins = [src, g.const((oc, c // group, kh, kw))] + ([g.const((oc,))] if draw(st.booleans()) else [])
            out = g.node("Conv", ins, (n, oc, oh, ow), kernel_shape=[kh, kw], strides=[sh, sw],
                         pads=[pt, pl, pb, pr], group=group, dilations=[dh, dw])
        elif kind in ("maxpool", "avgpool"):
            kh, sh, pt, pb, _, _ = _window(draw, h)
            kw, sw, pl, pr, _, _ = _window(draw, w)
            pt, pb, pl, pr = (min(p, k // 2) for p, k in ((pt, kh), (pb, kh), (pl, kw), (pr, kw)))  # ONNX: pad < k/2
            oh, ow = (h + pt + pb - kh) // sh + 1, (w + pl + pr - kw) // sw + 1
            # INT8 average pool counts the pads (or has none); others fall back to F32
            extra = {"count_include_pad": 1} if kind == "avgpool" else {}
            out = g.node("MaxPool" if kind == "maxpool" else "AveragePool", [src], (n, c, oh, ow),
                         kernel_shape=[kh, kw], strides=[sh, sw], pads=[pt, pl, pb, pr], **extra)
        elif kind in ("add", "mul"):
            other = draw(st.sampled_from([t for t in tensors if g.shapes[t] == g.shapes[src]]))
            out = g.node(kind.capitalize(), [src, other], (n, c, h, w))
        elif kind == "concat":
            other = "x" if tanh_x else draw(st.sampled_from([t for t in tensors if g.shapes[t][0] == n
                                                             and g.shapes[t][2:] == (h, w)]))
            out = g.node("Concat", [src, other], (n, c + g.shapes[other][1], h, w), axis=1)
        else:
            out = g.node("Tanh" if requant and i == 0 else draw(st.sampled_from(ACTIVATIONS)), [src], (n, c, h, w))
        tensors.append(out)
    out = tensors[-1]
    n, c, h, w = g.shapes[out]
    head, k = draw(st.sampled_from([None, "linear"])), draw(st.integers(1, 12))
    if head and c * h * w <= 512:  # a classifier: flatten, fully connected with bias
        flat = g.node("Flatten", [out], (n, c * h * w))
        out = g.node("Gemm", [flat, g.const((k, c * h * w)), g.const((k,))], (n, k), transB=1)
    elif head:  # a linear layer on the last dim: rows n*c*h, no bias
        out = g.node("MatMul", [out, g.const((w, k))], (n, c, h, k))
    return g.model({"x": x}, out), x


FEATURES = ("BdcConvQ", "BdcPoolQ", "BdcPool", "BdcBinaryQ Add", "BdcBinaryQ Mul", "BdcLut", "BdcRequant",
            "BdcMatMulQ", "BdcQuantCast", "sliced along N", "sliced along H")


def test_random_int8_networks_cmodel_is_bit_exact(tmp_path_factory):
    tally = FeatureTally(FEATURES)

    def check(net, forced):
        model, shape = net
        d = tmp_path_factory.mktemp("n")
        top = int8_module(model, shape, d)
        feed = {"x": np.random.default_rng(7).standard_normal(shape).astype(np.float32)}
        records = int8_bit_exact(top, feed, str(d / "m.bmodel"))
        names = {type(r).__name__ for r in records}
        names |= {f"BdcBinaryQ {op}" for r in records if isinstance(r, isa.BdcBinaryQ)
                  for op, code in isa.BINARY_OPS.items() if r.op == code}
        names -= {"BdcPool"} - {type(r).__name__ for r in records if type(r) is isa.BdcPool and r.dtype == isa.DTYPES["i8"]}
        text = print_module(top.module)
        if max(_secs(text, "hsecs"), default=1) > 1:
            names.add("sliced along H")
        if max(_secs(text, "nsecs"), default=1) > 1:
            names.add("sliced along N")
        assert not forced or "BdcRequant" in names, names
        tally.record(names)

    # A quarter of the profile's budget (49 in CI, 7 per first kind): each example calibrates,
    # lowers and compiles. Of the "act" kind's, a twentieth of the whole is a forced run of a Tanh
    # then a Concat with x, each example asserting its BdcRequant (drawn, 2 of 49 in the dev profile).
    per_kind = max(2, settings.default.max_examples // (4 * len(KINDS)))
    forced_n = -(-per_kind * len(KINDS) // 20)
    for first in KINDS:
        drawn = per_kind - forced_n if first == "act" else per_kind
        settings(max_examples=drawn)(given(networks(first), st.just(False))(check))()
    settings(max_examples=forced_n)(given(networks("act", requant=True), st.just(True))(check))()
    tally.assert_each_in(1 / 20)


MODES = list(isa.ROUND_MODES)


@given(st.integers(-2**62, 2**62), st.integers(-4, 70), st.sampled_from(MODES))
def test_shift_round_is_the_exact_quotient_rounded(x, n, mode):
    """arith_int8.shift_round against fractions rounded by tests/test_requant.py's reference."""
    got = int(arith_int8.shift_round(np.array([x]), n, isa.ROUND_MODES[mode])[0])
    n = min(n, 63)
    want = ref_round(Fraction(x, 2**n), mode) if n > 0 else x * 2**-n
    if n < 0 and abs(want) >= 2**63:
        return  # beyond int64: no record holds it (|acc * multiplier| < 2^62)
    event(mode)
    assert got == want


def test_model_deploy_int8_writes_a_bit_exact_bmodel(tmp_path, capsys):
    """ResNet-18-shaped (width 8, 32x32) through model_deploy INT8 on bm1684x: the .bmodel is
    written and its outputs equal the Tpu interpreter's (checked here again, not only by the tool)."""
    from tests.models import resnet18
    from tpudsl.ir.module import read_npz

    deploy_int8(tmp_path, "r", resnet18(input_size=32, num_classes=10, width=8),
                lambda rng: {"input": rng.random((1, 3, 32, 32), dtype=np.float32)}, "0.9,0.6")
    err = capsys.readouterr().err
    assert "bmodel check passed: 1 outputs of the cmodel equal the Tpu interpreter's (INT8, bit-exact)" in err, err
    bm = read_bmodel(str(tmp_path / "r.bmodel"))
    kinds = Counter(type(r).__name__ for r in isa.decode(bm.commands))
    assert kinds["BdcConvQ"] == 20 and kinds["BdcBinaryQ"] == 8 and kinds["BdcMatMulQ"] == 1, kinds
    got, _ = run_bmodel(bm, read_npz(str(tmp_path / "r_in_f32.npz")))
    want = np.load(tmp_path / "r_bm1684x_int8_sym_tpu_outputs.npz")["output"]
    assert np.array_equal(got["output"], want)


@pytest.mark.parametrize("mode", ["F16", "BF16"])
def test_a_float_layer_of_an_int8_model_is_cast_both_ways(tmp_path, mode):
    """A qtable keeps the middle conv in F16/BF16: int8 -> f32 -> mode before it and mode -> int8
    after it (a quantizing cast from a 16-bit float); sliced along N and H, bit-exact."""
    g = Graph(np.random.default_rng(1))
    shape = (2, 3, 120, 40)
    g.shapes["x"] = shape
    c0 = g.node("Conv", ["x", g.const((4, 3, 3, 3)), g.const((4,))], (2, 4, 120, 40), kernel_shape=[3, 3],
                pads=[1, 1, 1, 1])
    c1 = g.node("Conv", [c0, g.const((4, 4, 3, 3))], (2, 4, 120, 40), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    out = g.node("Sigmoid", [c1], (2, 4, 120, 40))
    top = int8_module(g.model({"x": shape}, out), shape, tmp_path, qtable=f"{c1} {mode}\n")
    feed = {"x": np.random.default_rng(2).standard_normal(shape).astype(np.float32)}
    casts = [r for r in int8_bit_exact(top, feed, str(tmp_path / "m.bmodel")) if isinstance(r, isa.BdcQuantCast)]
    assert {(isa.DTYPE_NAMES[r.dtype], isa.DTYPE_NAMES[r.out_dtype]) for r in casts} == {
        ("f32", "i8"), ("i8", "f32"), (mode.lower(), "i8")}
    text = print_module(top.module)
    assert max(_secs(text, "hsecs")) > 1 and max(_secs(text, "nsecs")) > 1


def test_an_int8_op_without_instruction_is_an_error_naming_it(tmp_path):
    """An INT8 Conv2D that --weight-reorder has not merged, and an int8 op the backend has no
    instruction for (a Relu on int8 tensors, made by hand), are errors naming the op."""
    g = Graph(np.random.default_rng(5))
    g.shapes["x"] = (1, 2, 6, 6)
    out = g.node("Conv", ["x", g.const((3, 2, 3, 3))], (1, 3, 6, 6), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    top = int8_module(g.model({"x": (1, 2, 6, 6)}, out), (1, 2, 6, 6), tmp_path)
    ctx = make_context()
    top.module.attributes["module.chip"] = StringAttr("tiny")
    with pytest.raises(TpudslError, match=r"'tpu.Conv2D' op \"t0_conv_int8\": an INT8 conv's bias, multipliers and "
                                          r"shifts are one merged coefficient; run --weight-reorder first"):
        for name in ("address-assign", "layer-group"):
            pass_class(name)().apply(ctx, top.module)
    from tpudsl.backend.codegen import without_instructions
    from tpudsl.dialects.opdef import create

    conv = next(op for op in top.main_func().walk() if op.name == "tpu.Conv2D")
    relu = create("tpu.Relu", [conv.results[0]], [conv.results[0].type], loc="by_hand")
    conv.parent.insert_op_after(relu, conv)
    assert without_instructions(top.module) is relu
    assert re.search(r"on int8 tensors has no instruction", _check_error(relu))


def _check_error(op) -> str:
    from tpudsl.backend.slicing import check_modelled

    with pytest.raises(TpudslError) as info:
        check_modelled(op)
    return str(info.value)

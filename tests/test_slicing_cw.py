"""Slicing along C and W (issues 11 and 12: "N and H, and C or W where the op allows").

Random chains on the tiny chip (4 lanes of 16 KiB) whose tensors are shaped so that N and H
slicing cannot make them fit: one row (H == 1) and thousands of columns, two or three rows and a
wide W, or a conv whose filter alone exceeds a lane's local memory. layer-group must cut them
along C and/or W; the cmodel's results must equal the Tpu interpreter's (F32 within 1e-5 of
each output's largest magnitude, F16 and INT8 bit for bit), which is the check that every
slice's input columns (halos, pads at the edges only) and channel parts (a conv's filter part per
C slice) are right.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import numpy_helper

from tests.backend_support import (assert_bit_exact, assert_f32_close, compile_for, int8_bit_exact, int8_module,
                                   interpret, lowered)
from tests.feature_tally import FeatureTally
from tests.test_backend_cmodel import Graph
from tpudsl.backend.cmodel import run_bmodel
from tpudsl.backend.slicing import split_channels

FEATURES = ("sliced along C", "sliced along W", "filter sliced along C", "MatMul sliced along C",
            "Upsample sliced along W")


def _out(size: int, k: int, s: int, d: int, p0: int, p1: int) -> int:
    return (size + p0 + p1 - (k - 1) * d - 1) // s + 1


def _axis(draw, size: int, big: bool):
    """kernel, stride, dilation, pads of one axis of a window (pads < kernel; on a big axis stride
    and dilation up to 2)."""
    k = draw(st.integers(2 if big and size > 1 else 1, min(3, size)))  # W's halo is what is tested
    s = draw(st.integers(1, 2)) if big else 1
    d = draw(st.integers(1, 2)) if big and 1 < k and (k - 1) * 2 < size else 1
    return k, s, d, draw(st.integers(0, k - 1)), draw(st.integers(0, k - 1))


ESIZE = {"F32": 4, "F16": 2, "INT8": 1}


@st.composite
def chains(draw, modes: tuple[str, ...], form: str | None = None, first: str | None = None):
    """(model, input shape, mode, a seed): for a mode of `modes`, a chain of 1-3 ops (conv, depthwise conv, pool, Add/Mul with a
    tensor or a per-channel constant, Relu, and in float BatchNorm (tpu.Scale), Pad along W and
    ConvTranspose), each reading the previous result, the Adds also an earlier one of the same shape.
    `form` and `first` (then the only op's kind) force a form of the chain (the forced runs)."""
    g = Graph(np.random.default_rng(draw(st.integers(0, 2**16))))
    mode = draw(st.sampled_from(modes))
    int8, scale = mode == "INT8", 4 // ESIZE[mode]  # the same bytes per lane in every mode
    form = form or draw(st.sampled_from(["row", "wide", "filter", "matmul"]))
    if form == "matmul":  # a fully connected layer whose weight (k x n_out) exceeds a lane: cut its columns
        return _fully_connected(draw, g, scale, mode)
    # a lane holds 16 KiB: an input and an output tile of more than 8 KiB do not fit together
    if form == "row":  # one row, 2-3 channel groups per lane: C parts of whole lanes fit
        shape = (draw(st.integers(1, 2)), draw(st.integers(5, 12)), 1, draw(st.integers(1200, 2400)) * scale)
    elif form == "wide":  # one channel group, rows of more than 8 KiB: only W parts fit
        shape = (1, draw(st.integers(1, 4)), draw(st.integers(2, 3)), draw(st.integers(2100, 3200)) * scale)
    else:  # a filter of more than 16 KiB per lane: its output channels must be split
        shape = (1, draw(st.sampled_from([64, 96])), draw(st.integers(3, 5)), draw(st.integers(3, 6)))
    g.shapes["x"] = shape
    tensors = ["x"]
    kinds = ["conv", "dwconv", "pool", "add", "addc", "mul", "relu"] + ([] if int8 else ["bn", "pad", "deconv",
                                                                                        "upsample"])
    for step in range(1 if first else draw(st.integers(1, 3))):  # a forced op alone: a group would hold its slices
        src = tensors[-1]
        n, c, h, w = g.shapes[src]
        # the first op a window op, whose W halo (or C part of a filter) a slice must get right
        firsts = ["conv", "dwconv", "pool"] + ([] if int8 else ["deconv", "pad", "upsample"])
        kind = ("bigconv" if form == "filter" else first or draw(st.sampled_from(firsts))) if step == 0 else \
            draw(st.sampled_from(kinds))
        if kind in ("conv", "bigconv"):
            oc = draw(st.integers(32, 48)) * scale if kind == "bigconv" else draw(st.integers(1, 12))
            kh, sh, dh, pt, pb = (3, 1, 1, 1, 1) if kind == "bigconv" else _axis(draw, h, False)
            kw, sw, dw, pl, pr = _axis(draw, w, True)
            ins = [src, g.const((oc, c, kh, kw))] + ([g.const((oc,))] if draw(st.booleans()) else [])
            out = g.node("Conv", ins, (n, oc, _out(h, kh, sh, dh, pt, pb), _out(w, kw, sw, dw, pl, pr)),
                         kernel_shape=[kh, kw], strides=[sh, sw], dilations=[dh, dw], pads=[pt, pl, pb, pr])
        elif kind == "dwconv":
            kh, sh, dh, pt, pb = _axis(draw, h, False)
            kw, sw, dw, pl, pr = _axis(draw, w, True)
            out = g.node("Conv", [src, g.const((c, 1, kh, kw)), g.const((c,))],
                         (n, c, _out(h, kh, sh, dh, pt, pb), _out(w, kw, sw, dw, pl, pr)), kernel_shape=[kh, kw],
                         strides=[sh, sw], dilations=[dh, dw], pads=[pt, pl, pb, pr], group=c)
        elif kind == "pool":
            # kernels within the input (a conv before may have left 1 or 2 columns)
            kh, kw = draw(st.integers(1, min(2, h))), draw(st.integers(min(2, w), min(3, w)))
            sw = draw(st.integers(1, 2))
            pl, pr = draw(st.integers(0, kw // 2)), draw(st.integers(0, kw // 2))
            op = draw(st.sampled_from(["MaxPool", "AveragePool"]))
            extra = {"count_include_pad": draw(st.integers(0, 1))} if op == "AveragePool" else {}
            out = g.node(op, [src], (n, c, h - kh + 1, _out(w, kw, sw, 1, pl, pr)), kernel_shape=[kh, kw],
                         strides=[1, sw], pads=[0, pl, 0, pr], **extra)
        elif kind in ("add", "mul"):
            same = [t for t in tensors if g.shapes[t] == (n, c, h, w)]
            out = g.node("Add" if kind == "add" else "Mul", [src, draw(st.sampled_from(same))], (n, c, h, w))
        elif kind == "addc":  # a per-channel constant: broadcast along N, H and W
            out = g.node("Add", [src, g.const((1, c, 1, 1))], (n, c, h, w))
        elif kind == "bn":
            var = f"v{len(g.inits)}"
            g.inits.append(numpy_helper.from_array(g.rng.uniform(0.5, 2.0, c).astype(np.float32), var))
            out = g.node("BatchNormalization", [src, g.const((c,)), g.const((c,)), g.const((c,)), var], (n, c, h, w))
        elif kind == "pad":
            left, right = draw(st.integers(0, 3)), draw(st.integers(0, 3))
            out = g.node("Pad", [src, g.ints([0, 0, 0, left, 0, 0, 0, right])], (n, c, h, w + left + right),
                         mode=draw(st.sampled_from(["constant", "edge"])))
        elif kind == "deconv":
            kw, sw = draw(st.integers(1, 3)), draw(st.integers(1, 2))
            pl = draw(st.integers(0, kw - 1))  # at least one output column (the input may be 1 column wide)
            pr = draw(st.integers(0, min(kw - 1, (w - 1) * sw + kw - 1 - pl)))
            oc = draw(st.integers(1, 4))
            out = g.node("ConvTranspose", [src, g.const((c, oc, 1, kw))], (n, oc, h, (w - 1) * sw + kw - pl - pr),
                         kernel_shape=[1, kw], strides=[1, sw], pads=[0, pl, 0, pr])
        elif kind == "upsample":  # Resize nearest by whole scales: tpu.Upsample
            sw = draw(st.integers(2, 3))
            out = _resize(g, src, (n, c, h, w * sw), (1.0, float(sw)), mode="nearest", nearest_mode="floor",
                          coordinate_transformation_mode="asymmetric")
        else:
            out = g.node("Relu", [src], (n, c, h, w))
        tensors.append(out)
    return g.model({"x": shape}, tensors[-1]), shape, mode, draw(st.integers(0, 2**16))


def _resize(g: Graph, src: str, shape, scales: tuple[float, float], **attrs) -> str:
    name = f"sc{len(g.inits)}"
    g.inits.append(numpy_helper.from_array(np.array([1, 1, *scales], np.float32), name))
    return g.node("Resize", [src, "", name], shape, **attrs)


def _fully_connected(draw, g: Graph, scale: int, mode: str):
    """A Gemm (weight transposed or not, bias or not) of (rows, k) by k x n_out columns, maybe a Relu."""
    rows, k, n_out = draw(st.integers(1, 6)), draw(st.integers(256, 384)), draw(st.integers(64, 96)) * scale
    g.shapes["x"] = (rows, k)
    transposed = draw(st.booleans())
    ins = ["x", g.const((n_out, k) if transposed else (k, n_out))] + ([g.const((n_out,))] if draw(st.booleans()) else [])
    out = g.node("Gemm", ins, (rows, n_out), transB=int(transposed))
    if draw(st.booleans()):
        out = g.node("Relu", [out], (rows, n_out))
    return g.model({"x": (rows, k)}, out), (rows, k), mode, draw(st.integers(0, 2**16))


def _features(top) -> set[str]:
    got = set()
    for op in top.module.walk():
        secs = {k: op.attributes[k].value.data for k in ("csecs", "wsecs") if k in op.attributes}
        if secs.get("csecs", 1) > 1:
            got.add("sliced along C")
            if op.name == "tpu.Conv2D" and op.attributes["group"].value.data == 1:
                got.add("filter sliced along C")
            if op.name == "tpu.MatMul":
                got.add("MatMul sliced along C")
        if secs.get("wsecs", 1) > 1:
            got.add("sliced along W")
            if op.name == "tpu.Upsample":
                got.add("Upsample sliced along W")
    return got


# (modes, form, first op, the features each of its examples must show): a run of each forced case, FORCED_SHARE of
# the examples; the rest drawn (drawn alone, "Upsample sliced along W" fell to 1 and "MatMul sliced along C" to 3 of
# 40 in the dev profile). The Upsample in F32 only: in F16 it joins its casts in a group, which holds the slices.
FORCED = ((("F32", "F16"), "filter", None, frozenset({"sliced along C", "filter sliced along C"})),
          (("F32", "F16"), "matmul", None, frozenset({"sliced along C", "MatMul sliced along C"})),
          (("F32",), "wide", "upsample", frozenset({"sliced along W", "Upsample sliced along W"})))
FORCED_SHARE = 1 / 10


def test_c_and_w_slices_match_the_tpu_interpreter(tmp_path):
    """F32 and F16; a drawn run and three forced runs of a tenth of the examples each (a filter
    cut along C, a MatMul's columns cut along C, an F32 Upsample alone in a wide chain cut along W),
    each forced example asserting its features: C slices in at least 1 of 5 examples, every other
    feature in 1 of 10."""
    tally = FeatureTally(FEATURES)
    budget = max(8, settings.default.max_examples // 5)
    forced_n = max(1, int(budget * FORCED_SHARE))

    def check(chain, must):
        model, shape, mode, seed = chain
        feed = {"x": np.random.default_rng(seed).standard_normal(shape).astype(np.float32)}
        top = lowered(model, mode)
        want = interpret(top, feed)
        bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
        got, _ = run_bmodel(bm, feed)
        for name, w in want.items():
            (assert_f32_close if mode == "F32" else assert_bit_exact)(got[name], w, name)
        features = _features(top)
        assert must <= features, (must - features, features)
        tally.record(features)

    settings(max_examples=budget - len(FORCED) * forced_n)(given(chains(("F32", "F16")), st.just(frozenset()))(check))()
    for modes, form, first, must in FORCED:
        settings(max_examples=forced_n)(given(chains(modes, form, first), st.just(must))(check))()
    share = forced_n / budget
    tally.assert_each_in(2 * share, ["sliced along C"])
    tally.assert_each_in(share, FEATURES[1:])


def test_int8_c_and_w_slices_are_bit_exact(tmp_path):
    """INT8 (symmetric, calibrated on two random inputs): bit for bit; each feature at least once."""
    tally = FeatureTally(FEATURES)

    @settings(max_examples=max(4, settings.default.max_examples // 25))
    @given(chains(("INT8",)))
    def check(chain):
        model, shape, _, seed = chain
        top = int8_module(model, shape, tmp_path)
        feed = {"x": np.random.default_rng(seed).standard_normal(shape).astype(np.float32)}
        int8_bit_exact(top, feed, str(tmp_path / "m.bmodel"))
        tally.record(_features(top))

    check()  # measured in the CI profile: 8 cut along C (3 MatMuls, 2 conv filters), 3 along W
    for feature in FEATURES[:-1]:  # INT8 has no Upsample record
        assert tally.seen[feature] >= 1, (feature, tally.seen)


@given(st.integers(1, 300), st.integers(1, 40), st.sampled_from([4, 32, 64]))
def test_channel_parts_start_on_lane_0_and_cover_the_channels(total, secs, lanes):
    parts = split_channels(total, secs, lanes)
    assert parts[0][0] == 0 and parts[-1][1] == total
    assert all(a[1] == b[0] for a, b in zip(parts, parts[1:]))
    assert all(lo % lanes == 0 and hi > lo for lo, hi in parts)
    assert len(parts) <= secs


def test_a_linear_resize_is_cut_along_c(tmp_path):
    """tpu.Interp (linear, half_pixel, x 1.5) of 16 channels of 2 x 300 on the tiny chip: no N x H
    split fits, C parts of 4 channels (one per lane) do (its record computes the whole width, so W
    is never cut); the cmodel matches the Tpu interpreter."""
    g = Graph(np.random.default_rng(5))
    g.shapes["x"] = (1, 16, 2, 300)
    out = _resize(g, "x", (1, 16, 3, 450), (1.5, 1.5), mode="linear", coordinate_transformation_mode="half_pixel")
    top = lowered(g.model({"x": (1, 16, 2, 300)}, out))
    feed = {"x": np.random.default_rng(6).standard_normal((1, 16, 2, 300)).astype(np.float32)}
    want = interpret(top, feed)
    got, _ = run_bmodel(compile_for(top, "tiny", str(tmp_path / "m.bmodel")), feed)
    assert_f32_close(got[out], want[out], out)
    interp = next(op for op in top.module.walk() if op.name == "tpu.Interp")
    assert interp.attributes["csecs"].value.data > 1 and "wsecs" not in interp.attributes

"""The INT8 forms of Sub, Deconv, Softmax, AvgPool without counted pads and per-channel MatMul.

* Kernels: each against a reference written here from docs/quantization.md's formulas with
  Python ints, fractions and floats (loops over elements, no numpy arithmetic shared with the
  kernels), the rounding of tests/test_requant.py.
* Lowering constants: recomputed here from the weights and thresholds with fractions.
* Against Top: one model with every form, calibrated on random samples (minmax), output cosine
  >= 0.99 on another input, and every form really INT8 (not the F32 fallback).
"""

from __future__ import annotations

import itertools
import math
import re
from fractions import Fraction

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.feature_tally import FeatureTally
from tests.models.builder import GraphBuilder
from tests.test_requant import ref_round, ref_scale_and_shift
from tests.test_tpu_float import cosine, run, top_module
from tests.test_tpu_int8 import kernel, ref_rq, rng_int8
from tpudsl.backend import isa
from tpudsl.backend.bmodel import read_bmodel
from tpudsl.cli import model_deploy, model_transform
from tpudsl.dialects import make_context
from tpudsl.interp.kernel import KernelAttrs
from tpudsl.interp.kernels_tpu import TPU_KERNELS
from tpudsl.interp.module_interpreter import result_names
from tpudsl.ir.module import load_module, save_module
from tpudsl.lowering.calibration import calibrate
from tpudsl.lowering.calibration_table import read_table, table_text
from tpudsl.passes import pass_class


@pytest.mark.parametrize("reverse", [False, True])
def test_sub_kernel_is_the_formula(reverse):
    rng = np.random.default_rng(11)
    a, b = rng_int8(rng, 2, 3, 4), rng_int8(rng, 1, 3, 1)
    got = kernel("tpu.Sub", [a, b], {"multipliers": [1234567, 765432], "rshifts": [21, 21], "is_reverse": reverse},
                 None)
    for idx in itertools.product(range(2), range(3), range(4)):
        p, q = int(a[idx]) * 1234567, int(b[0, idx[1], 0]) * 765432
        assert got[idx] == ref_rq(q - p if reverse else p - q, 1, 21, "HalfAwayFromZero"), idx


def test_mul_const_kernel_is_the_formula():
    x = rng_int8(np.random.default_rng(16), 3, 7)
    got = kernel("tpu.MulConst", [x], {"const_val": -2.5, "multiplier": -1234567, "rshift": 22}, None)
    assert [int(v) for v in got.ravel()] == [ref_rq(int(v) * -1234567, 1, 22, "HalfAwayFromZero") for v in x.ravel()]


def test_deconv_kernel_is_the_formula():
    """Each input pixel scatters x * w[ic, oc] to i * stride + tap * dilation - pad_begin; positions
    outside the output are dropped; output_padding adds rows that only the bias reaches."""
    rng = np.random.default_rng(12)
    # small values, and channels 0-2 divided by 4 exactly: ties (acc = 2 mod 4) test the rounding mode
    x, w = rng.integers(-8, 9, (1, 4, 3, 3)).astype(np.int8), rng.integers(-8, 9, (4, 3, 2, 3)).astype(np.int8)
    bias = rng.integers(-50, 50, 6).astype(np.int32)
    mult = [1, 1, 1] + [int(v) for v in rng.integers(1, 2**20, 3)]
    shift = [2, 2, 2] + [int(v) for v in rng.integers(20, 24, 3)]
    strides, dil, pb, pe, opad = (2, 1), (1, 2), (1, 0), (0, 1), (1, 0)
    attrs = {"kernel_shape": [2, 3], "strides": list(strides), "pads": [*pb, *pe], "group": 2,
             "dilations": list(dil), "output_padding": list(opad), "multiplier": mult, "rshift": shift}
    got = kernel("tpu.Deconv", [x, w, bias], attrs, None)
    out = [(3 - 1) * s + d * (k - 1) + 1 - b - e + o for s, d, k, b, e, o in zip(strides, dil, (2, 3), pb, pe, opad)]
    assert got.shape == (1, 6, *out) and got.dtype == np.int8
    acc = {(o, i, j): int(bias[o]) for o in range(6) for i in range(out[0]) for j in range(out[1])}
    for ic, i, j, oc, a, b in itertools.product(range(4), range(3), range(3), range(3), range(2), range(3)):
        o = (ic // 2) * 3 + oc
        pos = (i * strides[0] + a * dil[0] - pb[0], j * strides[1] + b * dil[1] - pb[1])
        if (o, *pos) in acc:
            acc[(o, *pos)] += int(x[0, ic, i, j]) * int(w[ic, oc, a, b])
    for (o, i, j), total in acc.items():
        assert got[0, o, i, j] == ref_rq(total, mult[o], shift[o], "HalfUp"), (o, i, j)
    assert sum(total % 4 == 2 for (o, _, _), total in acc.items() if o < 3) >= 10


def test_softmax_kernel_is_the_formula():
    """e = table[max - x], S = sum e, y = sat(round_half_away((e / S) / s_out)) in doubles."""
    rng = np.random.default_rng(13)
    x = rng_int8(rng, 2, 5, 3)
    s_in, s_out = 0.03, 1 / 127
    table = np.array([round(math.exp(-d * s_in) * 65536) for d in range(256)], np.int32)
    got = TPU_KERNELS["tpu.Softmax"].run([x, table], KernelAttrs({"axis": 1}, [None], [np.dtype(np.int8)],
                                                                 (s_in, s_out)))
    for n, k in itertools.product(range(2), range(3)):
        column = [int(v) for v in x[n, :, k]]
        e = [int(table[max(column) - v]) for v in column]
        for c in range(5):
            want = max(-128, min(127, ref_round(Fraction((e[c] / sum(e)) / s_out), "HalfAwayFromZero")))
            assert got[n, c, k] == want, (n, c, k)


def test_avgpool_without_counted_pads_is_the_formula():
    """Each position's window sum over the elements inside the input, requantized by
    scale_and_shift(scale / count)."""
    rng = np.random.default_rng(14)
    x = rng_int8(rng, 1, 2, 5, 5)
    scale = float(np.float32(2.7))
    attrs = {"pool_mode": "Avg", "kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1],
             "count_include_pad": False, "multiplier": 1, "rshift": 0, "scale": scale, "round_mode": "HalfUp"}
    got = kernel("tpu.Pool2D", [x], attrs, (1, 2, 3, 3))
    counts = set()
    for c, i, j in itertools.product(range(2), range(3), range(3)):
        inside = [(r, q) for r in range(2 * i - 1, 2 * i + 2) for q in range(2 * j - 1, 2 * j + 2)
                  if 0 <= r < 5 and 0 <= q < 5]
        counts.add(len(inside))
        m, n = ref_scale_and_shift(scale / len(inside))
        assert got[0, c, i, j] == ref_rq(sum(int(x[0, c, r, q]) for r, q in inside), m, n, "HalfUp"), (c, i, j)
    assert counts == {4, 6, 9}


def test_per_channel_matmul_kernel_is_the_formula():
    rng = np.random.default_rng(15)
    x, w = rng_int8(rng, 2, 3, 40), rng_int8(rng, 40, 5)
    bias = rng.integers(-3000, 3000, 5).astype(np.int32)
    mult = [int(v) for v in rng.integers(1, 2**20, 5)]
    shift = [int(v) for v in rng.integers(18, 30, 5)]
    got = kernel("tpu.MatMul", [x, w, bias], {"multipliers": mult, "rshifts": shift, "round_mode": "HalfUp"},
                 (2, 3, 5))
    for i, j, k in itertools.product(range(2), range(3), range(5)):
        acc = int(bias[k]) + sum(int(x[i, j, t]) * int(w[t, k]) for t in range(40))
        assert got[i, j, k] == ref_rq(acc, mult[k], shift[k], "HalfUp")


# ---- lowering and accuracy ----------------------------------------------------------------------


def forms_model():
    """Conv -> Sub, AvgPool (pads not counted), ConvTranspose, Softmax, MatMul (a weight with one
    column 100 times smaller: per-channel scales matter there), each an output."""
    b = GraphBuilder("forms", seed=3)
    x = b.input("input", [1, 4, 6, 6])
    c = b.conv(x, "c", 4, 4, 3)
    outs = [b.node("Sub", [x, c], "sub"),
            b.node("AveragePool", [c], "avg", kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1]),
            b.node("ConvTranspose", [c, b.weight("dec.weight", (4, 3, 2, 2), 16), b.small("dec.bias", (3,))],
                   "dec", kernel_shape=[2, 2], strides=[2, 2]),
            b.node("Softmax", [c], "soft", axis=1)]
    wm = (b.rng.standard_normal((6, 3)) * np.array([0.5, 0.005, 0.3])).astype(np.float32)
    outs.append(b.node("MatMul", [c, b.const("mm.weight", wm)], "mm"))
    outs.append(b.node("Mul", [c, b.const("mc.c", np.array(-1.7, np.float32))], "mc"))
    for o in outs:
        b.output(o)
    return b.model(), ("sub", "avg", "dec", "soft", "mm", "mc")


def lowered(model, d, perchannel: bool, samples: int = 16):
    top = top_module(model)
    save_module(top, d / "m.mlir")
    rng = np.random.default_rng(0)
    feeds = {str(i): {"input": rng.standard_normal((1, 4, 6, 6)).astype(np.float32)} for i in range(samples)}
    result = calibrate(str(d / "m.mlir"), list(feeds), feeds.__getitem__, need_histograms=False)
    (d / "table").write_text(table_text(result.table("minmax"), 2048, samples))
    top = load_module(d / "m.mlir")
    ctx = make_context()
    pass_class("import-calibration-table")(file=str(d / "table"), asymmetric=False).apply(ctx, top.module)
    pass_class("processor-assign")(chip="bm1684x", mode="INT8").apply(ctx, top.module)
    pass_class("convert-top-to-tpu")(matmul_perchannel=perchannel).apply(ctx, top.module)
    top.module.verify()
    return top, {k: e.threshold for k, e in result.table("minmax").items()}


def ints(op, key):
    attr = op.attributes[key]
    return [v.value.data for v in attr.data] if isinstance(getattr(attr, "data", None), tuple) else attr.value.data


def test_forms_lowering_constants_are_the_formulas(tmp_path):
    model, _ = forms_model()
    weights = {t.name: np.asarray(onnx.numpy_helper.to_array(t)) for t in model.graph.initializer}
    top, th = lowered(model, tmp_path, perchannel=True)
    ops = {name: op for op in top.main_func().walk() for name in result_names(op)}
    s = {k: Fraction(float(np.float32(v))) / 127 for k, v in th.items()}
    # per-channel MatMul: column k at max|w[:, k]| / 127
    mm = ops["mm_int8"]
    wm = weights["mm.weight"]
    want = [ref_scale_and_shift(float(Fraction(float(np.abs(wm[:, k]).max())) / 127 * s["c"] / s["mm"]))
            for k in range(3)]
    assert list(zip(ints(mm, "multipliers"), ints(mm, "rshifts"), strict=True)) == want
    # Deconv: filter [ic, oc, kh, kw] per output channel (axis 1), bias at s_w[oc] s_in
    dec = ops["dec_int8"]
    wd, bd = weights["dec.weight"], weights["dec.bias"]
    s_w = [Fraction(float(np.abs(wd[:, o]).max())) / 127 for o in range(3)]
    assert list(zip(ints(dec, "multiplier"), ints(dec, "rshift"), strict=True)) == \
        [ref_scale_and_shift(float(sw * s["c"] / s["dec"])) for sw in s_w]
    bias = top.weights[dec.operands[2].owner.location.desc.data]
    assert [int(v) for v in bias] == [ref_round(Fraction(float(bd[o])) / (Fraction(float(s_w[o])) * Fraction(float(s["c"]))),
                                                "HalfAwayFromZero") for o in range(3)]
    # AvgPool: the full window's constants and scale = float32(s_in / s_out)
    avg = ops["avg_int8"]
    assert (ints(avg, "multiplier"), ints(avg, "rshift")) == ref_scale_and_shift(float(s["c"] / (s["avg"] * 9)))
    assert avg.attributes["scale"].value.data == float(np.float32(float(s["c"] / s["avg"])))
    # Softmax: entry d = round(exp(-d s_in) 2^16)
    table = top.weights["soft_table"]
    assert [int(v) for v in table] == [ref_round(Fraction(math.exp(-d * float(s["c"])) * 65536), "HalfAwayFromZero")
                                       for d in range(256)]
    # MulConst: s_in c / s_out
    mc = ops["mc_int8"]
    assert mc.name == "tpu.MulConst"
    assert (ints(mc, "multiplier"), ints(mc, "rshift")) == ref_scale_and_shift(float(s["c"] * Fraction(float(np.float32(-1.7))) / s["mc"]))
    # Sub: Add's one-shift multipliers of s_i / s_out
    sub = ops["sub_int8"]
    ratios = [float(np.float32(float(s[k] / s["sub"]))) for k in ("input", "c")]
    n = ints(sub, "rshifts")[0]
    assert n == max(n for n in range(-32, 31)
                    if all(abs(ref_round(Fraction(r) * 2**n, "HalfAwayFromZero")) < 2**31 - 1 for r in ratios))
    assert ints(sub, "multipliers") == [ref_round(Fraction(r) * 2**n, "HalfAwayFromZero") for r in ratios]


@pytest.mark.parametrize("perchannel", [False, True])
def test_forms_close_to_top(tmp_path, perchannel):
    model, outputs = forms_model()
    top, _ = lowered(model, tmp_path, perchannel)
    kinds = {op.name: op for op in top.main_func().walk()}
    for name in ("tpu.Sub", "tpu.Pool2D", "tpu.Deconv", "tpu.Softmax", "tpu.MatMul", "tpu.MulConst"):
        assert "quant.uniform" in str(kinds[name].results[0].type), name  # INT8, not the fallback
    feed = {"input": np.random.default_rng(77).standard_normal((1, 4, 6, 6)).astype(np.float32)}
    got, want = run(top, feed), run(top_module(model), feed)
    for name in outputs:
        assert cosine(got[name], want[name]) >= 0.99, name
    # per tensor the small column keeps a few int8 levels; per column it spans [-127, 127]
    column = top.weights[kinds["tpu.MatMul"].operands[1].owner.location.desc.data][:, 1]
    assert (np.abs(column).max() == 127) == perchannel, column


FORMS = ("sub", "avgpool_pad", "deconv", "softmax", "conv", "relu")


@st.composite
def form_chains(draw, every_form: bool = False):
    """A chain of 2-4 distinct layers (the new forms, conv, relu) on [1, 4, 6, 6], then MatMul;
    every_form: the four new forms, in a random order."""
    layers = draw(st.permutations(FORMS[:4] if every_form else FORMS))[:4 if every_form else draw(st.integers(2, 4))]
    b = GraphBuilder("chain", seed=draw(st.integers(0, 2**16)))
    x = b.input("input", [1, 4, 6, 6])
    size = 6
    for i, kind in enumerate(layers):
        name = f"l{i}.{kind}"
        if kind == "sub":
            x = b.node("Sub", [x, b.conv(x, f"{name}.branch", 4, 4, 3)], name)
        elif kind == "avgpool_pad":
            x = b.node("AveragePool", [x], name, kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1])
        elif kind == "deconv":
            x = b.node("ConvTranspose", [x, b.weight(f"{name}.weight", (4, 4, 2, 2), 4)], name, kernel_shape=[2, 2],
                       strides=[2, 2])
            size *= 2
        elif kind == "softmax":
            x = b.node("Softmax", [x], name, axis=1)
        elif kind == "conv":
            x = b.conv(x, name, 4, 4, 3)
        else:
            x = b.relu(x, name)
    x = b.node("Flatten", [x], "flatten")
    b.output(b.node("MatMul", [x, b.weight("fc", (4 * size * size, 5), 4 * size * size)], "output"))
    return layers, b.model()


def test_random_chains_of_the_new_forms_close_to_top(tmp_path_factory):
    """Chains of the new forms, calibrated (minmax) on 16 samples: output cosine >= 0.99 with Top
    on another input, with each form INT8 in at least a fifth of the examples: by construction, in
    every one of the last quarter (all four new forms)."""
    tally = FeatureTally(("tpu.Sub", "tpu.Pool2D", "tpu.Deconv", "tpu.Softmax"))

    def check(case):
        layers, model = case
        top, _ = lowered(model, tmp_path_factory.mktemp("c"), perchannel=True)
        feed = {"input": np.random.default_rng(5).standard_normal((1, 4, 6, 6)).astype(np.float32)}
        got, want = run(top, feed), run(top_module(model), feed)
        assert cosine(got["output"], want["output"]) >= 0.99, layers
        tally.record(op.name for op in top.main_func().walk()
                     if op.results and "quant.uniform" in str(op.results[0].type) and op.name.startswith("tpu."))

    examples = max(10, settings.default.max_examples // 10)
    settings(max_examples=examples - examples // 4)(given(form_chains())(check))()
    settings(max_examples=examples // 4)(given(form_chains(every_form=True))(check))()
    tally.assert_each_in(1 / 5)


def test_model_deploy_writes_an_int8_softmax_bit_exact(tmp_path, capsys):
    """An INT8 Softmax (BdcSoftmaxQ, docs/backend.md) goes through model_deploy to the .bmodel: the
    third comparison is bit-exact (the backend used to stop after the Tpu check, naming it)."""
    b = GraphBuilder("p", seed=1)
    x = b.input("input", [1, 4, 8, 8])
    b.output(b.node("Softmax", [b.conv(x, "c", 4, 4, 3)], "soft", axis=1))
    onnx.save(b.model(), tmp_path / "p.onnx")
    np.savez(tmp_path / "in.npz", input=np.random.default_rng(0).random((1, 4, 8, 8), dtype=np.float32))
    model_transform.run(["--model_name", "p", "--model_def", str(tmp_path / "p.onnx"), "--mlir",
                         str(tmp_path / "p.mlir"), "--test_input", str(tmp_path / "in.npz")])
    feeds = {str(i): {"input": np.random.default_rng(i).random((1, 4, 8, 8), dtype=np.float32)} for i in range(4)}
    result = calibrate(str(tmp_path / "p.mlir"), list(feeds), feeds.__getitem__, need_histograms=False)
    (tmp_path / "t").write_text(table_text(result.table("minmax"), 2048, 4))
    assert model_deploy.run(["--mlir", str(tmp_path / "p.mlir"), "--quantize", "INT8", "--processor", "bm1684x",
                             "--calibration_table", str(tmp_path / "t"), "--model", str(tmp_path / "p.bmodel"),
                             "--test_input", str(tmp_path / "p_in_f32.npz"), "--tolerance", "0.99,0.9"]) == 0
    assert "1 outputs of the cmodel equal the Tpu interpreter's (INT8, bit-exact)" in capsys.readouterr().err
    assert (tmp_path / "p.bmodel").exists()


# ---- AddConst, SubConst, Gather with constant indices ----------------------------------------------


@pytest.mark.parametrize("name, reverse", [("tpu.AddConst", False), ("tpu.SubConst", False), ("tpu.SubConst", True)])
def test_const_kernels_are_the_formula(name, reverse):
    """y = sat(round_half_away((x m +- C) / 2^n)), C the integer const_val; reversed: C - x m.
    Ties included: m = 3, n = 1 and odd C make half of the sums end in .5."""
    x = rng_int8(np.random.default_rng(17), 4, 9)
    for m, n, c in ((3, 1, 5), (1234567, 22, -987654321), (-2000000, 24, 7 * 2**24)):
        attrs = {"const_val": float(c), "multiplier": m, "rshift": n, "is_reverse": reverse}
        if name == "tpu.AddConst":
            del attrs["is_reverse"]
        got = kernel(name, [x], attrs, None)
        sign = -1 if name == "tpu.SubConst" else 1
        want = [ref_rq(c - int(v) * m if reverse else int(v) * m + sign * c, 1, n, "HalfAwayFromZero")
                for v in x.ravel()]
        assert [int(v) for v in got.ravel()] == want, (m, n, c)


@pytest.mark.parametrize("name, reverse", [("tpu.AddConst", False), ("tpu.SubConst", True)])
def test_const_kernels_with_zero_points(name, reverse):
    """Asymmetric: uint8 x with zp_in = 37, int8 result with zp_out = -5: (x - 37) m, then + zp_out."""
    x = np.random.default_rng(19).integers(0, 256, (3, 7)).astype(np.uint8)
    values = {"const_val": 12345.0, "multiplier": 1234567, "rshift": 21, **({"is_reverse": True} if reverse else {})}
    got = TPU_KERNELS[name].run([x], KernelAttrs(values, [None], [np.dtype(np.int8)], (None, None),
                                                 zero_points=((37,), -5)))
    for v, y in zip(x.ravel(), got.ravel(), strict=True):
        p = (int(v) - 37) * 1234567
        acc = 12345 - p if reverse else p + 12345
        assert int(y) == max(-128, min(127, ref_round(Fraction(acc, 2**21), "HalfAwayFromZero") - 5)), v


def test_int8_gather_picks_the_stored_values():
    x = rng_int8(np.random.default_rng(18), 2, 5, 3)
    got = TPU_KERNELS["tpu.Gather"].run([x, np.array([4.0, 0.0, -1.0, 2.0], np.float32)],
                                        KernelAttrs({"axis": 1}, [(2, 4, 3)], [np.dtype(np.int8)], (0.1, 0.1)))
    assert got.dtype == np.int8
    assert got.tolist() == [[[x[i, k, j] for j in range(3)] for k in (4, 0, 4, 2)] for i in range(2)]


def const_model():
    """Conv -> x + 0.7, x - (-0.4), 1.3 - x, x[:, [3, 0, -1]] (a Gather with constant indices), each an output."""
    b = GraphBuilder("consts", seed=3)
    c = b.conv(b.input("input", [1, 4, 6, 6]), "c", 4, 4, 3)
    outs = [b.node("Add", [c, b.const("ac.c", np.array(0.7, np.float32))], "ac"),
            b.node("Sub", [c, b.const("sc.c", np.array(-0.4, np.float32))], "sc"),
            b.node("Sub", [b.const("rc.c", np.array(1.3, np.float32)), c], "rc"),
            b.node("Gather", [c, b.const("g.i", np.array([3, 0, -1], np.int64))], "g", axis=1)]
    for o in outs:
        b.output(o)
    return b.model()


def test_const_and_gather_lowering_constants_and_accuracy(tmp_path):
    """The constants recomputed with fractions: (m, n) = scale_and_shift(s_in / s_out) and
    C = round_half_away(c / s_out 2^n); the gathered values keep the stored int8 values (the
    Gather's output QType is its input's when the table gives them the same threshold, else a
    RequantInt comes first); against Top on another input, cosine >= 0.99."""
    model = const_model()
    top, _ = lowered(model, tmp_path, perchannel=False)
    ops = {name: op for op in top.main_func().walk() for name in result_names(op)}
    # the thresholds as the lowering reads them: the table's 7 decimals
    s = {k: Fraction(e.threshold) / 127 for k, e in read_table(str(tmp_path / "table")).items()}
    for out, tpu, c, reverse in (("ac", "tpu.AddConst", 0.7, False), ("sc", "tpu.SubConst", -0.4, False),
                                 ("rc", "tpu.SubConst", 1.3, True)):
        op = ops[f"{out}_int8"]
        is_reverse = op.attributes.get("is_reverse")
        assert op.name == tpu and bool(is_reverse and is_reverse.value.data) == reverse
        m, n = ref_scale_and_shift(float(s["c"] / s[out]))
        assert (ints(op, "multiplier"), ints(op, "rshift")) == (m, n)
        c32 = Fraction(float(np.float32(c)))
        want = ref_round(c32 / Fraction(float(s[out])) * 2**n, "HalfAwayFromZero")
        assert op.attributes["const_val"].value.data == want
    gather = ops["g_int8"]
    assert gather.name == "tpu.Gather" and "quant.uniform" in str(gather.results[0].type)
    feed = {"input": np.random.default_rng(77).standard_normal((1, 4, 6, 6)).astype(np.float32)}
    got, want = run(top, feed), run(top_module(model), feed)
    for name in ("ac", "sc", "rc", "g"):
        assert cosine(got[name], want[name]) >= 0.99, name


def test_model_deploy_int8_add_const_reaches_the_bmodel_bit_exact(tmp_path, capsys):
    """INT8 AddConst has a record (BdcConstSumQ): model_deploy writes the .bmodel and its cmodel
    output equals the Tpu interpreter's (the regression of a model whose AddConst was F32 before)."""
    b = GraphBuilder("a", seed=1)
    x = b.input("input", [1, 4, 8, 8])
    b.output(b.node("Add", [b.conv(x, "c", 4, 4, 3), b.const("k", np.array(0.5, np.float32))], "ac"))
    onnx.save(b.model(), tmp_path / "a.onnx")
    np.savez(tmp_path / "in.npz", input=np.random.default_rng(0).random((1, 4, 8, 8), dtype=np.float32))
    model_transform.run(["--model_name", "a", "--model_def", str(tmp_path / "a.onnx"), "--mlir",
                         str(tmp_path / "a.mlir"), "--test_input", str(tmp_path / "in.npz")])
    feeds = {str(i): {"input": np.random.default_rng(i).random((1, 4, 8, 8), dtype=np.float32)} for i in range(4)}
    result = calibrate(str(tmp_path / "a.mlir"), list(feeds), feeds.__getitem__, need_histograms=False)
    (tmp_path / "t").write_text(table_text(result.table("minmax"), 2048, 4))
    assert model_deploy.run(["--mlir", str(tmp_path / "a.mlir"), "--quantize", "INT8", "--processor", "bm1684x",
                             "--calibration_table", str(tmp_path / "t"), "--model", str(tmp_path / "a.bmodel"),
                             "--test_input", str(tmp_path / "a_in_f32.npz"), "--tolerance", "0.99,0.9"]) == 0
    err = capsys.readouterr().err
    assert "bmodel check passed: 1 outputs of the cmodel equal the Tpu interpreter's (INT8, bit-exact)" in err, err
    records = isa.decode(read_bmodel(str(tmp_path / "a.bmodel")).commands)
    assert any(isinstance(r, isa.BdcConstSumQ) and r.op == isa.CONST_OPS["AddConst"] for r in records)


def test_const_and_gather_forms_asymmetric_close_to_top(tmp_path):
    """The same model in asymmetric INT8 (zero points on every result): each form INT8 with a
    nonzero zero point, cosine >= 0.99 with Top on another input."""
    model = const_model()
    save_module(top_module(model), tmp_path / "m.mlir")
    rng = np.random.default_rng(0)
    feeds = {str(i): {"input": rng.standard_normal((1, 4, 6, 6)).astype(np.float32)} for i in range(16)}
    result = calibrate(str(tmp_path / "m.mlir"), list(feeds), feeds.__getitem__, need_histograms=False)
    (tmp_path / "table").write_text(table_text(result.table("minmax"), 2048, 16))
    top = load_module(tmp_path / "m.mlir")
    ctx = make_context()
    pass_class("import-calibration-table")(file=str(tmp_path / "table"), asymmetric=True).apply(ctx, top.module)
    pass_class("processor-assign")(chip="bm1684x", mode="INT8").apply(ctx, top.module)
    pass_class("convert-top-to-tpu")(asymmetric=True).apply(ctx, top.module)
    forms = [op for op in top.main_func().walk() if op.name in ("tpu.AddConst", "tpu.SubConst", "tpu.Gather")]
    assert len(forms) == 4 and all(re.search(r":-?[1-9]\d*>>$", str(op.results[0].type)) for op in forms), forms
    feed = {"input": np.random.default_rng(77).standard_normal((1, 4, 6, 6)).astype(np.float32)}
    got, want = run(top, feed), run(top_module(model), feed)
    for name in ("ac", "sc", "rc", "g"):
        assert cosine(got[name], want[name]) >= 0.99, name

"""pointwise.py (1x1 group-1 convs as one GEMM on the NC* buffer, the bias folded into the GEMM on
expansion and strided layers) through top.Conv's prepare, against a float64 loop over channels."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tpudsl.interp import pointwise
from tpudsl.interp.kernel import KernelAttrs
from tpudsl.interp.table import KERNELS

from tests.feature_tally import FeatureTally, forced_runs, run_each


def naive_pointwise(x, w, strides, bias, limit):
    """y[b, o, p] = sum over i of x[b, i, p * s] * w[o, i, 0...] + bias[o], then max(0, .) clamped at
    `limit` when limit > 0; in float64, one output and input channel at a time."""
    xs = x[(slice(None), slice(None), *(slice(None, None, s) for s in strides))].astype(np.float64)
    y = np.zeros((x.shape[0], w.shape[0], *xs.shape[2:]))
    for o in range(w.shape[0]):
        for i in range(w.shape[1]):
            y[:, o] += xs[:, i] * float(w.reshape(w.shape[:2])[o, i])
        if bias is not None:
            y[:, o] += float(bias[o])
    if limit is not None:
        y = np.maximum(y, 0) if limit <= 0 else np.minimum(np.maximum(y, 0), limit)
    return y


@st.composite
def problems(draw):
    rank = draw(st.sampled_from([2, 2, 1, 3]))
    ic = draw(st.integers(1, 9))
    # a third of the examples meet the fold rule by construction (an expansion with a weight bias
    # and a known output size); the rest draw every choice freely
    fold = draw(st.integers(0, 2)) == 0
    expand = fold or draw(st.booleans())
    oc = ic + draw(st.integers(1, 8)) if expand else draw(st.integers(1, ic))
    return dict(
        n=draw(st.integers(1, 2)), ic=ic, oc=oc,
        size=[draw(st.integers(1, 9 if rank < 3 else 4)) for _ in range(rank)],
        s=draw(st.sampled_from([[1] * rank, [1] * rank, [draw(st.integers(1, 3)) for _ in range(rank)]])),
        dilated=draw(st.booleans()), auto_pad=draw(st.sampled_from(["NOTSET", "VALID"])),
        bias="weight" if fold else draw(st.sampled_from([None, "weight", "computed"])),
        out_known=fold or draw(st.sampled_from([True, True, False])),
        fold_min=1 if fold else draw(st.sampled_from([1, 16])),
        limit=draw(st.sampled_from([None, -1.0, 0.5])), seed=draw(st.integers(0, 2**16)),
        # the `view` prepare (readers that copy their input: a channels-last result), and an input
        # that is itself such a view
        channels_last=draw(st.booleans()), x_channels_last=draw(st.booleans()))


POINTWISE_FEATURES = ("bias folded into the GEMM", "bias added after the GEMM", "strided", "relu", "batch",
                      "not 2-D", "channels-last result", "channels-last input")
# Runs forcing every feature in each of their examples, a tenth of the 80 each (drawn, "strided" fell
# to 2 of 80 in the dev profile): a folded bias on a strided batch of rank 1 or 3, and a bias added
# after the GEMM with a relu, channels-last on both sides.
POINTWISE_FORCED = (
    (problems().filter(lambda p: len(p["size"]) != 2).map(
        lambda p: {**p, "bias": "weight", "out_known": True, "fold_min": 1, "n": 2,
                   "s": [max(p["s"][0], 2), *p["s"][1:]]}),
     ("bias folded into the GEMM", "strided", "batch", "not 2-D")),
    (problems().map(lambda p: {**p, "bias": "computed", "limit": 0.5 if p["limit"] is None else p["limit"],
                               "channels_last": True, "x_channels_last": True}),
     ("bias added after the GEMM", "relu", "channels-last result", "channels-last input")))


def test_pointwise_matches_a_float64_loop(monkeypatch):
    """Random rank 1-3, batch, channel counts, output sizes and result types on both sides of the fold
    rule, strides, a weight or a computed bias or none, relu / relu6-like clamp: top.Conv's prepared
    kernel takes pointwise.py every time and matches the loop; through the `view` prepare too, whose
    result is the view of a channels-last array, and on an input that is such a view. Each case must
    occur in a tenth of the 80 examples: 64 drawn, then two runs of 8 (POINTWISE_FORCED) that show
    their cases in every example."""
    tally = FeatureTally(POINTWISE_FEATURES)
    calls = []
    conv = pointwise.conv
    monkeypatch.setattr(pointwise, "conv", lambda x, packed, bias, *cl: calls.append(packed.folded) or conv(x, packed, bias, *cl))

    def check(p, forced):
        rank = len(p["size"])
        monkeypatch.setattr(pointwise, "FOLD_MIN_POSITIONS", p["fold_min"])
        rng = np.random.default_rng(p["seed"])
        x = rng.uniform(-1, 1, (p["n"], p["ic"], *p["size"])).astype(np.float32)
        if p["x_channels_last"]:
            x = np.moveaxis(np.ascontiguousarray(np.moveaxis(x, 1, -1)), -1, 1)
        w = rng.uniform(-1, 1, (p["oc"], p["ic"], *[1] * rank)).astype(np.float32)
        bias = None if p["bias"] is None else rng.uniform(-1, 1, p["oc"]).astype(np.float32)
        attrs = {"kernel_shape": [1] * rank, "strides": p["s"], "auto_pad": p["auto_pad"],
                 "dilations": [2] * rank if p["dilated"] else [1] * rank}
        if p["limit"] is not None:
            attrs |= {"do_relu": True, "relu_limit": p["limit"]}
        expected = naive_pointwise(x, w, p["s"], bias, p["limit"])
        a = KernelAttrs(attrs, [expected.shape] if p["out_known"] else [])  # prepare reads the output size
        before = len(calls)
        prepare = KERNELS["top.Conv"].view if p["channels_last"] else KERNELS["top.Conv"].prepare
        run = prepare([None, w, bias if p["bias"] == "weight" else None], a)
        got = run([x, w, bias], a)
        assert len(calls) == before + 1
        assert got.dtype == np.float32 and got.shape == expected.shape
        if p["channels_last"] and p["oc"] > 1 and np.prod(expected.shape[2:]) > 1:
            assert np.moveaxis(got, 1, -1).flags.c_contiguous  # the channels-last array's view
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5 * (1 + p["ic"] ** 0.5))
        folded = (p["bias"] == "weight" and p["out_known"] and np.prod(expected.shape[2:]) >= p["fold_min"]
                  and (p["ic"] < p["oc"] or max(p["s"]) > 1))
        assert calls[-1] == folded  # the rule: a weight bias, >= FOLD_MIN_POSITIONS outputs, expansion or stride
        cases = {case for case, present in (("bias folded into the GEMM", folded),
                                                 ("bias added after the GEMM", bias is not None and not folded),
                                                 ("strided", max(p["s"]) > 1), ("relu", p["limit"] is not None),
                                                 ("batch", p["n"] > 1), ("not 2-D", rank != 2),
                                                 ("channels-last result", p["channels_last"]),
                                                 ("channels-last input", p["x_channels_last"])) if present}
        assert cases.issuperset(forced), f"a forced example without {set(forced) - cases}: {p}"
        tally.record(cases)

    each = 8
    run_each(check, forced_runs(problems(), POINTWISE_FORCED, 80, each))
    tally.assert_each_in(each / 80)


def test_pointwise_is_not_taken_where_it_does_not_apply(monkeypatch):
    """Pads, groups, auto_pad SAME and wider kernels keep the general paths."""
    monkeypatch.setattr(pointwise, "conv", None)  # calling it would fail
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (1, 4, 5, 5)).astype(np.float32)
    for w_shape, attrs in (((6, 4, 1, 1), {"pads": [1, 0, 1, 0]}), ((6, 2, 1, 1), {"group": 2}),
                           ((6, 4, 1, 1), {"auto_pad": "SAME_UPPER"}), ((6, 4, 3, 1), {})):
        a = KernelAttrs({"kernel_shape": list(w_shape[2:]), **attrs})
        w = rng.uniform(-1, 1, w_shape).astype(np.float32)
        y = KERNELS["top.Conv"].prepare([None, w, None], a)([x, w, None], a)
        assert y.shape[:2] == (1, 6)

"""depthwise.py (stride phases, wide rows, row shifts folded into per-channel GEMMs, shifted adds,
bias and relu per channel block; the direct layout's columns copied from the input, flat or from one
another) against a direct float64 loop over output positions and taps."""

from __future__ import annotations

import itertools
import math
import sys

import numpy as np
import pytest
from hypothesis import strategies as st

from tpudsl.interp import depthwise, winograd
from tpudsl.interp.windows import Geometry

from tests.feature_tally import FeatureTally, forced_runs, run_each


def naive_depthwise(x, w, strides, dilations, pads_begin, pads_end, out, bias, limit):
    """y[b, c * m + j, o] = sum over taps t of x[b, c, o * s + t * d - pad] * w[c * m + j, 0, t] (zero
    outside the input), + bias, then max(0, .) clamped at `limit` when limit > 0; in float64."""
    n, channels = x.shape[:2]
    mult = w.shape[0] // channels
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    y = np.zeros((n, channels * mult, *out))
    for o in itertools.product(*(range(v) for v in out)):
        for tap in itertools.product(*(range(k) for k in w.shape[2:])):
            pos = [oi * s + t * d - p for oi, s, t, d, p in zip(o, strides, tap, dilations, pads_begin, strict=True)]
            if all(0 <= q < size for q, size in zip(pos, x.shape[2:], strict=True)):
                v = x64[(slice(None), slice(None), *pos)]  # [n, channels]
                y[(slice(None), slice(None), *o)] += np.repeat(v, mult, axis=1) * w64[(slice(None), 0, *tap)]
    if bias is not None:
        y += bias.astype(np.float64).reshape((-1,) + (1,) * len(out))
    if limit is not None:
        y = np.maximum(y, 0) if limit <= 0 else np.clip(y, 0, limit)
    return y


@st.composite
def problems(draw):
    rank = draw(st.sampled_from([2, 2, 2, 1, 3]))
    k = [draw(st.sampled_from([3, 5, 1, 2, 7])) for _ in range(rank)]
    s = [draw(st.sampled_from([1, 2, 3])) for _ in range(rank)]
    d = [draw(st.sampled_from([1, 2])) for _ in range(rank)]
    extent = [(ki - 1) * di + 1 for ki, di in zip(k, d, strict=True)]
    pads_begin = [draw(st.integers(0, e - 1)) for e in extent]
    pads_end = [draw(st.integers(0, e - 1)) for e in extent]
    size = [draw(st.integers(max(1, e - pb - pe), max(1, e - pb - pe) + (6 if rank < 3 else 2)))
            for e, pb, pe in zip(extent, pads_begin, pads_end, strict=True)]
    return dict(
        n=draw(st.integers(1, 2)), channels=draw(st.integers(1, 6)), mult=draw(st.sampled_from([1, 1, 2])),
        k=k, s=s, d=d, pads_begin=pads_begin, pads_end=pads_end, size=size,
        fold=draw(st.sampled_from([1, 1, 2, 99])), block_bytes=draw(st.sampled_from([1 << 20, 4, 3000])),
        channels_last=draw(st.sampled_from([True, True, False])), again=draw(st.sampled_from([None, "reuse", "fresh"])),
        bias=draw(st.sampled_from([None, "call", "packed"])), limit=draw(st.sampled_from([None, 0.0, 0.5])), seed=draw(st.integers(0, 2**16)))


def refit(p: dict, **geometry) -> dict:
    """p with some of k, s, d, pads_begin changed: the pads kept below the new extents and each size
    raised to the least that gives an output, as problems() draws them."""
    q = {**p, **geometry}
    extent = [(ki - 1) * di + 1 for ki, di in zip(q["k"], q["d"], strict=True)]
    pads_begin = [min(b, e - 1) for b, e in zip(q["pads_begin"], extent, strict=True)]
    pads_end = [min(b, e - 1) for b, e in zip(q["pads_end"], extent, strict=True)]
    size = [max(sz, e - b - a) for sz, e, b, a in zip(q["size"], extent, pads_begin, pads_end, strict=True)]
    return {**q, "pads_begin": pads_begin, "pads_end": pads_end, "size": size}


def channels_last_dilated(p: dict) -> dict:
    """A 2-D problem made a channels-last dilated one: no depth multiplier, the channels-last path,
    dilation 2 along H over two taps or more (the input made tall enough for one output row)."""
    p = refit(p, k=[max(p["k"][0], 2), *p["k"][1:]], d=[2, *p["d"][1:]])
    return {**p, "mult": 1, "channels_last": True}


def row_shifts(p: dict) -> dict:
    """p with as many row shifts as taps along the first axis, two or more (the stride at most the
    dilation), padded before it, and two channels or more in blocks."""
    p = refit(p, k=[max(p["k"][0], 2), *p["k"][1:]], s=[min(p["s"][0], p["d"][0]), *p["s"][1:]],
              pads_begin=[max(p["pads_begin"][0], 1), *p["pads_begin"][1:]])
    return {**p, "channels": max(p["channels"], 2), "block_bytes": min(p["block_bytes"], 3000)}


def strided_last_axis(p: dict) -> dict:
    """A 2-D or 3-D problem with stride 2 along the last axis over taps at least 2 apart (up to 3
    taps: the direct layout's)."""
    k, d = max(min(p["k"][-1], 3), 2), p["d"][-1]
    return refit(p, k=[*p["k"][:-1], k], s=[*p["s"][:-1], 2], d=[*p["d"][:-1], 2 if k == 2 else d])


def relu(p: dict) -> dict:
    """p with its fused relu (drawn) or, where it had none, the relu6-like clamp."""
    return {**p, "limit": 0.5 if p["limit"] is None else p["limit"]}


def shifts(p: dict) -> int:
    """The distinct row shifts of the first axis's taps: its partial sums, unless folded."""
    return len({(i * p["d"][0]) // p["s"][0] for i in range(p["k"][0])})


def direct(p: dict) -> dict:
    """A problem made one for the direct layout: kernels of at most 3 taps, fold 1, the GEMM path."""
    k = [min(ki, 3) for ki in p["k"]]
    extent = [(ki - 1) * di + 1 for ki, di in zip(k, p["d"], strict=True)]
    pads_begin = [min(b, e - 1) for b, e in zip(p["pads_begin"], extent, strict=True)]
    pads_end = [min(b, e - 1) for b, e in zip(p["pads_end"], extent, strict=True)]
    size = [max(sz, e) for sz, e in zip(p["size"], extent, strict=True)]
    return {**p, "k": k, "pads_begin": pads_begin, "pads_end": pads_end, "size": size, "fold": 1,
            "channels_last": False}


def same_direct(p: dict) -> dict:
    """A 2-D or 3-D problem made a "same" one for the direct layout's flat copies: kernels of at most
    3 taps, stride 1, fold 1, the GEMM path, pads past the first axis summing to the kernel's extent
    - 1 (so the output is as wide as the input there), the input at least as large as the extent."""
    p = direct(p)
    extent = [(ki - 1) * di + 1 for ki, di in zip(p["k"], p["d"], strict=True)]
    pads_end = [p["pads_end"][0]] + [e - 1 - b for b, e in zip(p["pads_begin"][1:], extent[1:], strict=True)]
    return {**p, "s": [1] * len(p["k"]), "pads_end": pads_end}


FEATURES = ("strided", "dilated", "multiplier", "padded", "channels-last", "partial sums added",
            "im2col (one partial sum)", "channel blocks", "bias", "relu", "bias packed into the GEMM", "batch",
            "relu in the crop pass",
            "second call, views reused", "second call, new work arrays")
# what each case exists for, and the share of its examples that must show it
PURPOSE = {"random": (FEATURES, 1 / 8), "channels-last dilated": (("channels-last dilated",), 1),
           "direct": (("direct layout", "direct, sums added into the output", "strided", "padded", "relu",
                       "direct, last axis strided with taps sharing its phases",
                       "direct, stride 2 along the last axis (pair casts)",
                       "channel blocks"), 1 / 8),
           "same, direct": (("direct, flat copies with wrapped reads zeroed",), 1 / 2)}
EXAMPLES = {"random": 100, "direct": 100, "same, direct": 25}


def runs(case: str, drawn, *forced) -> tuple:
    """A case's runs, sharing its tally: `drawn`, then each (strategy, features) of `forced` in the
    share of the examples its floor asks for, every one of them showing the features (the floors
    hold by construction: drawn, one fell under its floor about one dev-profile run in three)."""
    total, share = EXAMPLES[case], PURPOSE[case][1]
    return forced_runs(drawn, forced, total, math.ceil(total * share))


def two_d(p: dict) -> bool:
    return len(p["k"]) == 2


def two_d_or_more(p: dict) -> bool:
    return len(p["k"]) >= 2


# The direct layout's problems: kernels up to 3 with the packed bias (its row of ones) and a second
# call on new work arrays in every example (the other bias and call modes run through the same code
# in both layouts, and the random examples take them); stride-2 columns de-interleaved by pair casts
# (PAIRS_MIN_WIDTH 0) or by strided copies, drawn.
direct_problems = st.tuples(problems(), st.booleans()).map(
    lambda t: {**direct(t[0]), "bias": "packed", "again": "fresh", "pairs": t[1]})
# each case: (strategy, examples, the features each example must show)
RUNS = {
    "random": runs(
        "random", problems(),
        (problems().filter(two_d).map(channels_last_dilated).map(
            lambda p: {**p, "s": [p["s"][0], max(p["s"][1], 2)], "n": 2, "again": "reuse"}),
         ("channels-last", "dilated", "strided", "batch", "second call, views reused", "channels-last dilated")),
        (problems().map(row_shifts).map(
            lambda p: {**p, "mult": 2, "fold": p["fold"] if p["fold"] < shifts(p) else 1, "again": "fresh"}),
         ("partial sums added", "multiplier", "channel blocks", "padded", "second call, new work arrays")),
        (problems().map(relu).map(
            lambda p: {**p, "channels_last": False, "bias": "packed", "fold": max(p["fold"], shifts(p))}),
         ("im2col (one partial sum)", "bias", "bias packed into the GEMM", "relu", "relu in the crop pass"))),
    # all of it by construction (drawn, it fell as low as 0 and 8 of 100 random examples); with the
    # random case's 13 channels-last ones, dilated too, 25 in all
    "channels-last dilated": ((problems().filter(two_d).map(channels_last_dilated), 12,
                               ("channels-last dilated",)),),
    "direct": runs(
        "direct", direct_problems,
        (problems().filter(two_d_or_more).map(strided_last_axis).map(
            lambda p: {**direct(p), "bias": "packed", "again": "fresh", "pairs": True}),
         ("strided", "direct, last axis strided with taps sharing its phases",
          "direct, stride 2 along the last axis (pair casts)")),
        (direct_problems.map(lambda p: relu(direct(row_shifts(p)))),
         ("direct, sums added into the output", "padded", "relu", "channel blocks"))),
    # stride 1: the flat copies; their wrapped reads zeroed where the pads past the first axis are
    # not all 0 (two taps or more along the last axis)
    "same, direct": runs(
        "same, direct", problems().filter(two_d_or_more).map(same_direct),
        (problems().filter(two_d_or_more).map(
            lambda p: same_direct(refit(p, k=[*p["k"][:-1], max(p["k"][-1], 2)]))),
         ("direct, flat copies with wrapped reads zeroed",)))}


def shown(p: dict, out: tuple[int, ...], hwc: bool) -> set[str]:
    """The features one example shows (kept out of the property's body, which seeds hypothesis)."""
    nshifts = shifts(p)
    direct = not hwc and max(p["k"]) <= 3 and (p["fold"] == 1 or nshifts == 1)
    flat = direct and len(p["k"]) > 1 and max(p["s"]) == 1 and out[1:] == tuple(p["size"][1:])
    limit, bias = p["limit"], p["bias"]
    return {feature for feature, present in (
        ("strided", max(p["s"]) > 1), ("dilated", max(p["d"]) > 1),
        ("multiplier", p["mult"] > 1), ("padded", any(p["pads_begin"] + p["pads_end"])),
        ("channels-last", hwc), ("channels-last dilated", hwc and max(p["d"]) > 1),
        ("partial sums added", not hwc and p["fold"] < nshifts),
        ("im2col (one partial sum)", not hwc and p["fold"] >= nshifts),
        ("channel blocks", not hwc and p["block_bytes"] < (1 << 20) and p["channels"] > 1),
        ("bias", bias is not None), ("relu", limit is not None), ("batch", p["n"] > 1),
        ("bias packed into the GEMM", bias == "packed" and not hwc),
        ("relu in the crop pass", not hwc and limit is not None and bias != "call"),
        ("direct layout", direct), ("direct, sums added into the output", direct and nshifts > 1),
        ("direct, last axis strided with taps sharing its phases",
         direct and len(p["k"]) > 1 and (p["k"][-1] - 1) * p["d"][-1] >= p["s"][-1] > 1),
        ("direct, stride 2 along the last axis (pair casts)", direct and p["s"][-1] == 2 and p.get("pairs")),
        ("direct, flat copies with wrapped reads zeroed", flat and any(p["pads_begin"][1:] + p["pads_end"][1:])),
        ("second call, views reused", p["again"] == "reuse"),
        ("second call, new work arrays", p["again"] == "fresh")) if present}


@pytest.mark.parametrize("case", RUNS)
def test_depthwise_matches_a_direct_loop(monkeypatch, case):
    """Random rank 1-3 geometry (kernel 1-7, stride 1-3, dilation, asymmetric pads), depth multiplier,
    batch, bias (per call, or packed into the GEMM against a row of ones) and a fused relu /
    relu6-like clamp, through the channels-last path (2-D, no depth multiplier) or the GEMM path with its channel blocks and fold (row shifts summed by the GEMM or
    by shifted adds). A second call on the same packed filter reuses the views of the work arrays its
    plan keeps, or (after winograd.release_work) makes them again on new arrays, and must give the same
    result. Each feature must occur in an eighth of the random case's 100 examples: 61 drawn, then
    three runs of 13 that each show a group of the features in every example (RUNS). The other
    cases: 12 channels-last dilated ones (and the random case's 13); 100 for the direct layout (kernels up to 3, columns read
    from the input, sums added into the output; 74 drawn, two runs of 13 forced); 25 "same"
    stride-1 ones (its flat copies, 13 of them with wrapped reads zeroed)."""
    features, share = PURPOSE[case]
    tally = FeatureTally(features)

    def check(p, forced):
        monkeypatch.setattr(depthwise, "BLOCK_BYTES", p["block_bytes"])
        monkeypatch.setattr(depthwise, "CHANNELS_LAST_MAX_OUT", 10**9 if p["channels_last"] else 0)
        monkeypatch.setattr(depthwise, "PAIRS_MIN_WIDTH", 0 if p.get("pairs") and sys.byteorder == "little" else math.inf)
        hwc = p["channels_last"] and len(p["k"]) == 2 and p["mult"] == 1
        rng = np.random.default_rng(p["seed"])
        x = rng.uniform(-1, 1, (p["n"], p["channels"], *p["size"])).astype(np.float32)
        w = rng.uniform(-1, 1, (p["channels"] * p["mult"], 1, *p["k"])).astype(np.float32)
        bias = rng.uniform(-1, 1, p["channels"] * p["mult"]).astype(np.float32) if p["bias"] else None
        packed_bias = bias if p["bias"] == "packed" else None
        out = tuple((size + pb + pe - (k - 1) * d - 1) // s + 1 for size, pb, pe, k, d, s in
                    zip(p["size"], p["pads_begin"], p["pads_end"], p["k"], p["d"], p["s"], strict=True))
        g = Geometry(tuple(p["k"]), tuple(p["s"]), tuple(p["d"]), tuple(p["pads_begin"]), tuple(p["pads_end"]),
                     p["channels"])
        limit = p["limit"]
        clip = None if limit is None else (0.0, limit if limit > 0 else np.inf)
        packed = depthwise.pack(w, g, p["fold"], packed_bias)
        call_bias = None if packed_bias is not None else bias
        got = depthwise.conv(x, packed, g, out, call_bias, clip)
        if p["again"] is not None:
            if p["again"] == "fresh":
                winograd.release_work()
            np.testing.assert_array_equal(depthwise.conv(x, packed, g, out, call_bias, clip), got)
        expected = naive_depthwise(x, w, p["s"], p["d"], p["pads_begin"], p["pads_end"], out, bias, limit)
        assert got.dtype == np.float32 and got.shape == expected.shape
        # float32 sums of up to 7^3 products of values in [-1, 1]
        np.testing.assert_allclose(got, expected, rtol=0, atol=2e-5 * (1 + np.prod(p["k"]) ** 0.5))
        names = shown(p, out, hwc)
        assert names.issuperset(forced), f"a forced example without {set(forced) - names}: {p}"
        tally.record(names)

    run_each(check, RUNS[case])
    tally.assert_each_in(share)

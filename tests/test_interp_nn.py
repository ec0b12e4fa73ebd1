"""Conv, Deconv and MatMul kernels against onnxruntime (Conv, ConvTranspose, MatMul/Gemm)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from interp_ref import assert_close, ort_run, rand, run_top

from tests.feature_tally import FeatureTally
from tpudsl.interp import depthwise, kernels_nn
from tpudsl.interp.kernel import KernelAttrs
from tpudsl.interp.table import KERNELS

CONV_CASES = {
    # name: (input shape, filter shape, attrs)
    "plain": ((1, 3, 8, 8), (4, 3, 3, 3), {}),
    "stride_pad": ((2, 3, 9, 7), (5, 3, 3, 3), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "asym_pads": ((1, 2, 7, 9), (3, 2, 3, 2), {"pads": [0, 2, 1, 0], "strides": [1, 2]}),
    "dilation": ((1, 2, 11, 10), (4, 2, 3, 3), {"dilations": [2, 3], "pads": [2, 1, 2, 1]}),
    "groups": ((1, 6, 8, 8), (9, 2, 3, 3), {"group": 3, "pads": [1, 1, 1, 1]}),
    "depthwise": ((2, 4, 9, 9), (4, 1, 3, 3), {"group": 4, "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "depthwise_mult": ((1, 3, 6, 6), (6, 1, 3, 3), {"group": 3, "dilations": [2, 2]}),
    "pointwise_stride": ((1, 8, 7, 7), (16, 8, 1, 1), {"strides": [2, 2]}),
    "conv1d": ((2, 3, 15), (4, 3, 5), {"strides": [2], "pads": [2, 1], "dilations": [2]}),
    "conv3d": ((1, 2, 5, 6, 4), (3, 2, 3, 3, 2), {"pads": [1, 0, 1, 1, 1, 0], "strides": [1, 2, 1]}),
    "single_input_channel": ((1, 1, 6, 6), (4, 1, 3, 3), {}),
    # many taps per stride phase: im2col reads unit-step windows of the stride phases
    "stem_phases": ((2, 3, 15, 13), (4, 3, 7, 7), {"strides": [2, 2], "pads": [3, 3, 2, 3]}),
    "phases_dilated": ((1, 2, 17, 12), (3, 2, 5, 5), {"strides": [2, 3], "dilations": [2, 1], "pads": [4, 2, 3, 1]}),
    "phases_1d": ((1, 2, 20), (3, 2, 9), {"strides": [2], "pads": [4, 3]}),
    # windows that tile the input (patch embedding): the columns are its blocks, leftovers dropped
    "patches": ((2, 3, 9, 13), (4, 3, 4, 3), {"strides": [4, 3]}),
    "patches_grouped": ((1, 4, 8, 8), (6, 2, 2, 2), {"strides": [2, 2], "group": 2}),
    "patches_1d": ((1, 2, 11), (3, 2, 5), {"strides": [5]}),
}


def _onnx_conv_attrs(w_shape, attrs):
    return {"kernel_shape": list(w_shape[2:]), **attrs}


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_matches_onnxruntime(case, bias):
    x_shape, w_shape, attrs = CONV_CASES[case]
    rng = np.random.default_rng(1)
    x, w = rand(rng, *x_shape), rand(rng, *w_shape)
    b = rand(rng, w_shape[0]) if bias else None
    top = {"kernel_shape": list(w_shape[2:]), **attrs}
    (expected,) = ort_run("Conv", [x, w, b], _onnx_conv_attrs(w_shape, attrs))
    assert_close(run_top("top.Conv", [x, w, b], top)[0], expected)


@pytest.mark.parametrize("size", [(12, 12), (11, 13)])  # whole tiles, and odd sizes padded to tiles
def test_wide_3x3_conv_takes_winograd_and_matches_onnxruntime(size):
    ic = kernels_nn.WINOGRAD_MIN_CHANNELS
    rng = np.random.default_rng(8)
    x, w, b = rand(rng, 2, ic, *size), rand(rng, 5, ic, 3, 3), rand(rng, 5)
    attrs = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}
    assert kernels_nn._uses_winograd(ic, kernels_nn.Geometry.of(KernelAttrs(attrs), w.shape), size)
    (expected,) = ort_run("Conv", [x, w, b], attrs)
    assert_close(run_top("top.Conv", [x, w, b], attrs)[0], expected)
    a = KernelAttrs(attrs, [expected.shape])  # prepare picks the algorithm from the result type
    assert_close(KERNELS["top.Conv"].prepare([None, w, b], a)([x, w, b], a), expected)


@pytest.mark.parametrize("prepared", [False, True])
@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER", "VALID"])
def test_conv_auto_pad_matches_onnxruntime(auto_pad, prepared):
    rng = np.random.default_rng(9)
    x, w = rand(rng, 1, 2, 7, 8), rand(rng, 3, 2, 4, 3)
    attrs = {"kernel_shape": [4, 3], "strides": [2, 3], "auto_pad": auto_pad}
    (expected,) = ort_run("Conv", [x, w], attrs)
    if prepared:
        a = KernelAttrs(attrs)
        got = KERNELS["top.Conv"].prepare([None, w, None], a)([x, w, None], a)
    else:
        got = run_top("top.Conv", [x, w, None], attrs)[0]
    assert_close(got, expected)


def test_conv_prepared_filter_gives_the_same_result():
    x_shape, w_shape, attrs = CONV_CASES["groups"]
    rng = np.random.default_rng(2)
    x, w, b = rand(rng, *x_shape), rand(rng, *w_shape), rand(rng, w_shape[0])
    a = KernelAttrs({"kernel_shape": [3, 3], **attrs})
    run = KERNELS["top.Conv"].prepare([None, w, b], a)
    (expected,) = ort_run("Conv", [x, w, b], _onnx_conv_attrs(w_shape, attrs))
    assert_close(run([x, w, b], a), expected)


@pytest.mark.parametrize("limit", [-1.0, 0.3])
def test_conv_fused_relu(limit):
    rng = np.random.default_rng(3)
    x, w = rand(rng, 1, 2, 5, 5), rand(rng, 3, 2, 3, 3)
    (conv,) = ort_run("Conv", [x, w, None], {"kernel_shape": [3, 3]})
    expected = np.maximum(conv, 0) if limit < 0 else np.clip(conv, 0, limit)
    got = run_top("top.Conv", [x, w, None], {"kernel_shape": [3, 3], "do_relu": True, "relu_limit": limit})[0]
    assert_close(got, expected)


DECONV_CASES = {
    # name: (input shape, ONNX filter shape [ic, oc/g, *k], attrs)
    "plain": ((1, 3, 5, 5), (3, 4, 3, 3), {}),
    "stride": ((2, 2, 4, 5), (2, 3, 3, 3), {"strides": [2, 2]}),
    "stride_pads": ((1, 4, 5, 4), (4, 2, 4, 4), {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "asym_pads_outpad": ((1, 2, 4, 4), (2, 3, 3, 3), {"strides": [3, 2], "pads": [1, 0, 0, 1], "output_padding": [2, 1]}),
    "dilation": ((1, 2, 5, 5), (2, 2, 3, 2), {"dilations": [2, 3], "strides": [1, 2]}),
    "groups": ((1, 6, 4, 4), (6, 2, 3, 3), {"group": 3, "strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]}),
    "depthwise": ((1, 4, 5, 5), (4, 1, 2, 2), {"group": 4, "strides": [2, 2]}),
    "deconv1d": ((2, 3, 7), (3, 2, 3), {"strides": [2], "pads": [1, 0], "output_padding": [1]}),
    "deconv3d": ((1, 2, 3, 4, 3), (2, 3, 2, 3, 2), {"strides": [2, 1, 2], "pads": [0, 1, 0, 0, 1, 1]}),
}


def reorder_deconv_filter(w: np.ndarray, group: int) -> np.ndarray:
    """ONNX [ic, oc/g, *k] -> [oc, ic/g, *k], written independently of the kernel's packing."""
    ic, oc_g = w.shape[:2]
    ic_g = ic // group
    out = np.empty((oc_g * group, ic_g, *w.shape[2:]), w.dtype)
    for g in range(group):
        for o in range(oc_g):
            for i in range(ic_g):
                out[g * oc_g + o, i] = w[g * ic_g + i, o]
    return out


@pytest.mark.parametrize("reordered", [False, True])
@pytest.mark.parametrize("case", DECONV_CASES)
def test_deconv_matches_onnxruntime(case, reordered):
    x_shape, w_shape, attrs = DECONV_CASES[case]
    rng = np.random.default_rng(4)
    x, w, b = rand(rng, *x_shape), rand(rng, *w_shape), rand(rng, w_shape[1] * attrs.get("group", 1))
    (expected,) = ort_run("ConvTranspose", [x, w, b], {"kernel_shape": list(w_shape[2:]), **attrs})
    filt = reorder_deconv_filter(w, attrs.get("group", 1)) if reordered else w
    top = {"kernel_shape": list(w_shape[2:]), "dynweight_reorderd": reordered, **attrs}
    assert_close(run_top("top.Deconv", [x, filt, b], top)[0], expected)


MATMUL_CASES = {
    # name: (input shape, right shape, attrs)
    "2d": ((4, 5), (5, 3), {}),
    "1d_1d": ((5,), (5,), {}),  # a 0-d result
    "1d_2d": ((5,), (5, 3), {}),
    "batched": ((2, 3, 4, 5), (2, 3, 5, 6), {}),
    "broadcast_right": ((2, 3, 4, 5), (5, 6), {}),
    "broadcast_batch": ((2, 1, 4, 5), (3, 5, 2), {}),
}


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("case", MATMUL_CASES)
def test_matmul_matches_onnxruntime(case, bias):
    a_shape, b_shape, attrs = MATMUL_CASES[case]
    rng = np.random.default_rng(5)
    x, y = rand(rng, *a_shape), rand(rng, *b_shape)
    (expected,) = ort_run("MatMul", [x, y])
    b = rand(rng, b_shape[-1]) if bias else None
    if bias:
        (expected,) = ort_run("Add", [expected, b])
    assert_close(run_top("top.MatMul", [x, y, b], attrs)[0], expected)


@pytest.mark.parametrize("trans_a,trans_b", [(0, 1), (1, 0), (1, 1)])
def test_matmul_transposes_match_gemm(trans_a, trans_b):
    rng = np.random.default_rng(6)
    x = rand(rng, *((5, 4) if trans_a else (4, 5)))
    y = rand(rng, *((3, 5) if trans_b else (5, 3)))
    c = rand(rng, 3)
    (expected,) = ort_run("Gemm", [x, y, c], {"transA": trans_a, "transB": trans_b})
    attrs = {"left_transpose": bool(trans_a), "right_transpose": bool(trans_b)}
    assert_close(run_top("top.MatMul", [x, y, c], attrs)[0], expected)
    prepared = KERNELS["top.MatMul"].prepare([None, y, None], KernelAttrs(attrs))
    assert_close(prepared([x, y, c], KernelAttrs(attrs)), expected)


def test_matmul_output_transpose_and_keep_dims():
    rng = np.random.default_rng(7)
    x, y = rand(rng, 2, 4, 5), rand(rng, 5, 3)
    (mm,) = ort_run("MatMul", [x, y])
    got = run_top("top.MatMul", [x, y, None], {"output_transpose": True})[0]
    assert_close(got, np.swapaxes(mm, -1, -2))
    flat = run_top("top.MatMul", [x, y, None], {"keep_dims": False}, out_shapes=[(8, 3)])[0]
    assert_close(flat, mm.reshape(8, 3))


# ---- properties: random geometry vs onnxruntime -----------------------------------------------

@st.composite
def conv_problems(draw, transposed: bool):
    rank = draw(st.integers(1, 2))
    group = draw(st.integers(1, 3))
    ic, oc = group * draw(st.integers(1, 3)), group * draw(st.integers(1, 3))
    k = [draw(st.integers(1, 3)) for _ in range(rank)]
    s = [draw(st.integers(1, 3)) for _ in range(rank)]
    d = [draw(st.integers(1, 2)) for _ in range(rank)]
    extent = [(ki - 1) * di + 1 for ki, di in zip(k, d)]
    if transposed:
        pads = [draw(st.integers(0, e - 1)) for e in extent * 2]
        out_pad = [draw(st.integers(0, si - 1)) for si in s]  # onnxruntime wants output_padding < stride
        size = [draw(st.integers(1, 5)) for _ in range(rank)]
        full = [(n - 1) * si + e for n, si, e in zip(size, s, extent)]
        assume(all(f - pads[i] - pads[i + rank] + op > 0 for i, (f, op) in enumerate(zip(full, out_pad))))
    else:
        pads = [draw(st.integers(0, e - 1)) for e in extent * 2]
        size = [draw(st.integers(max(1, e - pads[i] - pads[i + rank]), 9)) for i, e in enumerate(extent)]
        out_pad = None
    n = draw(st.integers(1, 2))
    seed = draw(st.integers(0, 2**16))
    return rank, group, ic, oc, k, s, d, pads, out_pad, n, size, seed


@given(conv_problems(transposed=False))
def test_conv_property(problem):
    rank, group, ic, oc, k, s, d, pads, _, n, size, seed = problem
    rng = np.random.default_rng(seed)
    x, w, b = rand(rng, n, ic, *size), rand(rng, oc, ic // group, *k), rand(rng, oc)
    attrs = {"kernel_shape": k, "strides": s, "dilations": d, "pads": pads, "group": group}
    (expected,) = ort_run("Conv", [x, w, b], attrs)
    assert_close(run_top("top.Conv", [x, w, b], attrs)[0], expected)


@given(conv_problems(transposed=True))
def test_deconv_property(problem):
    rank, group, ic, oc, k, s, d, pads, out_pad, n, size, seed = problem
    rng = np.random.default_rng(seed)
    x, w, b = rand(rng, n, ic, *size), rand(rng, ic, oc // group, *k), rand(rng, oc)
    attrs = {"kernel_shape": k, "strides": s, "dilations": d, "pads": pads, "group": group, "output_padding": out_pad}
    (expected,) = ort_run("ConvTranspose", [x, w, b], attrs)
    assert_close(run_top("top.Deconv", [x, w, b], attrs)[0], expected)


@given(
    batch=st.lists(st.integers(1, 3), max_size=2),
    m=st.integers(1, 6), k=st.integers(1, 6), n=st.integers(1, 6),
    right_batched=st.booleans(), seed=st.integers(0, 2**16),
)
def test_matmul_property(batch, m, k, n, right_batched, seed):
    rng = np.random.default_rng(seed)
    x = rand(rng, *batch, m, k)
    y = rand(rng, *(batch if right_batched else []), k, n)
    (expected,) = ort_run("MatMul", [x, y])
    assert_close(run_top("top.MatMul", [x, y, None])[0], expected)


@st.composite
def depthwise_problems(draw, forced: str = ""):
    """forced="gemm": every GEMM-path feature (2-D or 3-D, multiplier, 2-8 channels in blocks, dilated along H
    with stride 1 there so the row shifts are partial sums, strided along W, padded);
    forced="channels-last": 2-D, no multiplier, every output channels-last."""
    gemm = forced == "gemm"
    rank = draw(st.integers(2, 3) if gemm else st.just(2) if forced else st.integers(1, 3))
    channels = draw(st.integers(2, 8) if gemm else st.integers(1, 4) | st.integers(16, 160))
    mult = 2 if gemm else 1 if forced else draw(st.integers(1, 2))
    k = [draw(st.integers(2 if gemm and i == 0 else 1, 4)) for i in range(rank)]
    s = [1 if gemm and i == 0 else draw(st.integers(2 if gemm and i == 1 else 1, 3)) for i in range(rank)]
    d = [2 if gemm and i == 0 else draw(st.integers(1, 2)) for i in range(rank)]
    extent = [(ki - 1) * di + 1 for ki, di in zip(k, d)]
    pads = [draw(st.integers(1 if gemm and i == 0 else 0, e - 1)) for i, e in enumerate(extent * 2)]
    lows = [max(1, e - pads[i] - pads[i + rank]) for i, e in enumerate(extent)]
    size = [draw(st.integers(lo, max(lo, (8 if rank < 3 else 5) if channels <= 4 else 4))) for lo in lows]
    # the channel block (depthwise.BLOCK_BYTES): all channels at once, or a few per block; the row
    # shifts folded into a GEMM (depthwise.FOLD): one (the default, most often), two, or all (im2col)
    block_bytes = 4 if gemm else draw(st.sampled_from([1 << 20, 4]) | st.integers(64, 8192))
    fold = 1 if gemm else draw(st.sampled_from([1, 1, 1, 2, 99]))
    # outputs up to this many positions go channels-last (2-D, no depth multiplier): the default, all, none
    hwc_max = 10**9 if forced == "channels-last" else draw(st.sampled_from([depthwise.CHANNELS_LAST_MAX_OUT, 10**9, 10**9, 0]))
    return (rank, channels, mult, k, s, d, pads, draw(st.integers(1, 2)), size, block_bytes, fold, hwc_max,
            draw(st.integers(0, 2**16)))


DEPTHWISE_FEATURES = ("strided", "dilated", "multiplier", "2-D or 3-D", "padded", "channels-last", "channel blocks",
                      "partial sums added")


def test_depthwise_conv_property(monkeypatch):
    """Depthwise conv (group = input channels, 1 or 2 outputs per group) of rank 1-3 with random
    strides, dilations and pads vs onnxruntime (depthwise.py: stride phases, wide rows, row shifts
    folded or not, per-channel GEMMs, over all channels at once or in blocks of channels; or
    channels-last multiply-adds), through `run` and through `prepare` with the fused relu. Each
    feature it handles must occur in at least a fifth of the examples (channels-last: a fifteenth),
    by construction: 146 random examples in CI, then 40 with every GEMM-path feature and 14
    channels-last."""
    tally = FeatureTally(DEPTHWISE_FEATURES)
    blocks = []
    channel_block = depthwise.channel_block
    monkeypatch.setattr(depthwise, "channel_block", lambda *a: blocks.append(channel_block(*a)) or blocks[-1])

    def check(problem):
        rank, channels, mult, k, s, d, pads, n, size, block_bytes, fold, hwc_max, seed = problem
        monkeypatch.setattr(depthwise, "BLOCK_BYTES", block_bytes)
        monkeypatch.setattr(depthwise, "FOLD", fold)
        monkeypatch.setattr(depthwise, "CHANNELS_LAST_MAX_OUT", hwc_max)
        blocks.clear()
        rng = np.random.default_rng(seed)
        x, w, b = rand(rng, n, channels, *size), rand(rng, channels * mult, 1, *k), rand(rng, channels * mult)
        attrs = {"kernel_shape": k, "strides": s, "dilations": d, "pads": pads, "group": channels}
        (expected,) = ort_run("Conv", [x, w, b], attrs)
        assert_close(run_top("top.Conv", [x, w, b], attrs)[0], expected)
        hwc = rank == 2 and mult == 1 and int(np.prod(expected.shape[2:])) <= hwc_max
        assert bool(blocks) != hwc, "the GEMM path runs exactly when the channels-last one does not"
        # through prepare (filter packed once) with the fused relu, plain or clamped (Relu6-like)
        limit = 0.5 if seed % 2 else -1.0
        a = KernelAttrs({**attrs, "do_relu": True, "relu_limit": limit}, [expected.shape])
        relu = np.clip(expected, 0, limit) if limit > 0 else np.maximum(expected, 0)
        assert_close(KERNELS["top.Conv"].prepare([None, w, b], a)([x, w, b], a), relu)
        row_shifts = len({(i * d[0]) // s[0] for i in range(k[0])})
        tally.record(feature for feature, present in (
            ("strided", max(s) > 1), ("dilated", max(d) > 1), ("multiplier", mult > 1), ("2-D or 3-D", rank > 1),
            ("padded", any(pads)), ("channels-last", hwc), ("channel blocks", not hwc and blocks[0] < channels),
            ("partial sums added", not hwc and fold < row_shifts)) if present)

    total = settings.default.max_examples
    for forced, share in (("", 0.73), ("gemm", 0.2), ("channels-last", 0.07)):
        settings(max_examples=max(3, int(total * share)))(given(depthwise_problems(forced))(check))()
    tally.assert_each_in(1 / 5, [f for f in DEPTHWISE_FEATURES if f != "channels-last"])
    tally.assert_each_in(1 / 15, ["channels-last"])

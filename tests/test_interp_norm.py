"""Normalisation and reduction kernels against onnxruntime single-node models."""

from __future__ import annotations

import numpy as np
import pytest
from feature_tally import FeatureTally
from hypothesis import given, settings
from hypothesis import strategies as st
from interp_ref import assert_close, ort_run, rand, run_top

X = rand(np.random.default_rng(0), 2, 6, 4, 5, low=-2, high=2)


def per_channel(seed: int, c: int = 6, low: float = -1.0, high: float = 1.0):
    return rand(np.random.default_rng(seed), c, low=low, high=high)


def test_batch_norm_matches_onnxruntime():
    mean, var, gamma, beta = per_channel(1), per_channel(2, low=0.1, high=2), per_channel(3), per_channel(4)
    (expected,) = ort_run("BatchNormalization", [X, gamma, beta, mean, var], {"epsilon": 1e-3})
    assert_close(run_top("top.BatchNorm", [X, mean, var, gamma, beta], {"epsilon": 1e-3})[0], expected)


def test_batch_norm_without_affine_is_gamma_one_beta_zero():
    mean, var = per_channel(1), per_channel(2, low=0.1, high=2)
    ones, zeros = np.ones(6, np.float32), np.zeros(6, np.float32)
    (expected,) = ort_run("BatchNormalization", [X, ones, zeros, mean, var])
    assert_close(run_top("top.BatchNorm", [X, mean, var, None, None])[0], expected)


@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_with_weight_statistics_prepared_matches_onnxruntime(affine):
    """The prepared kernel (scale and shift folded at init from top.Weight operands) vs onnxruntime;
    a computed statistic (None in `static`) falls back to the general kernel."""
    from interp_ref import top_attrs

    from tpudsl.interp import KERNELS

    mean, var = per_channel(1), per_channel(2, low=0.1, high=2)
    gamma, beta = (per_channel(3), per_channel(4)) if affine else (np.ones(6, np.float32), np.zeros(6, np.float32))
    (expected,) = ort_run("BatchNormalization", [X, gamma, beta, mean, var], {"epsilon": 1e-3})
    params = [mean, var, gamma, beta] if affine else [mean, var]
    attrs = top_attrs("top.BatchNorm", {"epsilon": 1e-3})
    kernel = KERNELS["top.BatchNorm"]
    run = kernel.prepare([None, *params], attrs)
    assert run is not kernel.run, "weight statistics should be folded at init"
    assert_close(run([X, *params], attrs), expected)
    computed_mean = kernel.prepare([None, None, *params[1:]], attrs)
    assert computed_mean is kernel.run
    assert_close(computed_mean([X, *params], attrs), expected)


@pytest.mark.parametrize("limit", [-1.0, 0.5])
def test_batch_norm_with_fused_relu_is_onnxruntime_then_clip(limit):
    """do_relu/relu_limit (fuse-relu's BatchNorm + Relu/Clip) applied by both kernels themselves
    (fuses_relu: the prepared run's result is not finished again), in place on their own result:
    onnxruntime's BatchNormalization clamped by numpy, and X untouched."""
    from interp_ref import top_attrs

    from tpudsl.interp import KERNELS

    mean, var, gamma, beta = per_channel(1), per_channel(2, low=0.1, high=2), per_channel(3), per_channel(4)
    (normed,) = ort_run("BatchNormalization", [X, gamma, beta, mean, var], {"epsilon": 1e-3})
    expected = np.clip(normed, 0, limit if limit > 0 else np.inf)
    assert (normed < 0).any() and (limit < 0 or (normed > limit).any())  # the clamp shows
    before = X.copy()
    attrs = {"epsilon": 1e-3, "do_relu": True, "relu_limit": limit}
    assert_close(run_top("top.BatchNorm", [X, mean, var, gamma, beta], attrs)[0], expected)  # the general kernel
    kernel = KERNELS["top.BatchNorm"]
    assert kernel.fuses_relu
    prepared = kernel.prepare([None, mean, var, gamma, beta], top_attrs("top.BatchNorm", attrs))
    assert prepared is not kernel.run
    assert_close(prepared([X, mean, var, gamma, beta], top_attrs("top.BatchNorm", attrs)), expected)
    np.testing.assert_array_equal(X, before)


def test_scale_is_per_channel_mul_add():
    s, b = per_channel(5), per_channel(6)
    (scaled,) = ort_run("Mul", [X, s.reshape(6, 1, 1)])
    (expected,) = ort_run("Add", [scaled, b.reshape(6, 1, 1)])
    assert_close(run_top("top.Scale", [X, s.reshape(1, 6, 1, 1), b.reshape(1, 6, 1, 1)])[0], expected)


@pytest.mark.parametrize("axis", [-1, 2, 1])
def test_layer_norm_matches_onnxruntime(axis):
    norm_shape = X.shape[axis % 4 :]
    w = rand(np.random.default_rng(7), *norm_shape)
    b = rand(np.random.default_rng(8), *norm_shape)
    expected = ort_run("LayerNormalization", [X, w, b], {"axis": axis, "epsilon": 1e-5}, n_outputs=3)
    got = run_top("top.LayerNorm", [X, w, b], {"axis": axis, "eps": 1e-5, "normalized_shape": list(norm_shape)})
    for mine, theirs in zip(got, expected, strict=True):  # y, and the Mean and InvStdDev outputs
        assert_close(mine, theirs)


def test_instance_norm_matches_onnxruntime():
    w, b = per_channel(9), per_channel(10)
    (expected,) = ort_run("InstanceNormalization", [X, w, b], {"epsilon": 1e-4})
    assert_close(run_top("top.InstanceNorm", [X, w, b], {"eps": 1e-4})[0], expected)


@pytest.mark.parametrize("groups", [1, 2, 3, 6])
def test_group_norm_matches_onnxruntime(groups):
    w, b = per_channel(11), per_channel(12)
    (expected,) = ort_run("GroupNormalization", [X, w, b], {"num_groups": groups, "epsilon": 1e-5}, opset=21)
    assert_close(run_top("top.GroupNorm", [X, w, b], {"num_groups": groups, "eps": 1e-5})[0], expected)


def test_rms_norm_matches_formula():
    gamma = rand(np.random.default_rng(13), 5)
    x64 = X.astype(np.float64)
    expected = x64 / np.sqrt((x64**2).mean(axis=-1, keepdims=True) + 1e-6) * gamma
    assert_close(run_top("top.RMSNorm", [X, gamma], {"eps": 1e-6})[0], expected.astype(np.float32))


@pytest.mark.parametrize("size", [1, 3, 5])  # onnxruntime accepts odd sizes only
def test_lrn_matches_onnxruntime(size):
    attrs = {"size": size, "alpha": 0.01, "beta": 0.6, "bias": 1.5}
    (expected,) = ort_run("LRN", [X], attrs)
    assert_close(run_top("top.LRN", [X], attrs)[0], expected)


REDUCE_ONNX = {
    "ReduceSum": "ReduceSum", "ReduceMean": "ReduceMean", "ReduceMax": "ReduceMax", "ReduceMin": "ReduceMin",
    "ReduceProd": "ReduceProd", "ReduceL1": "ReduceL1", "ReduceL2": "ReduceL2",
}


@pytest.mark.parametrize("keepdims", [True, False])
@pytest.mark.parametrize("axes", [[1], [2, 3], [-1, 0]])
@pytest.mark.parametrize("mode", REDUCE_ONNX)
def test_reduce_matches_onnxruntime(mode, axes, keepdims):
    x = X * 0.7 if mode == "ReduceProd" else X  # keep products of 20 values in float range
    (expected,) = ort_run(REDUCE_ONNX[mode], [x, np.array(axes, np.int64)], {"keepdims": int(keepdims)}, opset=18)
    got = run_top("top.Reduce", [x], {"mode": mode, "axes": axes, "keepdims": keepdims})[0]
    assert_close(got, expected)


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("axis", [1, -1])
def test_softmax_matches_onnxruntime(axis, log):
    (expected,) = ort_run("LogSoftmax" if log else "Softmax", [X * 5], {"axis": axis})
    assert_close(run_top("top.Softmax", [X * 5], {"axis": axis, "log": log})[0], expected)


def test_softmax_beta_scales_the_logits():
    (expected,) = ort_run("Softmax", [X * np.float32(2.5)], {"axis": 1})
    assert_close(run_top("top.Softmax", [X], {"axis": 1, "beta": 2.5})[0], expected)


@pytest.mark.parametrize("last", [False, True])
@pytest.mark.parametrize("keepdims", [True, False])
@pytest.mark.parametrize("mode,onnx_op", [("ArgMax", "ArgMax"), ("ArgMin", "ArgMin")])
def test_arg_matches_onnxruntime(mode, onnx_op, keepdims, last):
    x = np.random.default_rng(14).integers(0, 3, (3, 4, 5)).astype(np.float32)  # ties on purpose
    (expected,) = ort_run(onnx_op, [x], {"axis": 1, "keepdims": int(keepdims), "select_last_index": int(last)})
    indices, values = run_top("top.Arg", [x], {"axis": 1, "keepdims": keepdims, "mode": mode, "select_last_index": last},
                              out_dtypes=[np.dtype(np.int64), np.dtype(np.float32)])
    np.testing.assert_array_equal(indices, expected)
    picked = np.take_along_axis(x, expected if keepdims else np.expand_dims(expected, 1), axis=1)
    assert_close(values, picked if keepdims else picked.squeeze(1))


def test_cumsum_matches_onnxruntime():
    (expected,) = ort_run("CumSum", [X, np.array(2, np.int64)])
    assert_close(run_top("top.CumSum", [X], {"axis": 2})[0], expected)


def test_layer_norm_of_float16_sums_in_float32():
    """A float16 input is normalised with float32 sums (as np.mean does for float16), not in float16,
    whose step near an offset of 100 is 0.06: checked against float64 on the same float16 values."""
    x = (np.random.default_rng(3).standard_normal((2, 5, 300)) * 3 + 100).astype(np.float16)
    y, mean, rstd = run_top("top.LayerNorm", [x, None, None], {"axis": -1, "eps": 1e-5})
    x64 = x.astype(np.float64)
    want = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y, want, rtol=0, atol=1e-4)



LN_FEATURES = ("k-row blocks and leftover rows", "rows fewer than a block", "no bias", "no weight",
               "computed weight (general kernel)", "axis before the last",
               "channels-last view of a channels-first array", "view returned", "another strided layout")


LN_LAYOUTS = ("rows", "moved", "strided rows", "rows, view prepare", "moved, view prepare")


@st.composite
def layer_norm_cases(draw, layout):
    axis = -1 if layout.startswith("moved") else draw(st.sampled_from([-1, -1, -2]))
    d = draw(st.sampled_from([3, 96, 192, 700, 5000]))
    lead = (draw(st.integers(1, 2)), draw(st.integers(1, 80)))
    shape = (*lead, d) if axis == -1 else (*lead, 4, d)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.standard_normal(shape) * draw(st.sampled_from([1.0, 50.0])) + draw(st.sampled_from([0.0, 3.0]))
    norm = shape[axis % len(shape):]
    weight = None if draw(st.integers(0, 5)) == 0 else rng.standard_normal(norm).astype(np.float32)
    bias = None if draw(st.integers(0, 5)) == 0 else rng.standard_normal(norm).astype(np.float32)
    x = x.astype(np.float32)
    if layout.startswith("moved"):  # the last axis stored first from axis k on (a Permute's view)
        k = draw(st.integers(0, x.ndim - 2))
        x = np.moveaxis(np.ascontiguousarray(np.moveaxis(x, -1, k)), k, -1)
    elif layout == "strided rows":  # another strided layout: rows of a wider array
        x = np.concatenate([x, x], axis=-1)[..., : x.shape[-1]]
    as_view = layout.endswith("view prepare") or layout == "strided rows"
    return x, axis, weight, bias, draw(st.integers(0, 5)) != 0, as_view


def test_prepared_layer_norm_against_float64():
    """top.LayerNorm's prepared kernel (a top.Weight weight and bias tiled at init, the affine over
    blocks of k rows and the leftover rows one at a time) against the float64 formula: y, mean and
    1/std; computed weights, missing parameters and two normalised axes too. An input that is a
    channels-last view of a channels-first array is normalised in its own layout; with the `view`
    prepare (every reader takes strided operands) the result is the same view of a fresh array,
    else contiguous."""
    from interp_ref import top_attrs

    from tpudsl.interp import KERNELS
    from tpudsl.interp.kernel import KernelAttrs
    from tpudsl.interp.kernels_norm import TILE

    tally = FeatureTally(LN_FEATURES)

    def check(case):
        x, axis, weight, bias, static_weight, as_view = case
        attrs = KernelAttrs(dict(top_attrs("top.LayerNorm", {"axis": axis, "eps": 1e-5})), in_shapes=[x.shape])
        kernel = KERNELS["top.LayerNorm"]
        assert kernel.strided_operands(attrs) == (axis == -1)
        run = (kernel.view if as_view else kernel.prepare)([None, weight if static_weight else None, bias], attrs)
        got = run([x, weight, bias], attrs)
        moved = not x.flags.c_contiguous and x.strides[-1] != x.itemsize
        returned_view = not got[0].flags.c_contiguous
        # a computed weight takes the general kernel (contiguous); no weight at all keeps the moved path
        assert returned_view == (moved and as_view and (static_weight or weight is None))
        assert got[0].strides == (x.strides if returned_view else np.empty_like(x, order="C").strides)
        x64 = x.astype(np.float64)
        axes = tuple(range(axis % x.ndim, x.ndim))
        mean = x64.mean(axis=axes, keepdims=True)
        rstd = 1 / np.sqrt(((x64 - mean) ** 2).mean(axis=axes, keepdims=True) + 1e-5)
        normed = (x64 - mean) * rstd * (1 if weight is None else weight)
        want = normed + (0 if bias is None else bias)
        size = np.abs(normed) + np.abs(0 if bias is None else bias) + 1
        assert np.all(np.abs(got[0] - want) <= 2e-6 * size), np.max(np.abs(got[0] - want) / size)
        np.testing.assert_allclose(got[1], mean.astype(np.float32), rtol=1e-6, atol=1e-6 * np.abs(x64).max())
        np.testing.assert_allclose(got[2], rstd.astype(np.float32), rtol=1e-5)
        d = int(np.prod(x.shape[axis % x.ndim:]))
        rows, k = x.size // d, -(-TILE // d)
        tally.record({name for name, present in (
            ("k-row blocks and leftover rows", rows >= k and rows % k != 0), ("rows fewer than a block", rows < k),
            ("no bias", bias is None), ("no weight", weight is None),
            ("computed weight (general kernel)", weight is not None and not static_weight),
            ("axis before the last", axis != -1), ("channels-last view of a channels-first array", moved),
            ("view returned", returned_view),
            ("another strided layout", not x.flags.c_contiguous and not moved)) if present})

    for layout in LN_LAYOUTS:  # each layout its own fifth of the examples
        settings(max_examples=max(8, settings.default.max_examples // 15), deadline=None)(
            given(layer_norm_cases(layout))(check))()
    tally.assert_each_in(0.05)


SOFTMAX_FEATURES = ("rows recomputed with their own max", "every row on the tensor's max", "-inf entries",
                    "a fully masked row (NaN)", "beta != 1", "rows of 128 or more")


@st.composite
def softmax_cases(draw):
    d = draw(st.sampled_from([1, 3, 17, 128, 197]))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 40)), d)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.standard_normal(shape) * draw(st.sampled_from([1.0, 10.0]))
    if draw(st.booleans()):  # rows far below the tensor's max (their own shift needed), or far above
        x += rng.choice([0.0, 0.0, -30.0, -120.0, 60.0], shape[:-1] + (1,))
    if draw(st.booleans()):
        x[rng.random(shape) < 0.2] = -np.inf
    if draw(st.integers(0, 4)) == 0:
        x[0, 0, 0, :] = -np.inf
    return x.astype(np.float32), draw(st.sampled_from([1.0, 1.0, 0.5]))


def test_softmax_last_axis_against_float64():
    """Softmax over the last axis (every row shifted by the tensor's max; a row whose sum falls below
    2^-24 recomputed with its own max) against float64: relative error within 2e-6 + 2^-24 |x - m|,
    |x - m| <= |x - row max| + 24 ln 2 + ln(row length), plus 2^-125 absolutely; a fully masked row
    is NaN as before."""
    tally = FeatureTally(SOFTMAX_FEATURES)

    @settings(max_examples=max(40, settings.default.max_examples // 3), deadline=None)
    @given(softmax_cases())
    def check(case):
        x, beta = case
        with np.errstate(invalid="ignore"):
            got = run_top("top.Softmax", [x], {"axis": -1, "beta": beta})[0]
            xb = x.astype(np.float64) * beta
            row_max = xb.max(axis=-1, keepdims=True)
            e = np.exp(xb - row_max)
            want = e / e.sum(axis=-1, keepdims=True)
            # the rows the kernel keeps on the tensor's shift: those whose float64 sum clears 2^-24
            on_global = np.exp(xb - np.max(xb[np.isfinite(xb)], initial=-np.inf)).sum(axis=-1) >= 2.0**-24
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        ok = ~np.isnan(want)
        d = x.shape[-1]
        dist = np.where(np.isfinite(xb), np.abs(xb - row_max), 0) + 24 * np.log(2) + np.log(d)
        bound = (2e-6 + 2.0**-24 * dist) * want + 2.0**-125
        assert np.all(np.abs(got[ok] - want[ok]) <= bound[ok]), np.max((np.abs(got - want) / bound)[ok])
        tally.record({name for name, present in (
            ("rows recomputed with their own max", not on_global.all()), ("every row on the tensor's max", on_global.all()),
            ("-inf entries", np.isneginf(x).any()), ("a fully masked row (NaN)", np.isnan(want).any()),
            ("beta != 1", beta != 1), ("rows of 128 or more", d >= 128)) if present})

    check()
    tally.assert_each_in(0.05)

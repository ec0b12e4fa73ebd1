"""MaxPool, AvgPool and AdaptiveAvgPool kernels against onnxruntime and a loop reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from interp_ref import assert_close, ort_run, rand, run_top

POOL_CASES = {
    # name: (input shape, attrs)
    "plain": ((1, 2, 6, 6), {"kernel_shape": [2, 2], "strides": [2, 2]}),
    "overlap_pads": ((2, 3, 7, 8), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "asym_pads": ((1, 2, 7, 6), {"kernel_shape": [3, 2], "strides": [1, 2], "pads": [0, 1, 2, 0]}),
    "ceil": ((1, 2, 7, 7), {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": True}),
    "ceil_pads": ((1, 1, 8, 6), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": True}),
    "ceil_no_extra_window": ((1, 1, 5, 5), {"kernel_shape": [2, 2], "strides": [2, 2], "pads": [1, 1, 1, 1], "ceil_mode": True}),
    "global": ((2, 3, 5, 4), {"kernel_shape": [5, 4]}),
    "pool1d": ((2, 3, 11), {"kernel_shape": [3], "strides": [2], "pads": [1, 1], "ceil_mode": True}),
    "pool3d": ((1, 2, 5, 4, 6), {"kernel_shape": [2, 3, 2], "strides": [2, 1, 2], "pads": [1, 1, 0, 0, 1, 1]}),
}


def _onnx_pool_attrs(attrs, count_include_pad=None):
    out = {k: (int(v) if isinstance(v, bool) else v) for k, v in attrs.items()}
    if count_include_pad is not None:
        out["count_include_pad"] = int(count_include_pad)
    return out


@pytest.mark.parametrize("case", POOL_CASES)
def test_max_pool_matches_onnxruntime(case):
    shape, attrs = POOL_CASES[case]
    x = rand(np.random.default_rng(1), *shape)
    (expected,) = ort_run("MaxPool", [x], _onnx_pool_attrs(attrs))
    assert_close(run_top("top.MaxPool", [x], attrs)[0], expected)


@pytest.mark.parametrize("count_include_pad", [False, True])
@pytest.mark.parametrize("case", POOL_CASES)
def test_avg_pool_matches_onnxruntime(case, count_include_pad):
    shape, attrs = POOL_CASES[case]
    x = rand(np.random.default_rng(2), *shape)
    (expected,) = ort_run("AveragePool", [x], _onnx_pool_attrs(attrs, count_include_pad), opset=19)
    got = run_top("top.AvgPool", [x], {**attrs, "count_include_pad": count_include_pad})[0]
    assert_close(got, expected)


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
@pytest.mark.parametrize("op,onnx_op", [("top.MaxPool", "MaxPool"), ("top.AvgPool", "AveragePool")])
def test_pool_auto_pad_matches_onnxruntime(op, onnx_op, auto_pad):
    x = rand(np.random.default_rng(6), 1, 2, 7, 6)
    attrs = {"kernel_shape": [3, 2], "strides": [2, 2], "auto_pad": auto_pad}
    (expected,) = ort_run(onnx_op, [x], attrs)
    assert_close(run_top(op, [x], attrs)[0], expected)


def test_max_pool_fused_relu():
    x = rand(np.random.default_rng(3), 1, 2, 4, 4) - 0.5
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2]}
    (expected,) = ort_run("MaxPool", [x], attrs)
    assert_close(run_top("top.MaxPool", [x], {**attrs, "do_relu": True})[0], np.maximum(expected, 0))


def adaptive_avg_pool_loops(x: np.ndarray, out: list[int]) -> np.ndarray:
    """PyTorch's adaptive average pooling, element by element."""
    n, c, h, w = x.shape
    y = np.zeros((n, c, *out), np.float64)
    for i in range(out[0]):
        h0, h1 = (i * h) // out[0], -(-((i + 1) * h) // out[0])
        for j in range(out[1]):
            w0, w1 = (j * w) // out[1], -(-((j + 1) * w) // out[1])
            y[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    return y.astype(np.float32)


@pytest.mark.parametrize("out", [[1, 1], [3, 2], [5, 7], [2, 5]])
def test_adaptive_avg_pool_matches_loops(out):
    x = rand(np.random.default_rng(4), 2, 3, 7, 5)
    assert_close(run_top("top.AdaptiveAvgPool", [x], {"output_size": out})[0], adaptive_avg_pool_loops(x, out))


def test_adaptive_avg_pool_to_one_is_global_average():
    x = rand(np.random.default_rng(5), 2, 3, 6, 5)
    (expected,) = ort_run("GlobalAveragePool", [x])
    assert_close(run_top("top.AdaptiveAvgPool", [x], {"output_size": [1, 1]})[0], expected)


@given(
    rank=st.integers(1, 2), data=st.data(), ceil_mode=st.booleans(), count_include_pad=st.booleans(),
    is_max=st.booleans(), seed=st.integers(0, 2**16),
)
def test_pool_property(rank, data, ceil_mode, count_include_pad, is_max, seed):
    k = [data.draw(st.integers(1, 4)) for _ in range(rank)]
    s = [data.draw(st.integers(1, 3)) for _ in range(rank)]
    pads = [data.draw(st.integers(0, ki - 1)) for ki in k * 2]  # ONNX: pads smaller than the kernel
    size = [data.draw(st.integers(1, 8)) for _ in range(rank)]
    assume(all(size[i] + pads[i] + pads[i + rank] >= k[i] for i in range(rank)))
    x = rand(np.random.default_rng(seed), 2, 2, *size)
    attrs = {"kernel_shape": k, "strides": s, "pads": pads, "ceil_mode": ceil_mode}
    if is_max:
        (expected,) = ort_run("MaxPool", [x], _onnx_pool_attrs(attrs))
        got = run_top("top.MaxPool", [x], attrs)[0]
    else:
        (expected,) = ort_run("AveragePool", [x], _onnx_pool_attrs(attrs, count_include_pad), opset=19)
        got = run_top("top.AvgPool", [x], {**attrs, "count_include_pad": count_include_pad})[0]
    assert_close(got, expected)

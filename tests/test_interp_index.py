"""Index, shape-tensor and linear-algebra kernels against onnxruntime (or a float64 loop for attention)."""

from __future__ import annotations

import numpy as np
import pytest
from interp_ref import assert_close, ort_run, rand, run_top

I64 = np.int64
X = rand(np.random.default_rng(0), 2, 3, 4, 5)


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("axis", [-1, 1])
def test_topk_matches_onnxruntime(axis, largest):
    x = np.random.default_rng(1).integers(0, 4, (3, 5, 6)).astype(np.float32)  # ties on purpose
    values, indices = ort_run("TopK", [x, np.array([3], I64)], {"axis": axis, "largest": int(largest)}, n_outputs=2)
    got_values, got_indices = run_top("top.TopK", [x], {"axis": axis, "K": 3, "largest": largest})
    assert_close(got_values, values)
    np.testing.assert_array_equal(got_indices, indices)


def test_topk_k_operand_overrides_the_attribute():
    values, _ = ort_run("TopK", [X, np.array([2], I64)], {"axis": 2}, n_outputs=2)
    assert_close(run_top("top.TopK", [X, np.array([2.0], np.float32)], {"axis": 2, "K": 4})[0], values)


@pytest.mark.parametrize("axis", [0, 2, -1])
def test_scatter_elements_matches_onnxruntime(axis):
    rng = np.random.default_rng(2)
    n = X.shape[axis]
    shape = list(X.shape)
    shape[axis] = 1  # one update per line: no duplicate targets
    idx = rng.integers(-n, n, shape).astype(I64)
    updates = rand(rng, *shape)
    (expected,) = ort_run("ScatterElements", [X, idx, updates], {"axis": axis})
    assert_close(run_top("top.ScatterElements", [X, idx, updates], {"axis": axis})[0], expected)


def test_scatter_nd_matches_onnxruntime():
    idx = np.array([[1, 0], [0, -1]], I64)  # two distinct [2, 3] targets
    updates = rand(np.random.default_rng(3), 2, 4, 5)
    (expected,) = ort_run("ScatterND", [X, idx, updates])
    assert_close(run_top("top.ScatterND", [X, idx, updates])[0], expected)


@pytest.mark.parametrize("batch_dims,indices", [
    (0, [[1, 2], [0, -1]]),
    (0, [[[1], [0]]]),
    (1, [[[2, 3]], [[0, 1]]]),
])
def test_gather_nd_matches_onnxruntime(batch_dims, indices):
    idx = np.array(indices, I64)
    (expected,) = ort_run("GatherND", [X, idx], {"batch_dims": batch_dims})
    assert_close(run_top("top.GatherND", [X, idx], {"batch_dims": batch_dims})[0], expected)


@pytest.mark.parametrize("start,end", [(0, None), (1, 3), (-2, None)])
def test_shape_matches_onnxruntime(start, end):
    attrs = {"start": start} | ({} if end is None else {"end": end})
    (expected,) = ort_run("Shape", [X], attrs, opset=15)
    np.testing.assert_array_equal(run_top("top.Shape", [X], attrs)[0], expected)


def test_constant_fill_matches_constant_of_shape():
    from onnx import TensorProto, helper

    shape = np.array([2, 3, 1], I64)
    (expected,) = ort_run("ConstantOfShape", [shape], {"value": helper.make_tensor("v", TensorProto.FLOAT, [1], [2.5])})
    assert_close(run_top("top.ConstantFill", [shape], {"value": 2.5})[0], expected)


@pytest.mark.parametrize("start,limit,delta", [(0.0, 5.0, 1.0), (1.0, -2.0, -0.5), (0.5, 3.2, 0.7)])
def test_range_matches_onnxruntime(start, limit, delta):
    args = [np.array(v, np.float32) for v in (start, limit, delta)]
    (expected,) = ort_run("Range", args)
    assert_close(run_top("top.Range", args)[0], expected)


def test_pack_and_unpack_match_concat_and_split():
    rng = np.random.default_rng(4)
    xs = [rand(rng, 3, 4) for _ in range(3)]
    (expected,) = ort_run("Concat", [x.reshape(3, 1, 4) for x in xs], {"axis": 1})
    packed = run_top("top.Pack", xs, {"axis": 1, "values_count": 3})[0]
    assert_close(packed, expected)
    parts = run_top("top.Unpack", [packed], {"axis": 1})
    assert len(parts) == 3
    for part, x in zip(parts, xs):
        assert_close(part, x)


@pytest.mark.parametrize("mode,shapes", [
    ("abcd,cde->abe", [(2, 3, 4, 5), (4, 5, 6)]),
    ("ij,jk->ik", [(3, 4), (4, 2)]),
    ("abc,abd->acd", [(2, 3, 4), (2, 3, 5)]),
    ("ii->i", [(4, 4)]),
])
def test_einsum_matches_onnxruntime(mode, shapes):
    rng = np.random.default_rng(5)
    xs = [rand(rng, *s) for s in shapes]
    (expected,) = ort_run("Einsum", xs, {"equation": mode})
    assert_close(run_top("top.Einsum", xs, {"mode": mode})[0], expected)


def attention_loops(q, k, v, scale, causal, mask):
    """Scaled dot-product attention, one query row at a time, in float64."""
    out = np.zeros(q.shape[:-1] + (v.shape[-1],))
    for b in np.ndindex(q.shape[:-2]):
        for i in range(q.shape[-2]):
            logits = np.array([q[b][i].astype(np.float64) @ k[b][j] * scale for j in range(k.shape[-2])])
            if causal:
                logits[i + 1 :] = -np.inf
            if mask is not None:
                logits = logits + mask[i]
            weights = np.exp(logits - logits.max())
            out[b][i] = (weights / weights.sum()) @ v[b].astype(np.float64)
    return out.astype(np.float32)


@pytest.mark.parametrize("causal,with_mask,scale", [(False, False, 0.0), (True, False, 0.5), (False, True, 0.0)])
def test_scaled_dot_product_attention_matches_loops(causal, with_mask, scale):
    rng = np.random.default_rng(6)
    q, k, v = rand(rng, 2, 3, 4, 8), rand(rng, 2, 3, 4, 8), rand(rng, 2, 3, 4, 6)
    mask = rand(rng, 4, 4) if with_mask else None
    expected = attention_loops(q, k, v, scale or 1 / np.sqrt(8), causal, mask)
    got = run_top("top.ScaleDotProductAttention", [q, k, v, mask], {"is_causal": causal, "scale": scale})[0]
    assert_close(got, expected)

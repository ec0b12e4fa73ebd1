"""Index kernels (TopK, Scatter*, GatherND) against onnxruntime."""

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

"""Index kernels (TopK, Scatter* replacing and reducing, GatherND) against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from feature_tally import FeatureTally
from hypothesis import given, settings
from hypothesis import strategies as st
from interp_ref import assert_close, ort_run, rand, run_top

from tpudsl.dialects.top import SCATTER_REDUCTIONS

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


@st.composite
def reducing_scatter(draw):
    """A ScatterElements or ScatterND of rank 1-3 with a reduction; in about 3 of 4 draws the
    second index entry (of each line, for ScatterElements) names the first's target again, as its
    negative alias: duplicates, combined in index order. (op, attrs, inputs, has duplicates)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    op, reduction = draw(st.sampled_from(["ScatterElements", "ScatterND"])), draw(st.sampled_from(["add", "mul", "max", "min"]))
    xs = [draw(st.integers(1, 4)) for _ in range(draw(st.integers(1, 3)))]
    x, repeat = rand(rng, *xs), draw(st.integers(0, 3)) > 0
    if op == "ScatterElements":
        axis = draw(st.integers(0, len(xs) - 1))
        shape = [draw(st.integers(1, d)) for d in xs]
        shape[axis] = draw(st.integers(2, 5))
        idx = np.moveaxis(rng.integers(-xs[axis], xs[axis], shape).astype(I64), axis, 0)
        if repeat:
            idx[1] = idx[0] % xs[axis] - xs[axis]
        idx = np.moveaxis(idx, 0, axis)
        lines = np.moveaxis(idx % xs[axis], axis, -1).reshape(-1, shape[axis]).tolist()
        duplicates = any(len(set(line)) < len(line) for line in lines)
        return op, {"axis": axis, "reduction": reduction}, [x, idx, rand(rng, *shape)], duplicates
    k = draw(st.integers(1, len(xs)))
    count = draw(st.integers(2, 6))
    idx = np.stack([rng.integers(-d, d, count) for d in xs[:k]], axis=-1).astype(I64)
    if repeat:
        idx[1] = idx[0] % xs[:k] - xs[:k]
    tuples = {tuple(t) for t in (idx % np.array(xs[:k])).tolist()}
    return op, {"reduction": reduction}, [x, idx, rand(rng, len(idx), *xs[k:])], len(tuples) < len(idx)


def test_reducing_scatters_match_onnxruntime_with_duplicate_indices():
    """add, mul, max and min combine duplicate targets in index order (ONNX); F32 within the
    interpreter tests' tolerance (onnxruntime may add in its own order), max and min exactly."""
    tally = FeatureTally(("duplicate index",))

    @settings(max_examples=max(20, settings.default.max_examples // 4))
    @given(reducing_scatter())
    def prop(case):
        op, attrs, inputs, duplicates = case
        (expected,) = ort_run(op, inputs, attrs, opset=18)
        top_attrs = {**attrs, "reduction": SCATTER_REDUCTIONS[attrs["reduction"]]}
        got = run_top(f"top.{op}", inputs, top_attrs)[0]
        if attrs["reduction"] in ("max", "min"):
            np.testing.assert_array_equal(got, expected)
        else:
            assert_close(got, expected)
        tally.record({"duplicate index"} if duplicates else set())

    prop()
    tally.assert_each_in(1 / 3)


@pytest.mark.parametrize("batch_dims,indices", [
    (0, [[1, 2], [0, -1]]),
    (0, [[[1], [0]]]),
    (1, [[[2, 3]], [[0, 1]]]),
])
def test_gather_nd_matches_onnxruntime(batch_dims, indices):
    idx = np.array(indices, I64)
    (expected,) = ort_run("GatherND", [X, idx], {"batch_dims": batch_dims})
    assert_close(run_top("top.GatherND", [X, idx], {"batch_dims": batch_dims})[0], expected)

"""Data-movement kernels against onnxruntime single-node models (or index loops where ONNX has no op)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from interp_ref import assert_close, ort_run, rand, run_top

from tests.feature_tally import FeatureTally

I64 = np.int64
X = rand(np.random.default_rng(0), 2, 3, 4, 5)


def ints(*values):
    return np.array(values, I64)


@pytest.mark.parametrize("target", [(6, 20), (0, -1, 5), (-1,), (2, 3, 0, 5)])
def test_reshape_operand_matches_onnxruntime(target):
    (expected,) = ort_run("Reshape", [X, ints(*target)])
    assert_close(run_top("top.Reshape", [X, ints(*target)])[0], expected)


def test_reshape_uses_the_result_shape_then_the_shape_attribute():
    (expected,) = ort_run("Reshape", [X, ints(6, -1)])
    assert_close(run_top("top.Reshape", [X], out_shapes=[(6, 20)])[0], expected)
    assert_close(run_top("top.Reshape", [X], {"shape": [6, -1]})[0], expected)


@pytest.mark.parametrize("start,end", [(1, -1), (0, 1), (1, 2), (2, 3)])
def test_flatten_merges_dims_start_to_end(start, end):
    end_ = end % X.ndim
    shape = X.shape[:start] + (int(np.prod(X.shape[start : end_ + 1])),) + X.shape[end_ + 1 :]
    (expected,) = ort_run("Reshape", [X, ints(*shape)])
    assert_close(run_top("top.Flatten", [X], {"start_dim": start, "end_dim": end})[0], expected)


def test_squeeze_and_unsqueeze_match_onnxruntime():
    x = rand(np.random.default_rng(1), 1, 3, 1, 2)
    (squeezed,) = ort_run("Squeeze", [x, ints(0, -2)])
    assert_close(run_top("top.Squeeze", [x], {"axes": [0, -2]})[0], squeezed)
    (unsqueezed,) = ort_run("Unsqueeze", [x, ints(1, -1)])
    assert_close(run_top("top.Unsqueeze", [x], {"axes": [1, -1]})[0], unsqueezed)


@pytest.mark.parametrize("order", [[0, 2, 3, 1], [3, 2, 1, 0], [1, 0, 2, 3]])
def test_permute_matches_transpose(order):
    (expected,) = ort_run("Transpose", [X], {"perm": order})
    assert_close(run_top("top.Permute", [X], {"order": order})[0], expected)


def test_transpose_swaps_two_dims():
    (expected,) = ort_run("Transpose", [X], {"perm": [0, 3, 2, 1]})
    assert_close(run_top("top.Transpose", [X], {"dim0": 1, "dim1": 3})[0], expected)


def test_reverse_flips_one_axis():
    expected = np.stack([X[:, :, 3 - i] for i in range(4)], axis=2)
    assert_close(run_top("top.Reverse", [X], {"axis": 2})[0], expected)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat_matches_onnxruntime(axis):
    rng = np.random.default_rng(2)
    shapes = [list(X.shape) for _ in range(3)]
    for i, s in enumerate(shapes):
        s[axis] = i + 1
    xs = [rand(rng, *s) for s in shapes]
    (expected,) = ort_run("Concat", xs, {"axis": axis})
    assert_close(run_top("top.Concat", xs, {"axis": axis})[0], expected)


@pytest.mark.parametrize("sizes", [None, [1, 3, 1]])
def test_split_matches_onnxruntime(sizes):
    x = rand(np.random.default_rng(3), 2, 5, 3)
    if sizes is None:
        x = x[:, :3]
        expected = ort_run("Split", [x], {"axis": 1, "num_outputs": 3}, n_outputs=3, opset=18)
        got = run_top("top.Split", [x], {"axis": 1, "num": 3})
    else:
        expected = ort_run("Split", [x, ints(*sizes)], {"axis": 1}, n_outputs=3)
        got = run_top("top.Split", [x], {"axis": 1, "num": 3, "split_size": sizes})
    assert len(got) == 3
    for g, e in zip(got, expected):
        assert_close(g, e)


SLICES = {
    # name: (starts, ends, axes, steps)
    "basic": ([0, 1], [2, 3], [1, 2], [1, 1]),
    "negative_index": ([-3], [-1], [3], [1]),
    "clamped": ([-100, 1], [100, 1000], [0, 3], [1, 2]),
    "negative_step": ([3, -1], [0, -100], [2, 3], [-1, -2]),
    "negative_step_to_front": ([-1], [-1000], [1], [-1]),
}


@pytest.mark.parametrize("case", SLICES)
def test_slice_matches_onnxruntime(case):
    starts, ends, axes, steps = SLICES[case]
    (expected,) = ort_run("Slice", [X, ints(*starts), ints(*ends), ints(*axes), ints(*steps)])
    got = run_top("top.Slice", [X], {"offset": starts, "ends": ends, "axes": axes, "steps": steps})[0]
    assert_close(got, expected)
    # TPU-MLIR's usual form: full-rank offset/ends/steps and no axes.
    full = [[0] * 4, list(X.shape), [1] * 4]
    for ax, s, e, st in zip(axes, starts, ends, steps):
        full[0][ax], full[1][ax], full[2][ax] = s, e, st
    got = run_top("top.Slice", [X], {"offset": full[0], "ends": full[1], "steps": full[2]})[0]
    assert_close(got, expected)


def test_slice_operands_override_attributes():
    (expected,) = ort_run("Slice", [X, ints(0, 0, 1, 0), ints(2, 3, 3, 5), ints(0, 1, 2, 3), ints(1, 1, 1, 2)])
    got = run_top("top.Slice", [X, ints(0, 0, 1, 0), ints(2, 3, 3, 5), ints(1, 1, 1, 2)],
                  {"offset": [0] * 4, "ends": [1] * 4, "steps": [1] * 4})[0]
    assert_close(got, expected)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
@pytest.mark.parametrize("pads", [[0, 1, 2, 0, 0, 2, 1, 3], [0, 0, 1, 1, 0, 0, 1, 1]])
def test_pad_matches_onnxruntime(mode, pads):
    (expected,) = ort_run("Pad", [X, ints(*pads), np.array(1.5, np.float32)], {"mode": mode},
                          opset=19 if mode == "wrap" else 17)  # wrap: opset 19
    assert_close(run_top("top.Pad", [X], {"paddings": pads, "mode": mode, "val": 1.5})[0], expected)


def test_negative_pads_crop_like_onnxruntime():
    pads = [0, -1, 2, 0, 0, 1, -2, -1]
    (expected,) = ort_run("Pad", [X, ints(*pads)])
    assert_close(run_top("top.Pad", [X], {"paddings": pads})[0], expected)


def symmetric_index(i: int, n: int) -> int:
    """Index of padded position i in a length-n axis with symmetric (edge-repeating) reflection."""
    while i < 0 or i >= n:
        i = -i - 1 if i < 0 else 2 * n - i - 1
    return i


def test_symmetric_pad_matches_index_loop():
    x = rand(np.random.default_rng(4), 1, 1, 3, 4)
    pads = [0, 0, 2, 3, 0, 0, 3, 1]
    out = np.empty((1, 1, 3 + 5, 4 + 4), np.float32)
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            out[0, 0, i, j] = x[0, 0, symmetric_index(i - 2, 3), symmetric_index(j - 3, 4)]
    assert_close(run_top("top.Pad", [x], {"paddings": pads, "mode": "symmetric"})[0], out)


def test_tile_and_expand_match_onnxruntime():
    x = rand(np.random.default_rng(5), 2, 1, 3)
    (tiled,) = ort_run("Tile", [x, ints(1, 3, 2)])
    assert_close(run_top("top.Tile", [x], {"tile": [1, 3, 2]})[0], tiled)
    assert_close(run_top("top.Tile", [x, ints(1, 3, 2)])[0], tiled)
    (expanded,) = ort_run("Expand", [x, ints(4, 1, 2, 1, 3)])
    assert_close(run_top("top.Expand", [x], {"shape": [4, 1, 2, 1, 3]})[0], expanded)
    assert_close(run_top("top.Expand", [x, ints(2, 4, 3)])[0], ort_run("Expand", [x, ints(2, 4, 3)])[0])


@pytest.mark.parametrize("axis,indices", [(0, [1, 0, -1]), (1, [[0, 2], [-1, 1]]), (3, 4)])
def test_gather_matches_onnxruntime(axis, indices):
    idx = np.array(indices, I64)
    (expected,) = ort_run("Gather", [X, idx], {"axis": axis})
    # Frontends keep index tensors as float weights.
    assert_close(run_top("top.Gather", [X, idx.astype(np.float32)], {"axis": axis})[0], expected)


def test_gather_elements_matches_onnxruntime():
    idx = np.random.default_rng(6).integers(-4, 4, (2, 3, 2, 5)).astype(I64)
    (expected,) = ort_run("GatherElements", [X, idx], {"axis": 2})
    assert_close(run_top("top.GatherElements", [X, idx], {"axis": 2})[0], expected)


@pytest.mark.parametrize("crd", [False, True])
def test_depth2space_matches_onnxruntime(crd):
    x = rand(np.random.default_rng(7), 2, 12, 3, 2)
    (expected,) = ort_run("DepthToSpace", [x], {"blocksize": 2, "mode": "CRD" if crd else "DCR"})
    attrs = {"block_h": 2, "block_w": 2, "is_CRD": crd, "is_inversed": False}
    assert_close(run_top("top.Depth2Space", [x], attrs)[0], expected)


def test_inversed_depth2space_is_space_to_depth():
    x = rand(np.random.default_rng(8), 2, 3, 4, 6)
    (expected,) = ort_run("SpaceToDepth", [x], {"blocksize": 2})
    attrs = {"block_h": 2, "block_w": 2, "is_CRD": False, "is_inversed": True}
    assert_close(run_top("top.Depth2Space", [x], attrs)[0], expected)


def test_crd_space_to_depth_inverts_crd_depth_to_space():
    x = rand(np.random.default_rng(9), 1, 12, 2, 3)
    up = run_top("top.Depth2Space", [x], {"block_h": 2, "block_w": 3, "is_CRD": True, "is_inversed": False})[0]
    assert up.shape == (1, 2, 4, 9)
    back = run_top("top.Depth2Space", [up], {"block_h": 2, "block_w": 3, "is_CRD": True, "is_inversed": True})[0]
    assert_close(back, x)


def test_shuffle_channel_matches_index_loop():
    x = rand(np.random.default_rng(10), 2, 6, 2, 2)
    g, per = 2, 3
    expected = np.empty_like(x)
    for i in range(g):
        for j in range(per):
            expected[:, j * g + i] = x[:, i * per + j]
    assert_close(run_top("top.ShuffleChannel", [x], {"group": g})[0], expected)


@pytest.mark.parametrize("upper,k", [(True, 0), (False, 1), (True, -1)])
def test_trilu_matches_onnxruntime(upper, k):
    (expected,) = ort_run("Trilu", [X, np.array(k, I64)], {"upper": int(upper)})
    assert_close(run_top("top.Trilu", [X], {"upper": upper, "diagonal": k})[0], expected)


@st.composite
def permutes(draw, tiles: bool = False):
    """An array and a permutation; half of them move a trailing block of axes in front of a tall
    one (NHWC -> NCHW-like), the case kernels_shape transposes in row tiles. tiles: a batch of 2
    such transposes, the rows not a whole number of tiles (kernels_shape.TILE_ROWS, 64)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if tiles:
        rows = draw(st.integers(20, 200).filter(lambda r: r % 64))
        shape, order = (2, rows, draw(st.integers(1, min(12, rows // 4)))), [0, 2, 1]
    elif draw(st.booleans()):
        batch = draw(st.sampled_from([(), (1,), (2,), (2, 1)]))
        rows = draw(st.sampled_from([[draw(st.integers(20, 200))], [draw(st.integers(2, 20)), draw(st.integers(2, 30))]]))
        cols = draw(st.lists(st.integers(1, 12), min_size=1, max_size=2))
        shape = (*batch, *rows, *cols)
        b, r = len(batch), len(rows)
        order = [*range(b), *range(b + r, len(shape)), *range(b, b + r)]
    else:
        shape = tuple(draw(st.lists(st.integers(1, 6), min_size=1, max_size=5)))
        order = draw(st.permutations(range(len(shape))))
    return rng.standard_normal(shape).astype(np.float32), list(order)


def test_permute_against_numpy_transpose_property(monkeypatch):
    """top.Permute, per call and prepared from the input type, equals numpy's transpose copy
    whichever way it copies: tall matrices (after merging axes that stay together) in row tiles,
    with a partial last tile and a batch (the size threshold is lifted so that small arrays tile):
    all three in a fifth of the examples, by construction."""
    from tpudsl.interp import kernels_shape
    from tpudsl.interp.kernel import KernelAttrs
    from tpudsl.interp.table import KERNELS

    monkeypatch.setattr(kernels_shape, "TILED_BYTES", 0)
    tally = FeatureTally(("tiled", "partial last tile", "batch of tiles"))

    def check(case):
        x, order = case
        want = np.ascontiguousarray(np.transpose(x, order))
        attrs = KernelAttrs({"order": order}, [want.shape], [x.dtype], in_shapes=[x.shape])
        prepared = KERNELS["top.Permute"].prepare([None], attrs)
        for got in (run_top("top.Permute", [x], {"order": order})[0], prepared([x], attrs)):
            assert got.flags.c_contiguous
            np.testing.assert_array_equal(got, want)
        batch = kernels_shape._tiled(x.shape, order, x.itemsize)
        tally.record(() if batch is None else (feature for feature, present in (
            ("tiled", True), ("partial last tile", batch[1] % kernels_shape.TILE_ROWS), ("batch of tiles", batch[0] > 1))
            if present))

    examples = max(60, settings.default.max_examples // 2)
    settings(max_examples=examples - examples // 5)(given(permutes())(check))()
    settings(max_examples=examples // 5)(given(permutes(tiles=True))(check))()
    tally.assert_each_in(1 / 5)

"""Interp (resize) and Upsample kernels against onnxruntime's Resize."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from interp_ref import assert_close, ort_run, rand, run_top

COORD_MODES = ["align_corners", "half_pixel", "pytorch_half_pixel", "asymmetric"]
NEAREST_MODES = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
SIZES = [(8, 10), (3, 2), (5, 5), (1, 7), (9, 4)]  # up, down, mixed, to a single row


def ort_resize(x, mode, coord_mode, sizes=None, scales=None, nearest_mode="round_prefer_floor"):
    attrs = {"mode": mode, "coordinate_transformation_mode": coord_mode}
    if mode == "nearest":
        attrs["nearest_mode"] = nearest_mode
    size_arr = None if sizes is None else np.array([*x.shape[:2], *sizes], np.int64)
    scale_arr = None if scales is None else np.array([1, 1, *scales], np.float32)
    (y,) = ort_run("Resize", [x, None, scale_arr, size_arr], attrs, opset=19)
    return y


def top_interp(x, mode, coord_mode, out_hw, nearest_mode=None, scales=(-1.0, -1.0)):
    attrs = {"mode": mode, "coord_mode": coord_mode, "scale_h": scales[0], "scale_w": scales[1]}
    if nearest_mode is not None:
        attrs["nearest_mode"] = nearest_mode
    return run_top("top.Interp", [x, None], attrs, out_shapes=[(*x.shape[:2], *out_hw)])[0]


@pytest.mark.parametrize("sizes", SIZES)
@pytest.mark.parametrize("coord_mode", COORD_MODES)
def test_linear_matches_onnxruntime(coord_mode, sizes):
    x = rand(np.random.default_rng(1), 2, 3, 4, 5)
    assert_close(top_interp(x, "linear", coord_mode, sizes), ort_resize(x, "linear", coord_mode, sizes=sizes))


@pytest.mark.parametrize("nearest_mode", NEAREST_MODES)
@pytest.mark.parametrize("sizes", SIZES)
@pytest.mark.parametrize("coord_mode", COORD_MODES)
def test_nearest_matches_onnxruntime(coord_mode, sizes, nearest_mode):
    x = rand(np.random.default_rng(2), 1, 2, 4, 5)
    expected = ort_resize(x, "nearest", coord_mode, sizes=sizes, nearest_mode=nearest_mode)
    assert_close(top_interp(x, "nearest", coord_mode, sizes, nearest_mode), expected)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("scales", [(2.0, 2.0), (1.5, 0.5), (2.5, 3.0)])
def test_explicit_scales_match_onnxruntime_scales(mode, scales):
    # ONNX uses the given scale (not out/in) in the coordinate transform; so do scale_h/scale_w.
    x = rand(np.random.default_rng(3), 1, 2, 5, 4)
    out = tuple(int(np.floor(d * s)) for d, s in zip(x.shape[2:], scales))
    expected = ort_resize(x, mode, "half_pixel", scales=scales)
    got = top_interp(x, mode, "half_pixel", out, "round_prefer_floor" if mode == "nearest" else None, scales)
    assert_close(got, expected)


def test_target_shape_operand_gives_the_size_of_an_unranked_result():
    x = rand(np.random.default_rng(4), 1, 2, 3, 4)
    attrs = {"mode": "linear", "coord_mode": "align_corners"}
    got = run_top("top.Interp", [x, np.array([6, 7], np.int64)], attrs)[0]
    assert_close(got, ort_resize(x, "linear", "align_corners", sizes=(6, 7)))


def test_nearest_without_nearest_mode_rounds_down():
    x = rand(np.random.default_rng(5), 1, 1, 3, 3)
    expected = ort_resize(x, "nearest", "asymmetric", sizes=(7, 5), nearest_mode="floor")
    assert_close(top_interp(x, "nearest", "asymmetric", (7, 5)), expected)


@pytest.mark.parametrize("scale_h,scale_w", [(2, 2), (3, 1), (1, 2)])
def test_upsample_is_nearest_resize_by_integer_factors(scale_h, scale_w):
    x = rand(np.random.default_rng(6), 2, 3, 4, 5)
    expected = ort_resize(x, "nearest", "asymmetric", scales=(scale_h, scale_w), nearest_mode="floor")
    assert_close(run_top("top.Upsample", [x], {"scale_h": scale_h, "scale_w": scale_w})[0], expected)


@given(
    h=st.integers(1, 6), w=st.integers(1, 6), oh=st.integers(1, 12), ow=st.integers(1, 12),
    mode=st.sampled_from(["nearest", "linear"]), coord_mode=st.sampled_from(COORD_MODES),
    nearest_mode=st.sampled_from(NEAREST_MODES), seed=st.integers(0, 2**16),
)
def test_resize_property(h, w, oh, ow, mode, coord_mode, nearest_mode, seed):
    x = rand(np.random.default_rng(seed), 1, 2, h, w)
    expected = ort_resize(x, mode, coord_mode, sizes=(oh, ow), nearest_mode=nearest_mode)
    got = top_interp(x, mode, coord_mode, (oh, ow), nearest_mode if mode == "nearest" else None)
    assert_close(got, expected)

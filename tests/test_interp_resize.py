"""Interp (resize) and Upsample kernels against onnxruntime's Resize."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from interp_ref import assert_close, ort_run, rand, run_top

from tests.feature_tally import FeatureTally

COORD_MODES = ["align_corners", "half_pixel", "pytorch_half_pixel", "asymmetric"]
# Resize's coordinate modes beyond TPU-MLIR's four (top.Interp has them too)
ONNX_ONLY_COORD_MODES = ["tf_half_pixel_for_nn", "half_pixel_symmetric", "tf_crop_and_resize"]
NEAREST_MODES = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
SIZES = [(8, 10), (3, 2), (5, 5), (1, 7), (9, 4)]  # up, down, mixed, to a single row


def ort_resize(x, mode, coord_mode, sizes=None, scales=None, nearest_mode="round_prefer_floor", roi=None, **attrs):
    """onnxruntime's Resize-19 of H and W; `roi` is (h_start, w_start, h_end, w_end)."""
    attrs = {"mode": mode, "coordinate_transformation_mode": coord_mode, **attrs}
    if mode == "nearest":
        attrs["nearest_mode"] = nearest_mode
    size_arr = None if sizes is None else np.array([*x.shape[:2], *sizes], np.int64)
    scale_arr = None if scales is None else np.array([1, 1, *scales], np.float32)
    roi_arr = None if roi is None else np.array([0, 0, *roi[:2], 1, 1, *roi[2:]], np.float32)
    (y,) = ort_run("Resize", [x, roi_arr, scale_arr, size_arr], attrs, opset=19)
    return y


def top_interp(x, mode, coord_mode, out_hw, nearest_mode=None, scales=(-1.0, -1.0), **extra):
    attrs = {"mode": mode, "coord_mode": coord_mode, "scale_h": scales[0], "scale_w": scales[1], **extra}
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


@pytest.mark.parametrize("nearest_mode", ["floor", "ceil"])
def test_half_pixel_symmetric_coordinate_lands_where_onnxruntime_puts_it(nearest_mode):
    """5 -> 3: output 1's coordinate is 2 in exact arithmetic; onnxruntime's (half pixels added in
    double) is just below it, so floor reads input 1 and ceil input 2."""
    x = rand(np.random.default_rng(7), 1, 2, 5, 5)
    expected = ort_resize(x, "nearest", "half_pixel_symmetric", sizes=(3, 3), nearest_mode=nearest_mode)
    assert_close(top_interp(x, "nearest", "half_pixel_symmetric", (3, 3), nearest_mode), expected)


@pytest.mark.parametrize("scale", [1.9999995, 1.999999, 1.9999985, 2.0000005, 2.000001, 2.0000015])
@pytest.mark.parametrize("nearest_mode", ["round_prefer_floor", "round_prefer_ceil"])
def test_nearest_ties_are_within_a_tolerance_as_in_onnxruntime(scale, nearest_mode):
    """Coordinate 9 / scale is 4.5 give or take an ulp or three: onnxruntime rounds it as a tie
    within 1e-6 of 4.5, and by the nearer integer beyond."""
    x = rand(np.random.default_rng(8), 1, 1, 1, 10)
    expected = ort_resize(x, "nearest", "asymmetric", scales=(1.0, scale), nearest_mode=nearest_mode)
    got = top_interp(x, "nearest", "asymmetric", expected.shape[2:], nearest_mode, scales=(1.0, scale))
    assert_close(got, expected)


MODES = ["nearest", "linear", "cubic"]
ALL_COORD_MODES = COORD_MODES + ONNX_ONLY_COORD_MODES
FILTER_CASES = ["antialias downscale", "exclude_outside", "cubic_coeff_a -0.5", "scales", "sizes", "extrapolated"]
DOWNSCALE = dict(h=st.integers(4, 6), w=st.integers(4, 6), antialias=st.just(True), exclude_outside=st.just(True),
                 cubic_coeff_a=st.just(-0.5))
# Runs that force the filter cases, each with its (mode, coordinate mode) and the fields it forces:
# a cubic downscale with every filter option, by sizes and by scales; a crop whose ROI starts before
# the input (output position 0 is extrapolated) to a larger size (onnxruntime copies an input of the
# output's shape).
FILTER_RUNS = (
    ("cubic", "half_pixel", dict(DOWNSCALE, oh=st.integers(1, 3), ow=st.integers(1, 3), by_scales=st.just(False))),
    ("cubic", "half_pixel", dict(DOWNSCALE, by_scales=st.just(True), scales=st.tuples(
        st.sampled_from([0.25, 0.4, 0.6, 0.75]), st.sampled_from([0.3, 0.5, 0.6])))),
    ("linear", "tf_crop_and_resize", dict(h=st.integers(2, 6), w=st.integers(2, 6), oh=st.integers(7, 12),
                                          ow=st.integers(7, 12), by_scales=st.just(False), roi=st.tuples(
        *[st.sampled_from([-0.4, -0.2])] * 2, *[st.sampled_from([0.6, 1.2, 1.4])] * 2))),
)


@st.composite
def resize_cases(draw, **forced):
    """The case's fields, each drawn from its strategy or from `forced`'s."""
    fields = {
        "h": st.integers(1, 6), "w": st.integers(1, 6), "oh": st.integers(1, 12), "ow": st.integers(1, 12),
        "by_scales": st.booleans(),
        "scales": st.tuples(st.sampled_from([0.25, 0.4, 0.6, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0]),
                            st.sampled_from([0.3, 0.5, 0.6, 1.0, 1.25, 1.7, 2.0, 3.0])),
        "nearest_mode": st.sampled_from(NEAREST_MODES), "antialias": st.booleans(),
        "exclude_outside": st.booleans(), "cubic_coeff_a": st.sampled_from([-0.75, -0.5]),
        "extrapolation_value": st.sampled_from([-2.5, 3.0]),
        "roi": st.tuples(*[st.sampled_from([-0.4, -0.2, 0.3])] * 2, *[st.sampled_from([0.6, 1.2, 1.4])] * 2),
        "seed": st.integers(0, 2**16),
    }
    return {key: draw(forced.get(key, strategy)) for key, strategy in fields.items()}


def _resize_case(mode, coord_mode, case, tally):
    h, w, by_scales, antialias, roi = case["h"], case["w"], case["by_scales"], case["antialias"], case["roi"]
    x = rand(np.random.default_rng(case["seed"]), 1, 2, h, w)
    crop = coord_mode == "tf_crop_and_resize"
    scales = case["scales"] if by_scales else None
    assume(not by_scales or (h * scales[0] >= 1 and w * scales[1] >= 1))
    # onnxruntime rejects the filter options where they mean nothing
    antialias = antialias and mode != "nearest"
    exclude_outside = case["exclude_outside"] and (mode == "cubic" or antialias)
    cubic_coeff_a, extrapolation_value, nearest_mode = case["cubic_coeff_a"], case["extrapolation_value"], case["nearest_mode"]
    onnx_attrs = {"antialias": int(antialias), "exclude_outside": int(exclude_outside), "cubic_coeff_a": cubic_coeff_a,
                  "extrapolation_value": extrapolation_value}
    expected = ort_resize(x, mode, coord_mode, sizes=None if by_scales else (case["oh"], case["ow"]), scales=scales,
                          nearest_mode=nearest_mode, roi=roi if crop else None, **onnx_attrs)
    out_hw = expected.shape[2:]
    # onnxruntime copies the input when the output shape is the input's whatever the scales (the
    # frontend rejects that case: ONNX resamples it); the kernel is checked where they agree
    assume(expected.shape != x.shape or scales in (None, (1.0, 1.0)))
    # and so does antialias for an axis whose length a scale != 1 keeps
    assume(not (antialias and by_scales and any(o == i and s != 1 for o, i, s in zip(out_hw, x.shape[2:], scales))))
    top_attrs = {"antialias": antialias, "exclude_outside": exclude_outside, "cubic_coeff_a": cubic_coeff_a}
    if crop:
        top_attrs.update(roi=list(roi), extrapolation_value=extrapolation_value)
    got = top_interp(x, mode, coord_mode, out_hw, nearest_mode if mode == "nearest" else None,
                     scales or (-1.0, -1.0), **top_attrs)
    seen = [f"{mode} {coord_mode}", "scales" if by_scales else "sizes"]
    if antialias and (out_hw[0] < h or out_hw[1] < w):
        seen.append("antialias downscale")
    if exclude_outside and mode == "cubic":
        seen.append("exclude_outside")
    if cubic_coeff_a == -0.5 and mode == "cubic":
        seen.append("cubic_coeff_a -0.5")
    if crop and bool(np.any(expected == np.float32(extrapolation_value))):
        seen.append("extrapolated")
    tally.record(seen)
    assert_close(got, expected)


def test_resize_property():
    """Every mode with every coordinate transform (a property per pair, sharing the profile's
    example budget) and the filter options, against onnxruntime. Each pair and each filter case
    must be checked in a fortieth of the examples, by construction: the pairs' runs, then
    FILTER_RUNS (a thirtieth of the budget each)."""
    pairs = [(m, c) for m in MODES for c in ALL_COORD_MODES]
    tally = FeatureTally((*(f"{m} {c}" for m, c in pairs), *FILTER_CASES))
    forced = max(5, settings.default.max_examples // 30)
    per_pair = max(5, (settings.default.max_examples - forced * len(FILTER_RUNS)) // len(pairs))

    def run(mode, coord_mode, fields, examples):
        @settings(max_examples=examples)
        @given(resize_cases(**fields))
        def check(case):
            _resize_case(mode, coord_mode, case, tally)

        check()

    for mode, coord_mode, fields, examples in [(m, c, {}, per_pair) for m, c in pairs] + \
            [(*filter_run, forced) for filter_run in FILTER_RUNS]:
        run(mode, coord_mode, fields, examples)
    tally.assert_each_in(1 / 40)

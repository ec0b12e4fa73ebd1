"""Resize and Upsample in all their forms, against onnxruntime.

Forms: Upsample-7 (scales attribute), Upsample-9 (scales input), Resize-10 (scales input),
Resize-11/13 (roi, scales | sizes), Resize-18/19 (axes attribute); modes nearest, linear and
cubic (cubic_coeff_a, exclude_outside, antialias); coordinate modes align_corners, half_pixel,
pytorch_half_pixel, asymmetric, half_pixel_symmetric, tf_half_pixel_for_nn, tf_crop_and_resize
(roi, extrapolation_value); the four nearest_mode rules; up- and downscaling; the clear errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from frontend_support import check, make_model, rand
from onnx import helper as h

X = {"x": [1, 2, 5, 6]}
EMPTY = np.zeros(0, np.float32)


def f32(*v):
    return np.array(v, np.float32)


def i64(*v):
    return np.array(v, np.int64)


def resize(opset, inputs, inits, **attrs):
    node = h.make_node("Resize", list(inputs), ["y"], **attrs)
    return make_model([node], X, ["y"], inits, opset)


def run(model, ops=()):
    return check(model, {"x": rand(1, 2, 5, 6)}, op_names=ops)


COORDS = ["align_corners", "half_pixel", "pytorch_half_pixel", "asymmetric"]
NEAREST_MODES = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
SCALES = [f32(1, 1, 2, 3), f32(1, 1, 1.5, 0.5), f32(1, 1, 0.6, 1.7)]


@pytest.mark.parametrize("coord", COORDS)
@pytest.mark.parametrize("scales", SCALES, ids=["x2x3", "x1.5x0.5", "x0.6x1.7"])
def test_linear_scales(coord, scales):
    model = resize(13, ["x", "", "s"], {"s": scales}, mode="linear", coordinate_transformation_mode=coord)
    run(model, ["top.Interp"])


@pytest.mark.parametrize("coord", COORDS)
@pytest.mark.parametrize("sizes", [i64(1, 2, 7, 14), i64(1, 2, 3, 4), i64(1, 2, 12, 5)], ids=["7x14", "3x4", "12x5"])
def test_linear_sizes(coord, sizes):
    """Sizes, not scales: the factor is out/in (7/5 is not a float32 number that floors back to 7)."""
    model = resize(11, ["x", "r", "sc", "z"], {"r": EMPTY, "sc": EMPTY, "z": sizes}, mode="linear", coordinate_transformation_mode=coord)
    run(model, ["top.Interp"])


@pytest.mark.parametrize(("coord", "mode"), list(itertools.product([*COORDS, "tf_half_pixel_for_nn"], NEAREST_MODES)))
@pytest.mark.parametrize("scales", SCALES, ids=["x2x3", "x1.5x0.5", "x0.6x1.7"])
def test_nearest_scales(coord, mode, scales):
    model = resize(13, ["x", "", "s"], {"s": scales}, mode="nearest", coordinate_transformation_mode=coord, nearest_mode=mode)
    run(model)


@pytest.mark.parametrize("mode", NEAREST_MODES)
def test_nearest_sizes(mode):
    model = resize(13, ["x", "", "", "z"], {"z": i64(1, 2, 9, 4)}, mode="nearest", nearest_mode=mode)
    run(model, ["top.Interp"])


def test_nearest_integer_asymmetric_floor_is_upsample():
    model = resize(13, ["x", "", "s"], {"s": f32(1, 1, 2, 2)}, mode="nearest",
                   coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    mod = run(model, ["top.Upsample"])
    assert not any(op.name == "top.Gather" for op in mod.module.walk())


@pytest.mark.parametrize("mode", ["nearest", "linear"])
@pytest.mark.parametrize("scales", [f32(1, 1, 2, 2), f32(1, 1, 0.5, 1.5)], ids=["up", "mixed"])
def test_resize_opset10(mode, scales):
    run(resize(10, ["x", "s"], {"s": scales}, mode=mode))


@pytest.mark.parametrize("coord", ["half_pixel", "half_pixel_symmetric", "asymmetric"])
def test_resize_opset19_axes(coord):
    model = resize(19, ["x", "", "s"], {"s": f32(2.5, 0.5)}, axes=[2, 3], mode="nearest",
                   coordinate_transformation_mode=coord)
    run(model)


def test_resize_opset18_axes_sizes_linear():
    model = resize(18, ["x", "", "", "z"], {"z": i64(8, 9)}, axes=[-2, -1], mode="linear")
    run(model, ["top.Interp"])


@pytest.mark.parametrize("opset", [7, 8])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_upsample_attribute_scales(opset, mode):
    node = h.make_node("Upsample", ["x"], ["y"], scales=[1.0, 1.0, 2.0, 3.0], mode=mode)
    run(make_model([node], X, ["y"], opset=opset))


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_upsample_input_scales(mode):
    node = h.make_node("Upsample", ["x", "s"], ["y"], mode=mode)
    run(make_model([node], X, ["y"], {"s": f32(1, 1, 2, 2)}, opset=9))


@pytest.mark.parametrize(("inputs", "inits", "attrs", "message"), [
    (["x", "", "s"], {"s": f32(1, 1, 1, 1.1)}, {}, "keep the shape"),
    (["x", "r", "", "z"], {"r": f32(0, 0, 0.2, 0, 1, 1, 0.8, 1), "z": i64(1, 2, 5, 4)},
     {"coordinate_transformation_mode": "tf_crop_and_resize"}, "crops axis 2"),
    (["x", "", "s"], {"s": f32(1, 1, 0.5, 1.1)}, {"mode": "linear", "antialias": 1}, "antialias with scale"),
    (["x", "", "s"], {"s": f32(1, 2, 2, 2)}, {"mode": "cubic"}, "cubic resize of axes"),
    (["x", "", "s"], {"s": f32(1, 1, 2, 2)}, {"mode": "area"}, "mode 'area'"),
], ids=["same_shape_scale", "crop_at_scale_1", "antialias_same_length", "cubic_channels", "bad_mode"])
def test_unsupported_or_ambiguous_resize_is_a_clear_error(inputs, inits, attrs, message):
    from tpudsl.frontend.onnx_import import convert_onnx
    from tpudsl.ir.diagnostics import TpudslError

    with pytest.raises(TpudslError, match=message):
        convert_onnx(resize(18, inputs, inits, **attrs), "m")


def test_nearest_of_a_channel_axis_uses_gathers():
    model = resize(13, ["x", "", "s"], {"s": f32(1, 2, 1.5, 1)}, mode="nearest")
    mod = run(model, ["top.Gather"])
    assert not any(op.name == "top.Interp" for op in mod.module.walk())


@pytest.mark.parametrize("scales", [f32(1, 1, 0.6, 0.6), f32(1, 1, 0.6, 1.7)], ids=["x0.6", "x0.6x1.7"])
def test_resize_opset10_nearest_rounds_up_when_shrinking(scales):
    """Opset-10 nearest rounds a shrinking axis up (onnxruntime's "simple" rule): at scale 0.6
    the coordinates 1.67 and 3.33 tell ceil from floor and round (0.5's 0, 2, 4 cannot).
    x0.6 is one Interp (nearest_mode ceil), x0.6x1.7 one Gather per axis (ceil, then floor)."""
    run(resize(10, ["x", "s"], {"s": scales}, mode="nearest"), ["top.Interp"] if scales[3] < 1 else ["top.Gather"])


CUBIC_FORMS = [
    ({"s": f32(1, 1, 1.5, 0.6)}, {}),
    ({"s": f32(1, 1, 2, 2.5)}, {"cubic_coeff_a": -0.5, "exclude_outside": 1}),
    ({"z": i64(1, 2, 3, 4)}, {"antialias": 1}),
    ({"z": i64(1, 2, 2, 9)}, {"antialias": 1, "exclude_outside": 1, "cubic_coeff_a": -0.5}),
]


@pytest.mark.parametrize("coord", [*COORDS, "half_pixel_symmetric"])
@pytest.mark.parametrize(("inits", "attrs"), CUBIC_FORMS, ids=["scales", "a-0.5_exclude", "antialias", "antialias_exclude"])
def test_cubic(coord, inits, attrs):
    inputs = ["x", "", "s"] if "s" in inits else ["x", "", "", "z"]
    run(resize(18, inputs, inits, mode="cubic", coordinate_transformation_mode=coord, **attrs), ["top.Interp"])


@pytest.mark.parametrize("coord", ["half_pixel", "half_pixel_symmetric", "align_corners"])
@pytest.mark.parametrize("sizes", [i64(1, 2, 2, 3), i64(1, 2, 3, 9)], ids=["down", "mixed"])
def test_linear_antialias(coord, sizes):
    model = resize(18, ["x", "", "", "z"], {"z": sizes}, mode="linear", antialias=1, coordinate_transformation_mode=coord)
    run(model, ["top.Interp"])


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize(("roi", "axes"), [(f32(0, 0, 0.2, -0.3, 1, 1, 0.9, 1.2), None), (f32(0.9, 0.1, 0.2, 0.7), [3, 2])],
                         ids=["all_axes", "axes_3_2"])
def test_tf_crop_and_resize(mode, roi, axes):
    """The crop (roi [starts..., ends...] over `axes`), and extrapolation_value outside the input."""
    sizes = i64(1, 2, 4, 7) if axes is None else i64(7, 4)
    attrs = {"axes": axes} if axes else {}
    model = resize(18, ["x", "r", "", "z"], {"r": roi, "z": sizes}, mode=mode,
                   coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-3.5, **attrs)
    mod = run(model, ["top.Interp"])
    interp = next(op for op in mod.module.walk() if op.name == "top.Interp")
    assert interp.attributes["extrapolation_value"].value.data == -3.5


def test_nearest_interp_records_nearest_mode():
    model = resize(13, ["x", "", "s"], {"s": f32(1, 1, 1.5, 2.5)}, mode="nearest", nearest_mode="round_prefer_ceil")
    mod = run(model, ["top.Interp"])
    interp = next(op for op in mod.module.walk() if op.name == "top.Interp")
    assert interp.attributes["nearest_mode"].data == "round_prefer_ceil"
    assert interp.attributes["coord_mode"].data == "half_pixel"


@pytest.mark.parametrize("policy", ["not_larger", "not_smaller"])
@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_keep_aspect_ratio_policy(policy, mode):
    model = resize(18, ["x", "", "", "z"], {"z": i64(9, 9)}, axes=[2, 3], mode=mode, keep_aspect_ratio_policy=policy)
    run(model)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_tf_crop_and_resize_with_scales(mode):
    """With scales the output is floor(in * scale) as without a crop (onnxruntime and ONNX shape
    inference agree); the roi only moves the coordinates."""
    model = resize(13, ["x", "r", "s"], {"r": f32(0, 0, 0.2, 0.1, 1, 1, 0.9, 0.8), "s": f32(1, 1, 1.5, 2)}, mode=mode,
                   coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=1.5)
    run(model, ["top.Interp"])

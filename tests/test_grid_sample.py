"""top.GridSampler's kernel against onnxruntime's GridSample, on random grids that always hold
points outside [-1, 1] (far and just past the border), points exactly on pixel centres, and points
near the border; every mode, padding mode and align_corners of one example run in one onnxruntime session."""

from __future__ import annotations

import itertools

import numpy as np
import onnxruntime as ort
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from frontend_support import check, make_model, rand
from interp_ref import assert_close, run_top
from onnx import TensorProto, helper

from tests.feature_tally import FeatureTally
from tpudsl.dialects.opdef import loc_name
from tpudsl.frontend.onnx_import import convert_onnx
from tpudsl.frontend.ops_resize import GRID_MODES, GRID_PADDING
from tpudsl.ir.diagnostics import TpudslError

COMBOS = list(itertools.product(("bilinear", "nearest", "bicubic"), ("zeros", "border", "reflection"), (0, 1)))


def ort_grid_samples(x: np.ndarray, grid: np.ndarray) -> list[np.ndarray]:
    """GridSample (opset 16) of x at grid in every combination of COMBOS, one node each."""
    nodes = [helper.make_node("GridSample", ["x", "grid"], [f"y{i}"], mode=mode, padding_mode=padding,
                              align_corners=align) for i, (mode, padding, align) in enumerate(COMBOS)]
    graph = helper.make_graph(
        nodes, "grid",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape)),
         helper.make_tensor_value_info("grid", TensorProto.FLOAT, list(grid.shape))],
        [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None) for i in range(len(COMBOS))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    model.ir_version = 8
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x, "grid": grid})


def centres(size: int, align: int) -> np.ndarray:
    """The grid values of the pixel centres along an axis (float32, as a model would hold them)."""
    i = np.arange(size, dtype=np.float64)
    g = 2 * i / (size - 1) - 1 if align and size > 1 else (2 * i + 1) / size - 1
    return g.astype(np.float32)


@st.composite
def examples(draw):
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    h, w = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    ho, wo = draw(st.integers(1, 3)), draw(st.integers(4, 5))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, (n, c, h, w)).astype(np.float32)
    points = ho * wo
    coords = rng.uniform(-1.2, 1.2, (n, points, 2))
    # By construction: a far point (reflected more than once), a point just past the border, a
    # point near the border inside, and pixel centres (of the drawn align_corners convention).
    coords[:, 0] = np.sign(rng.uniform(-1, 1, 2)) * rng.uniform(3.1, 7, 2)
    coords[:, 1] = np.sign(rng.uniform(-1, 1, 2)) * (1 + rng.uniform(1e-6, 0.1, 2))
    coords[:, -1] = np.sign(rng.uniform(-1, 1, 2)) * (1 - rng.uniform(1e-6, 1e-3, 2))
    align = draw(st.integers(0, 1))
    centre_x, centre_y = centres(w, align), centres(h, align)
    for p in range(2, points - 1):
        if p == 2 or rng.uniform() < 0.5:
            coords[:, p] = centre_x[rng.integers(w)], centre_y[rng.integers(h)]
    grid = coords.astype(np.float32).reshape(n, ho, wo, 2)
    return x, grid, align


def test_grid_sampler_matches_onnxruntime():
    tally = FeatureTally(("zeros", "border", "reflection", "outside", "far outside", "on a pixel centre"))

    @settings(max_examples=max(8, settings.default.max_examples // 4))
    @given(examples())
    def check(example):
        x, grid, align = example
        expected = ort_grid_samples(x, grid)
        for (mode, padding, combo_align), want in zip(COMBOS, expected, strict=True):
            attrs = {"mode": GRID_MODES[mode], "padding_mode": GRID_PADDING[padding], "align_corners": bool(combo_align)}
            assert_close(run_top("top.GridSampler", [x, grid], attrs)[0], want, rtol=1e-5, atol=1e-5)
        on_centre = np.isin(grid[..., 0], centres(x.shape[3], align)) & np.isin(grid[..., 1], centres(x.shape[2], align))
        tally.record({"zeros", "border", "reflection", *(["outside"] if (np.abs(grid) > 1).any() else []),
                      *(["far outside"] if (np.abs(grid) > 3).any() else []),
                      *(["on a pixel centre"] if on_centre.any() else [])})

    check()
    tally.assert_each_in(1)


@pytest.mark.parametrize("align", [0, 1])
def test_pixel_centres_read_the_pixels(align):
    """A grid of exactly the pixel centres gives the input back (bilinear, nearest and bicubic: the
    cubic weights at a fraction 0 are 0, 1, 0, 0), a formula independent of both implementations."""
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    gy, gx = np.meshgrid(centres(4, align), centres(5, align), indexing="ij")
    grid = np.broadcast_to(np.stack([gx, gy], -1), (2, 4, 5, 2)).astype(np.float32)
    for mode in (0, 1, 2):
        got = run_top("top.GridSampler", [x, grid], {"mode": mode, "padding_mode": 0, "align_corners": bool(align)})[0]
        np.testing.assert_allclose(got, x, rtol=0, atol=1e-4)


@pytest.mark.parametrize("opset,mode", [(16, "bilinear"), (20, "linear"), (20, "nearest"), (16, "bicubic"),
                                        (20, "cubic")])
def test_grid_sample_converts(opset, mode):
    """The ONNX node through convert_onnx and the Top interpreter, against onnxruntime."""
    node = helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode="reflection", align_corners=1)
    model = make_model([node], {"x": [1, 2, 3, 4], "g": [1, 5, 2, 2]}, ["y"], opset=opset)
    mod = check(model, {"x": rand(1, 2, 3, 4), "g": rand(1, 5, 2, 2, low=-2, high=2)}, rtol=1e-5,
                op_names=("top.GridSampler",))
    (op,) = [op for op in mod.module.walk() if op.name == "top.GridSampler"]
    assert loc_name(op) == "y"


VOLUMETRIC = list(itertools.product(("linear", "nearest"), ("zeros", "border", "reflection"), (0, 1)))


def test_volumetric_grid_sampler_matches_onnxruntime():
    """5-D input, 3-D grid (x, y, z): trilinear and nearest, every padding and align_corners, on
    points past the border and far outside (reflected several times), against onnxruntime (opset 20)."""
    rng = np.random.default_rng(7)
    x = rng.uniform(-2, 2, (2, 3, 3, 4, 5)).astype(np.float32)
    coords = rng.uniform(-1.3, 1.3, (2, 2, 3, 4, 3))
    coords[:, 0, 0, 0] = [4.3, -5.1, 3.7]  # far outside along every axis
    coords[:, 1, 2, 3] = [1.02, -1.01, 1.0001]  # just past the border
    grid = coords.astype(np.float32)
    nodes = [helper.make_node("GridSample", ["x", "grid"], [f"y{i}"], mode=mode, padding_mode=padding,
                              align_corners=align) for i, (mode, padding, align) in enumerate(VOLUMETRIC)]
    model = make_model(nodes, {"x": list(x.shape), "grid": list(grid.shape)}, [f"y{i}" for i in range(len(VOLUMETRIC))],
                       opset=20)
    expected = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": x, "grid": grid})
    for (mode, padding, align), want in zip(VOLUMETRIC, expected, strict=True):
        attrs = {"mode": GRID_MODES[mode], "padding_mode": GRID_PADDING[padding], "align_corners": bool(align)}
        assert_close(run_top("top.GridSampler", [x, grid], attrs)[0], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("attrs,shape,message", [
    ({"mode": "area"}, [1, 1, 3, 3], r"GridSample 'y': mode 'area' is not supported \(bilinear/linear, nearest, "),
    ({"mode": "cubic"}, [1, 1, 2, 3, 3],
     r"mode 2 \(bicubic\) of a 5-D \(volumetric\) input is not modelled \(bilinear and nearest are\)"),
    ({}, [1, 1, 3, 3, 3, 3], "input must have rank 4 or 5, got 1x1x3x3x3x3"),
])
def test_grid_sample_refusals_name_what(attrs, shape, message):
    node = helper.make_node("GridSample", ["x", "g"], ["y"], **attrs)
    grid = [1, *[2] * (len(shape) - 2), len(shape) - 2]
    model = make_model([node], {"x": shape, "g": grid}, ["y"], opset=16 if attrs.get("mode") == "bicubic" else 20)
    with pytest.raises(TpudslError, match=message):
        convert_onnx(model, "m")

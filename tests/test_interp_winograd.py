"""Winograd F(4x4,3x3) and F(2x2,3x3) convolution paths against onnxruntime.

Winograd trades exactness for speed: F(4x4)'s transforms amplify float32 rounding, so its error
is a few 1e-6 of the output's largest magnitude (F(2x2)'s about 10x less), and elements near zero
miss an elementwise rtol. The bound here is therefore relative to the output's scale — 2e-5, about
10x the error measured — plus the whole-model criterion (cosine). A wrong transform matrix or tile
offset gives errors of the output's own size and fails it."""

import numpy as np
import pytest

from interp_ref import ort_run, rand
from tpudsl.interp import KERNELS, kernels_nn, winograd
from tpudsl.interp.kernel import KernelAttrs, run_kernel

SCALE_TOLERANCE = 2e-5


def assert_close_to_scale(got: np.ndarray, expected: np.ndarray) -> None:
    assert got.shape == expected.shape
    error = float(np.abs(got - expected).max())
    assert error <= SCALE_TOLERANCE * float(np.abs(expected).max()), error
    cosine = float(np.dot(got.ravel(), expected.ravel()) / (np.linalg.norm(got) * np.linalg.norm(expected)))
    assert cosine >= 0.999999


@pytest.mark.parametrize(
    "kind,n,ic,oc,size,pads",
    [
        ("f4", 1, 64, 8, (28, 28), [1, 1, 1, 1]),
        ("f4", 2, 64, 5, (29, 31), [1, 1, 1, 1]),  # partial tiles on both axes, batch 2
        ("f4", 1, 72, 7, (30, 27), [0, 2, 1, 0]),  # asymmetric pads
        ("f4", 1, 128, 16, (56, 56), [1, 1, 1, 1]),
        ("f2", 1, 64, 8, (14, 14), [1, 1, 1, 1]),
        ("f2", 1, 96, 6, (15, 13), [1, 0, 0, 1]),
    ],
)
def test_winograd_conv_matches_onnxruntime(kind, n, ic, oc, size, pads):
    rng = np.random.default_rng(8)
    x, w, b = rand(rng, n, ic, *size), rand(rng, oc, ic, 3, 3), rand(rng, oc)
    attrs = {"kernel_shape": [3, 3], "pads": pads}
    (expected,) = ort_run("Conv", [x, w, b], attrs)
    a = KernelAttrs(attrs, [expected.shape])
    assert kernels_nn._winograd_kind(ic, kernels_nn.Geometry.of(a, w.shape), expected.shape[2:]) == kind
    static = KERNELS["top.Conv"].prepare([None, w, b], a)  # filter transformed once, at init
    for _ in range(2):  # reused work buffers must not leak values between calls
        assert_close_to_scale(static([x, w, b], a), expected)
    assert_close_to_scale(run_kernel(KERNELS["top.Conv"], [x, w, b], a)[0], expected)  # computed filter
    # readers that copy their input (kernels_nn._conv_view): the view of a channels-last result, also
    # on an input that is such a view
    view = KERNELS["top.Conv"].view([None, w, b], a)
    for xin in (x, np.moveaxis(np.ascontiguousarray(np.moveaxis(x, 1, -1)), -1, 1)):
        got = view([xin, w, b], a)
        assert got.strides[1] == got.itemsize  # channels are the unit-stride axis
        assert_close_to_scale(got, expected)


@pytest.mark.parametrize("strip_bytes", [1, 400_000])  # strips of one tile row; of 2 rows and a last one of 1 or 2
@pytest.mark.parametrize("n,ic,oc,size,pads", [(2, 64, 5, (29, 31), [1, 1, 1, 1]), (1, 96, 6, (15, 13), [1, 0, 0, 1])])
def test_winograd_in_strips_matches_onnxruntime(monkeypatch, strip_bytes, n, ic, oc, size, pads):
    """Images whose transform work exceeds 2 * winograd.STRIP_BYTES go in strips of tile rows."""
    monkeypatch.setattr(winograd, "STRIP_BYTES", strip_bytes)
    rng = np.random.default_rng(5)
    x, w, b = rand(rng, n, ic, *size), rand(rng, oc, ic, 3, 3), rand(rng, oc)
    attrs = {"kernel_shape": [3, 3], "pads": pads}
    (expected,) = ort_run("Conv", [x, w, b], attrs)
    a = KernelAttrs(attrs, [expected.shape])
    assert kernels_nn._winograd_kind(ic, kernels_nn.Geometry.of(a, w.shape), expected.shape[2:]) is not None
    assert_close_to_scale(run_kernel(KERNELS["top.Conv"], [x, w, b], a)[0], expected)


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER", "VALID"])
def test_winograd_auto_pad_with_fused_relu(auto_pad):
    rng = np.random.default_rng(3)
    x, w, b = rand(rng, 1, 64, 33, 30), rand(rng, 9, 64, 3, 3), rand(rng, 9)
    attrs = {"kernel_shape": [3, 3], "auto_pad": auto_pad}
    (expected,) = ort_run("Conv", [x, w, b], attrs)
    a = KernelAttrs({**attrs, "do_relu": True}, [expected.shape])
    assert kernels_nn._winograd_kind(64, kernels_nn.Geometry.of(a, w.shape, x.shape), expected.shape[2:]) == "f4"
    got = run_kernel(KERNELS["top.Conv"], [x, w, b], a)[0]
    assert_close_to_scale(got, np.maximum(expected, 0))
    channels_last = KERNELS["top.Conv"].view([None, w, b], a)([x, w, b], a)  # the relu on the view, in place
    assert channels_last.strides[1] == channels_last.itemsize
    assert_close_to_scale(channels_last, np.maximum(expected, 0))

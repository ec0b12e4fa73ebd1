"""Resize geometry, per axis: output length, output index -> input coordinate (the ONNX
coordinate transforms), nearest rounding, and the taps and weights of linear and cubic
interpolation (with antialias and exclude_outside).

The frontend (Gather indices for nearest resizes Interp cannot express), the Interp shape rule
and the Interp kernel all use this module. The arithmetic is float32 in onnxruntime's order
(upsamplebase.h, upsample.cc, upsample_antialias.h), so that a coordinate that lands exactly on
a rounding tie or an integer lands on the same side as in onnxruntime.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

# The names and the output length (no numpy: the op table and the shape rule use them), here too
# for the kernels and the frontend, which use both halves.
from tpudsl.dialects.geometry.resize_modes import (  # noqa: F401
    COORD_MODES,
    CUBIC_COEFF_A,
    legacy_nearest_mode,
    output_length,
)

F32 = np.float32
HALF = F32(0.5)


def _tf_crop_and_resize(x: np.ndarray, s: F32, out: int, size: int, roi: Sequence[float]) -> np.ndarray:
    start, end = F32(roi[0]), F32(roi[1])
    if out > 1:
        return start * F32(size - 1) + x * (end - start) * F32(size - 1) / F32(out - 1)
    # onnxruntime finishes this one in double (0.5 is a double literal there)
    return np.full_like(x, F32(0.5 * float(start + end) * (size - 1)))


def _half_pixel_symmetric(x: np.ndarray, s: F32, out: int, size: int, roi: Sequence[float]) -> np.ndarray:
    adjustment = F32(out) / (s * F32(size))
    offset = F32(size) / F32(2) * (F32(1) - adjustment)
    # onnxruntime adds the half pixels in double (0.5 literals): 1.9999999, not 2, for 5 -> 3
    return (float(offset) + (x.astype(np.float64) + 0.5) / float(s) - 0.5).astype(F32)


# coordinate_transformation_mode -> input coordinate of output index x (float32), given the
# scale s, the output and input lengths and the axis' (start, end) region of interest.
COORD: dict[str, Callable[[np.ndarray, F32, int, int, Sequence[float]], np.ndarray]] = {
    "half_pixel": lambda x, s, out, size, roi: (x + HALF) / s - HALF,
    "pytorch_half_pixel": lambda x, s, out, size, roi: (x + HALF) / s - HALF if out > 1 else np.zeros_like(x),
    "asymmetric": lambda x, s, out, size, roi: x / s,
    "align_corners": lambda x, s, out, size, roi: x * F32(size - 1) / F32(out - 1) if out > 1 else np.zeros_like(x),
    "tf_half_pixel_for_nn": lambda x, s, out, size, roi: (x + HALF) / s,
    "half_pixel_symmetric": _half_pixel_symmetric,
    "tf_crop_and_resize": _tf_crop_and_resize,
}
FULL_ROI = (0.0, 1.0)


def source_coords(in_len: int, out_len: int, scale: float, coord: str, roi: Sequence[float] = FULL_ROI) -> np.ndarray:
    """Input coordinate of each output index along one axis. A scale of exactly 1 maps every
    index to itself whatever the mode (onnxruntime's shortcut; the frontend rejects the one case
    where ONNX says otherwise, a tf_crop_and_resize crop at scale 1)."""
    x = np.arange(out_len, dtype=F32)
    if F32(scale) == 1:
        return x
    return np.asarray(COORD[coord](x, F32(scale), out_len, in_len, roi), dtype=F32)


def outside(coords: np.ndarray, in_len: int) -> np.ndarray:
    """Output indices whose coordinate falls outside the input: tf_crop_and_resize writes
    extrapolation_value there."""
    return (coords < 0) | (coords > in_len - 1)


# onnxruntime calls a coordinate within 1e-6 of k + 0.5 a tie (measured against onnxruntime
# 1.32: 4.5000010 rounds as a tie, 4.5000014 does not): float32 coordinates such as 1/1.9999995
# miss the exact half by an ulp or two.
TIE_TOLERANCE = 1e-6


def _tie(c: np.ndarray) -> np.ndarray:
    return np.abs(c - (np.floor(c) + HALF)) < TIE_TOLERANCE


# nearest_mode -> integer input index of a coordinate (round_prefer_*: which way ties go).
ROUND: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "round_prefer_floor": lambda c: np.where(_tie(c), np.floor(c), np.round(c)),
    "round_prefer_ceil": lambda c: np.where(_tie(c), np.ceil(c), np.round(c)),
    "floor": np.floor,
    "ceil": np.ceil,
}


def nearest_indices(coords: np.ndarray, in_len: int, nearest_mode: str) -> np.ndarray:
    """The input index nearest resize copies to each output index."""
    return np.clip(ROUND[nearest_mode](coords), 0, in_len - 1).astype(np.int64)


def _linear_filter(t: np.ndarray, a: float) -> np.ndarray:
    t = np.abs(t)
    return np.where(t < 1, 1 - t, 0.0)


def _cubic_filter(t: np.ndarray, a: float) -> np.ndarray:
    """Keys' cubic convolution kernel with coefficient a."""
    t = np.abs(t)
    near = ((a + 2) * t - (a + 3)) * t * t + 1
    far = (((t - 5) * t + 8) * t - 4) * a
    return np.where(t < 1, near, np.where(t < 2, far, 0.0))


# mode -> (kernel, its support in input pixels at scale 1)
FILTERS: dict[str, tuple[Callable[[np.ndarray, float], np.ndarray], int]] = {
    "linear": (_linear_filter, 2),
    "cubic": (_cubic_filter, 4),
}


def linear_sources(coords: np.ndarray, in_len: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Linear interpolation as the Tpu Interp's F16/BF16 arithmetic and the backend's BdcInterp
    define it: per output, input indices i0, i1 and the float32 weight f of i1 (the coordinate in
    float32, clamped into the input); the output is x[i0] where f == 0, else
    x[i0] * (1 - f) + x[i1] * f."""
    c = np.clip(coords.astype(F32), 0, in_len - 1)
    i0 = np.floor(c).astype(np.int64)
    return i0, np.minimum(i0 + 1, in_len - 1), (c - i0).astype(F32)


def interpolation_taps(
    coords: np.ndarray, in_len: int, scale: float, mode: str, *,
    cubic_coeff_a: float = CUBIC_COEFF_A, exclude_outside: bool = False, antialias: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Linear or cubic interpolation along one axis as (index, weight), both [out, taps]:
    output i = sum_k input[index[i, k]] * weight[i, k].

    The kernel is centred on each coordinate; antialiased downscaling stretches it by 1/scale
    (a low-pass filter, as Pillow). Taps outside the input are dropped and the rest renormalised
    (exclude_outside), or read the edge pixel (their index is clamped). Plain linear clamps the
    coordinate into the input first, as onnxruntime does."""
    kernel, support_size = FILTERS[mode]
    stretch = antialias and scale < 1
    support = F32(support_size / 2 / scale) if stretch else F32(support_size / 2)
    inv = float(F32(scale)) if stretch else 1.0
    if mode == "linear" and not antialias:
        coords = np.clip(coords, 0, in_len - 1)
    center = coords + HALF
    first = np.floor(center - support + HALF).astype(np.int64)
    count = 2 * math.ceil(support) + 1  # the widest window any output index needs
    last = np.minimum(np.floor(center + support + HALF).astype(np.int64), first + count)
    index = first[:, None] + np.arange(count)[None, :]
    weight = kernel((index - coords.astype(np.float64)[:, None]) * inv, cubic_coeff_a)
    weight = np.where(index < last[:, None], weight, 0.0)
    if exclude_outside:
        weight = np.where((index >= 0) & (index < in_len), weight, 0.0)
    total = weight.sum(axis=1, keepdims=True)
    weight = weight / np.where(total == 0, 1.0, total)
    used = np.any(weight != 0, axis=0)  # the window is one wider than most outputs need
    return np.clip(index[:, used], 0, in_len - 1), weight[:, used].astype(F32)

"""Resize's names and lengths: the modes the op table accepts and the output length the shape rule
computes. Plain Python, apart from `resize.py` (numpy), so that the dialects load without numpy:
a tpuc-opt run that only parses, infers shapes and prints does not pay its import (~0.08 s of CPU,
docs/testing.md)."""

from __future__ import annotations

import math

# ONNX Resize's default for mode=cubic (-0.75 is PyTorch's value, -0.5 Keys' and TensorFlow's), and
# GridSample's fixed bicubic coefficient (interp/kernels_grid.py, the cmodel's engine_grid.py).
CUBIC_COEFF_A = -0.75
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
INTERP_MODES = ("nearest", "linear", "cubic")
# coordinate_transformation_mode: the keys of resize.COORD, which computes each.
COORD_MODES = ("half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners", "tf_half_pixel_for_nn",
               "half_pixel_symmetric", "tf_crop_and_resize")


def output_length(in_len: int, scale: float) -> int:
    """ONNX: floor(in * scale) when the scale, not the size, is given."""
    return math.floor(in_len * scale)


def legacy_nearest_mode(scale: float) -> str:
    """Upsample and opset-10 Resize round by onnxruntime's "simple" rule: truncate when
    enlarging, round up when shrinking (their coordinates are asymmetric, never negative, so
    truncating is flooring)."""
    return "ceil" if scale < 1 else "floor"

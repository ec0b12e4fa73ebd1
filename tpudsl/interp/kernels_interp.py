"""Resizing: Interp (nearest / linear / cubic with every ONNX coordinate mode) and Upsample.

Resizing is separable: each spatial axis maps output index -> input coordinate (coord_mode),
then nearest takes one input row (nearest_mode rounding) and linear/cubic blend a few
(`tpudsl/dialects/geometry/resize.py` has that geometry, shared with the frontend and the shape
rule). tf_crop_and_resize writes extrapolation_value wherever some axis' coordinate falls
outside the input, so that mask is applied once, after every axis."""

from __future__ import annotations

import numpy as np

from tpudsl.dialects.geometry import resize as geo
from tpudsl.interp.kernel import Array, Inputs, Kernel, KernelAttrs

F32 = np.float32

# Without a nearest_mode attribute, nearest Interp rounds down like PyTorch's 'nearest'.
DEFAULT_NEAREST_MODE = "floor"


def _blend(x: Array, axis: int, index: Array, weight: Array) -> Array:
    """sum_k x[index[:, k]] * weight[:, k] along `axis`."""
    bcast = (slice(None),) + (None,) * (x.ndim - axis - 1)
    if index.shape[1] == 0:  # exclude_outside left no tap: the output is 0
        return np.zeros((*x.shape[:axis], index.shape[0], *x.shape[axis + 1 :]), F32)
    y = np.take(x, index[:, 0], axis=axis) * weight[:, 0][bcast]
    for k in range(1, index.shape[1]):
        y += np.take(x, index[:, k], axis=axis) * weight[:, k][bcast]
    return y


def _spatial_scales(a: KernelAttrs, rank: int) -> list[float]:
    """Per spatial axis: scale_h/scale_w for the last two axes (-1: derive from the sizes)."""
    scales = [-1.0] * rank
    if rank >= 1:
        scales[-1] = a.get("scale_w", -1.0)
    if rank >= 2:
        scales[-2] = a.get("scale_h", -1.0)
    return scales


def _out_sizes(ins: Inputs, a: KernelAttrs, x: Array, scales: list[float]) -> tuple[int, ...]:
    if a.out_shape() is not None:
        return tuple(a.out_shape()[2:])
    if len(ins) > 1 and ins[1] is not None:
        target = [int(v) for v in np.asarray(ins[1]).reshape(-1)]
        return tuple(target[-(x.ndim - 2) :])
    return tuple(geo.output_length(d, s) for d, s in zip(x.shape[2:], scales, strict=True))


def _rois(a: KernelAttrs, spatial: int) -> list[tuple[float, float]]:
    """(start, end) per spatial axis from `roi` = [starts..., ends...] (tf_crop_and_resize)."""
    roi = list(a.get("roi", None) or [0.0] * spatial + [1.0] * spatial)
    return [(roi[i], roi[spatial + i]) for i in range(spatial)]


def _interp(ins: Inputs, a: KernelAttrs) -> Array:
    x = ins[0]
    scales = _spatial_scales(a, x.ndim - 2)
    outs = _out_sizes(ins, a, x, scales)
    coord_mode = a.get("coord_mode", "half_pixel")
    mode = a.get("mode", "nearest")
    nearest_mode = a.get("nearest_mode", DEFAULT_NEAREST_MODE)
    rois = _rois(a, x.ndim - 2)
    y = x
    masks = []
    for axis, (out, scale, roi) in enumerate(zip(outs, scales, rois, strict=True), start=2):
        size = y.shape[axis]
        if out == size and scale in (-1.0, 1.0):
            continue
        scale = scale if scale > 0 else out / size
        coords = geo.source_coords(size, out, scale, coord_mode, roi)
        if coord_mode == "tf_crop_and_resize":
            masks.append((axis, geo.outside(coords, size)))
        if mode == "nearest":
            y = np.take(y, geo.nearest_indices(coords, size, nearest_mode), axis=axis)
        else:
            index, weight = geo.interpolation_taps(
                coords, size, scale, mode, cubic_coeff_a=a.get("cubic_coeff_a", geo.CUBIC_COEFF_A),
                exclude_outside=a.get("exclude_outside", False), antialias=a.get("antialias", False))
            y = _blend(y, axis, index, weight)
    y = np.array(y, dtype=F32)
    for axis, mask in masks:
        y[(slice(None),) * axis + (mask,)] = F32(a.get("extrapolation_value", 0.0))
    return y


def _upsample(ins: Inputs, a: KernelAttrs) -> Array:
    x = ins[0]
    y = np.repeat(x, int(a.get("scale_h", 1)), axis=-2)
    return np.repeat(y, int(a.get("scale_w", 1)), axis=-1)


KERNELS: dict[str, Kernel] = {
    "top.Interp": Kernel(_interp),
    "top.Upsample": Kernel(_upsample),
}

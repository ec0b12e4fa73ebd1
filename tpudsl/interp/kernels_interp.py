"""Resizing: Interp (nearest / linear with every ONNX coordinate mode) and Upsample.

Resizing is separable: each spatial axis maps output index -> input coordinate (coord_mode),
then nearest takes one input row (nearest_mode rounding) and linear blends two. The arithmetic is
float32 in onnxruntime's operation order, so rounding ties land on the same side."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tpudsl.interp.kernel import Array, Inputs, Kernel, KernelAttrs

F32 = np.float32

# coord_mode -> input coordinate of output index x (float32), given scale, output and input length.
COORD: dict[str, Callable[[Array, F32, int, int], Array]] = {
    "half_pixel": lambda x, s, out, size: (x + F32(0.5)) / s - F32(0.5),
    "pytorch_half_pixel": lambda x, s, out, size: (
        (x + F32(0.5)) / s - F32(0.5) if out > 1 else np.zeros_like(x)
    ),
    "asymmetric": lambda x, s, out, size: x / s,
    "align_corners": lambda x, s, out, size: (
        x * F32(size - 1) / F32(out - 1) if out > 1 else np.zeros_like(x)
    ),
}

# nearest_mode -> integer input index of a coordinate. round_prefer_floor: ties go down.
NEAREST: dict[str, Callable[[Array], Array]] = {
    "round_prefer_floor": lambda c: np.where(c == np.floor(c) + F32(0.5), np.floor(c), np.round(c)),
    "round_prefer_ceil": lambda c: np.where(c == np.floor(c) + F32(0.5), np.ceil(c), np.round(c)),
    "floor": np.floor,
    "ceil": np.ceil,
}

# Without a nearest_mode attribute, nearest Interp rounds down like PyTorch's 'nearest'.
DEFAULT_NEAREST_MODE = "floor"


def _coords(out: int, size: int, scale: float, coord_mode: str) -> Array:
    return COORD[coord_mode](np.arange(out, dtype=F32), F32(scale), out, size).astype(F32)


def _nearest_axis(x: Array, axis: int, out: int, scale: float, coord_mode: str, nearest_mode: str) -> Array:
    size = x.shape[axis]
    idx = NEAREST[nearest_mode](_coords(out, size, scale, coord_mode))
    return np.take(x, np.clip(idx, 0, size - 1).astype(np.int64), axis=axis)


def _linear_axis(x: Array, axis: int, out: int, scale: float, coord_mode: str) -> Array:
    size = x.shape[axis]
    c = np.clip(_coords(out, size, scale, coord_mode), 0, size - 1)
    i0 = np.minimum(c.astype(np.int64), size - 1)
    i1 = np.minimum(i0 + 1, size - 1)
    frac = (c - i0).astype(F32)
    bcast = (slice(None),) + (None,) * (x.ndim - axis - 1)
    return np.take(x, i0, axis=axis) * (1 - frac)[bcast] + np.take(x, i1, axis=axis) * frac[bcast]


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
    return tuple(int(np.floor(d * s)) for d, s in zip(x.shape[2:], scales, strict=True))


def _interp(ins: Inputs, a: KernelAttrs) -> Array:
    x = ins[0]
    scales = _spatial_scales(a, x.ndim - 2)
    outs = _out_sizes(ins, a, x, scales)
    coord_mode = a.get("coord_mode", "half_pixel")
    nearest = a.get("mode", "nearest") == "nearest"
    nearest_mode = a.get("nearest_mode", DEFAULT_NEAREST_MODE)
    y = x
    for axis, (out, scale) in enumerate(zip(outs, scales, strict=True), start=2):
        if out == y.shape[axis] and scale in (-1.0, 1.0):
            continue
        scale = scale if scale > 0 else out / y.shape[axis]
        if nearest:
            y = _nearest_axis(y, axis, out, scale, coord_mode, nearest_mode)
        else:
            y = _linear_axis(y, axis, out, scale, coord_mode)
    return np.ascontiguousarray(y, dtype=F32)


def _upsample(ins: Inputs, a: KernelAttrs) -> Array:
    x = ins[0]
    y = np.repeat(x, int(a.get("scale_h", 1)), axis=-2)
    return np.repeat(y, int(a.get("scale_w", 1)), axis=-1)


KERNELS: dict[str, Kernel] = {
    "top.Interp": Kernel(_interp),
    "top.Upsample": Kernel(_upsample),
}

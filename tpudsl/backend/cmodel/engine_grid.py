"""The cmodel's handler of record 98 (BdcGridSample), merged into engine.HANDLERS, written again from
the record's description (docs/bmodel.md), not from the interpreter's kernel: each axis gives every
grid point its taps as (index, weight) pairs, the padding applied to the pairs, and the result is
the sum over the tap pairs of weight_y * weight_x * pixel (record 101: weight_z * weight_y *
weight_x over the tap triples), in float32."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable

import numpy as np

from tpudsl.backend import isa
from tpudsl.backend.cmodel.memory import Fault, Memory, contiguous
from tpudsl.dialects.geometry.resize_modes import CUBIC_COEFF_A

F32 = np.float32
_NEAREST, _BILINEAR, _BICUBIC = (isa.GRID_SAMPLE_MODES[k] for k in ("nearest", "bilinear", "bicubic"))
_A = F32(CUBIC_COEFF_A)  # the cubic convolution kernel's free coefficient (Keys), ONNX's choice
_ZEROS, _BORDER, _REFLECTION = (isa.GRID_PADDINGS[k] for k in ("zeros", "border", "reflection"))


def _mirror(v: np.ndarray, low: F32, high: F32) -> np.ndarray:
    """v folded into [low, high]: a walk back and forth of period 2 (high - low)."""
    span = high - low
    if span == 0:
        return np.full_like(v, low)
    t = np.mod(v - low, F32(2) * span)
    return low + np.where(t > span, F32(2) * span - t, t)


def _keys(d: np.ndarray) -> np.ndarray:
    """Keys' cubic convolution kernel at the distances d between a point and a tap (0 from 2 on)."""
    d = np.abs(d)
    inner = ((_A + F32(2)) * d - (_A + F32(3))) * d * d + F32(1)
    outer = ((_A * d - F32(5) * _A) * d + F32(8) * _A) * d - F32(4) * _A
    return np.where(d <= 1, inner, np.where(d < 2, outer, F32(0))).astype(F32)


def _taps(g: np.ndarray, size: int, r: isa.BdcGridSample) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (index into the axis, weight) pairs of grid values `g` along an axis of `size` pixels."""
    if r.align:
        v = (g + F32(1)) / F32(2) * F32(size - 1)
        low, high = F32(0), F32(size - 1)
    else:
        v = ((g + F32(1)) * F32(size) - F32(1)) / F32(2)
        low, high = F32(-0.5), F32(size - 0.5)
    if r.mode == _NEAREST:
        v = np.rint(v)
    if r.mode != _BICUBIC:  # bicubic moves no point: only its taps are padded, below
        beyond = (v < low) | (v > high)
        if r.padding == _BORDER:
            v = np.where(beyond, np.clip(v, F32(0), F32(size - 1)), v)
        elif r.padding == _REFLECTION:
            v = np.where(beyond, _mirror(v, low, high), v)
    if r.mode == _NEAREST:
        pairs = [(v, np.ones_like(v))]
    elif r.mode == _BICUBIC:
        first = np.floor(v)
        pairs = [(first + F32(k), _keys(v - (first + F32(k)))) for k in (-1, 0, 1, 2)]
    else:
        first = np.floor(v)
        pairs = [(first, first + F32(1) - v), (first + F32(1), v - first)]
    placed = []
    for index, weight in pairs:
        if r.padding == _ZEROS:
            weight = np.where((index >= 0) & (index < size), weight, F32(0))
        elif r.padding == _REFLECTION:
            index = _mirror(index, low, high)
        placed.append((np.clip(np.nan_to_num(index), 0, size - 1).astype(np.int64), weight))
    return placed


def _grid_sample(m: Memory, r: isa.BdcGridSample) -> None:
    volumetric = isinstance(r, isa.BdcGridSample3D)
    if r.mode not in (_NEAREST, _BILINEAR, _BICUBIC) or r.padding not in (_ZEROS, _BORDER, _REFLECTION) or r.align > 1 \
            or (volumetric and r.mode == _BICUBIC):
        raise Fault(f"{type(r).__name__}: mode {r.mode}, padding {r.padding}, align {r.align} are not modelled")
    sizes, out_sizes = ((r.d, r.h, r.w), (r.od, r.oh, r.ow)) if volumetric else ((r.h, r.w), (r.oh, r.ow))
    f32 = np.dtype(F32)
    x_shape, grid_shape = (r.n, r.c, *sizes), (r.n, *out_sizes, len(sizes))
    x = m.read_global(r.src, contiguous(x_shape), x_shape, f32)
    grid = m.read_global(r.grid, contiguous(grid_shape), grid_shape, f32)
    batch = np.arange(r.n).reshape(-1, *[1] * len(out_sizes))
    out = np.zeros((r.n, *out_sizes, r.c), F32)
    channels_last = np.moveaxis(x, 1, -1)
    # each axis's taps, outermost (z, or y) first; a point's coordinates are listed x first
    axes = [_taps(grid[..., len(sizes) - 1 - k], size, r) for k, size in enumerate(sizes)]
    for taps in itertools.product(*axes):
        weight = functools.reduce(np.multiply, [w for _, w in taps])  # wy * wx, or wz * wy * wx
        out += weight[..., None] * channels_last[(batch, *(i for i, _ in taps))]  # (n, *out, c)
    m.write_global(r.dst, contiguous((r.n, r.c, *out_sizes)), np.moveaxis(out, -1, 1))


HANDLERS: dict[type[isa.Record], Callable] = {isa.BdcGridSample: _grid_sample, isa.BdcGridSample3D: _grid_sample}

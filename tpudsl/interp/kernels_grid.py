"""GridSampler: input [N, C, H, W] read at the points of grid [N, Ho, Wo, 2] (volumetric: input
[N, C, D, H, W], grid [N, Do, Ho, Wo, 3], points (x, y, z); bilinear becomes trilinear, nearest
reads one tap, bicubic is 2-D only), as ONNX GridSample (opset 16/20) defines it, written from its
spec in float32.

A grid point (x, y) in [-1, 1] (x along W, y along H) maps to pixel coordinates by
`align_corners`: -1 and 1 are the centres of the corner pixels, ((g + 1) / 2) * (size - 1), or
their outer edges, ((g + 1) * size - 1) / 2. A point past the bounds (the corner centres, or the
edges) is then moved by `padding_mode`: zeros leaves it (its taps outside the input read 0),
border clamps it to [0, size - 1], reflection mirrors it at the bounds until it is inside.
Nearest reads the tap at the coordinate rounded half to even (before the move); bilinear weighs
its 4 neighbours, bicubic its 4x4 (cubic convolution, A = -0.75, onnxruntime's CPU kernel and its
float32 order of operations), and a neighbour index outside the input is clamped (border), mirrored
(reflection) or reads 0 (zeros). Bicubic moves no point, as onnxruntime: only its 16 taps are
padded (ONNX's reference clamps the point first, which differs for border padding near the edge:
docs/frontend.md)."""

from __future__ import annotations

import numpy as np

from tpudsl.dialects.geometry.resize_modes import CUBIC_COEFF_A
from tpudsl.interp.kernel import Array, Inputs, Kernel, KernelAttrs

F32 = np.float32
BILINEAR, NEAREST, BICUBIC = 0, 1, 2
CUBIC_A = F32(CUBIC_COEFF_A)  # ONNX's (and torch's) cubic convolution coefficient
ZEROS, BORDER, REFLECTION = 0, 1, 2


def pixel_coordinate(g: Array, size: int, align_corners: bool) -> Array:
    """Grid values in [-1, 1] -> pixel coordinates along an axis of `size` pixels."""
    if align_corners:
        return (g + F32(1)) / F32(2) * F32(size - 1)
    return ((g + F32(1)) * F32(size) - F32(1)) / F32(2)


def bounds(size: int, align_corners: bool) -> tuple[F32, F32]:
    """Where reflection mirrors: the corner pixels' centres, or their outer edges."""
    return (F32(0), F32(size - 1)) if align_corners else (F32(-0.5), F32(size - 0.5))


def reflect(v: Array, low: F32, high: F32) -> Array:
    """`v` mirrored at `low` and `high` until it lies between them."""
    span = high - low
    if span == 0:
        return np.full_like(v, low)
    below = v < low
    past = np.where(below, low - v, v - high)
    turns = np.floor(past / span)
    rest = past - turns * span
    even = turns % 2 == 0
    from_above = np.where(even, high - rest, low + rest)
    return np.where(below, np.where(even, low + rest, high - rest), np.where(v > high, from_above, v))


def moved_inside(v: Array, size: int, padding: int, align_corners: bool) -> Array:
    """A coordinate past the bounds, clamped (border) or mirrored (reflection); zeros: as it is."""
    low, high = bounds(size, align_corners)
    outside = (v < low) | (v > high)
    if padding == BORDER:
        return np.where(outside, np.clip(v, F32(0), F32(size - 1)), v)
    if padding == REFLECTION:
        return np.where(outside, reflect(v, low, high), v)
    return v


def tap_index(i: Array, size: int, padding: int, align_corners: bool) -> tuple[Array, Array]:
    """An integer-valued tap coordinate -> (an index inside the input, 1 where it reads a pixel, 0
    where zeros padding reads 0)."""
    if padding == ZEROS:
        inside = (i >= 0) & (i <= size - 1)
        return np.clip(np.nan_to_num(i), 0, size - 1).astype(np.int64), inside.astype(F32)
    if padding == REFLECTION:
        i = reflect(i, *bounds(size, align_corners))
    return np.clip(np.nan_to_num(i), 0, size - 1).astype(np.int64), np.ones(i.shape, F32)


def cubic_coefficients(t: Array) -> list[Array]:
    """The 4 weights of the taps at floor - 1 .. floor + 2 for a fraction `t` in [0, 1), in
    float32 and in onnxruntime's order of operations (GsGetCubicCoeffs)."""
    a, one, two = CUBIC_A, F32(1), F32(2)

    def inner(d: Array) -> Array:  # Keys' polynomial for a tap at distance d <= 1
        return ((a + two) * d - (a + F32(3))) * d * d + one

    def outer(d: Array) -> Array:  # and for 1 < d < 2
        return ((a * d - F32(5) * a) * d + F32(8) * a) * d - F32(4) * a

    return [outer(t + one), inner(t), inner(one - t), outer(two - t)]


def _grid_sampler(ins: Inputs, a: KernelAttrs) -> Array:
    x, grid = ins
    n, c, *sizes = x.shape  # the spatial sizes outermost first: (H, W), or (D, H, W) (volumetric)
    mode, padding, align = a["mode"], a["padding_mode"], bool(a.get("align_corners", False))
    # the grid's last axis lists a point's coordinates innermost first: x (along W), y, z
    coords = [pixel_coordinate(grid[..., len(sizes) - 1 - k].astype(F32), size, align) for k, size in enumerate(sizes)]
    if mode == NEAREST:
        coords = [np.rint(g) for g in coords]
    if mode != BICUBIC:  # onnxruntime moves no bicubic point: each of its 16 taps is padded
        coords = [moved_inside(g, size, padding, align) for g, size in zip(coords, sizes, strict=True)]
    planes = x.astype(F32).reshape(n, c, -1)
    strides = [int(np.prod(sizes[k + 1:], dtype=np.int64)) for k in range(len(sizes))]

    def tap(axes: list[tuple[Array, Array]]) -> Array:
        """input at the tap_index of every axis (outermost first) of every grid point: [N, C, *out]."""
        flat = sum(index * stride for (index, _), stride in zip(axes, strides, strict=True)).reshape(n, 1, -1)
        inside = np.prod([reads for _, reads in axes], axis=0)
        values = np.take_along_axis(planes, np.broadcast_to(flat, (n, c, flat.shape[-1])), axis=2)
        return values.reshape(n, c, *axes[0][0].shape[1:]) * inside[:, None]

    if mode == NEAREST:
        return tap([tap_index(g, size, padding, align) for g, size in zip(coords, sizes, strict=True)])
    if mode == BICUBIC:  # 2-D only (the shape rule refuses a volumetric one)
        (gy, gx), (h, w) = coords, sizes
        x0, y0 = np.floor(gx) - F32(1), np.floor(gy) - F32(1)
        wx = [c[:, None] for c in cubic_coefficients(gx - x0 - F32(1))]
        wy = [c[:, None] for c in cubic_coefficients(gy - y0 - F32(1))]
        cols = [tap_index(x0 + F32(k), w, padding, align) for k in range(4)]
        rows = []
        for k in range(4):  # each row of 4 taps along x, then the rows along y, summed left to right
            row = tap_index(y0 + F32(k), h, padding, align)
            rows.append(wx[0] * tap([row, cols[0]]) + wx[1] * tap([row, cols[1]]) + wx[2] * tap([row, cols[2]])
                        + wx[3] * tap([row, cols[3]]))
        return (wy[0] * rows[0] + wy[1] * rows[1] + wy[2] * rows[2] + wy[3] * rows[3]).astype(F32)

    def linear(k: int, outer: list[tuple[Array, Array]]) -> Array:
        """(Bi/tri)linear along axes k.. at the taps `outer` of the axes before: the low tap's value
        times (high - g) plus the high tap's times (g - low), the innermost axis (x) first."""
        if k == len(sizes):
            return tap(outer)
        low = np.floor(coords[k])
        high = low + F32(1)
        to_low, to_high = (high - coords[k])[:, None], (coords[k] - low)[:, None]
        return (to_low * linear(k + 1, [*outer, tap_index(low, sizes[k], padding, align)])
                + to_high * linear(k + 1, [*outer, tap_index(high, sizes[k], padding, align)]))

    return linear(0, []).astype(F32)


KERNELS = {"top.GridSampler": Kernel(_grid_sampler)}

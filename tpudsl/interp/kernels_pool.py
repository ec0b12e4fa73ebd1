"""Pooling (1-D/2-D/3-D): MaxPool, AvgPool with ceil_mode/count_include_pad, AdaptiveAvgPool.

Windows are reduced axis by axis (whole-array max/add steps, no per-window loop). The average's
divisor is the same window sum over a 0/1 mask of the positions that count, which gives ONNX's
rule for free: count_include_pad counts explicit pads but never the ceil_mode overhang."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tpudsl.interp.kernel import Array, Inputs, Kernel, KernelAttrs
from tpudsl.interp.windows import Geometry, pad_spatial


def pool_out_size(size: int, k: int, s: int, pb: int, pe: int, ceil_mode: bool) -> int:
    span = size + pb + pe - k
    out = -(-span // s) + 1 if ceil_mode else span // s + 1
    if ceil_mode and (out - 1) * s >= size + pb:
        out -= 1  # the last window would start in the end padding
    return out


def _geometry(x: Array, a: KernelAttrs) -> tuple[Geometry, tuple[int, ...], tuple[int, ...]]:
    """Pool geometry, output size, and the ceil_mode overhang past the end pads."""
    g = Geometry.of(a, (0, 0, *x.shape[2:]), x.shape)  # a global pool may omit kernel_shape
    ceil_mode = bool(a.get("ceil_mode", False))
    out = tuple(
        pool_out_size(size, k, s, pb, pe, ceil_mode)
        for size, k, s, pb, pe in zip(x.shape[2:], g.kernel, g.strides, g.pads_begin, g.pads_end, strict=True)
    )
    overhang = tuple(
        max(0, (o - 1) * s + k - (size + pb + pe))
        for o, s, k, size, pb, pe in zip(out, g.strides, g.kernel, x.shape[2:], g.pads_begin, g.pads_end, strict=True)
    )
    return g, out, overhang


def _along(y: Array, axis: int, sl: slice) -> Array:
    index = [slice(None)] * y.ndim
    index[axis] = sl
    return y[tuple(index)]


def _window_reduce(xp: Array, g: Geometry, out: tuple[int, ...], combine: Callable[[Array, Array], Array]) -> Array:
    """Reduce every window with `combine` (max or add), one spatial axis at a time: windows are
    boxes, so k_h + k_w whole-array steps do what k_h * k_w taps would."""
    y = xp
    for axis, (k, s, d, o) in enumerate(zip(g.kernel, g.strides, g.dilations, out, strict=True), start=xp.ndim - len(out)):
        acc = _along(y, axis, slice(0, (o - 1) * s + 1, s)).copy()
        for t in range(1, k):
            combine(acc, _along(y, axis, slice(t * d, t * d + (o - 1) * s + 1, s)), out=acc)
        y = acc
    return y


def _max_pool(ins: Inputs, a: KernelAttrs) -> Array:
    x = ins[0]
    g, out, overhang = _geometry(x, a)
    end = tuple(pe + o for pe, o in zip(g.pads_end, overhang, strict=True))
    return _window_reduce(pad_spatial(x, g.pads_begin, end, -np.inf), g, out, np.maximum)


def _avg_pool(ins: Inputs, a: KernelAttrs) -> Array:
    x = ins[0]
    g, out, overhang = _geometry(x, a)
    if g.kernel == x.shape[2:] and not any(g.pads_begin) and not any(g.pads_end) and all(o == 1 for o in out):
        # Global average pool (SE blocks, classifier heads): one contiguous mean per channel.
        return x.reshape(*x.shape[:2], -1).mean(axis=-1).reshape(*x.shape[:2], *out)
    end = tuple(pe + o for pe, o in zip(g.pads_end, overhang, strict=True))
    total = _window_reduce(pad_spatial(x, g.pads_begin, end), g, out, np.add)
    counted = np.ones((1, 1, *x.shape[2:]), np.float32)
    if a.get("count_include_pad", False):
        counted = pad_spatial(counted, g.pads_begin, g.pads_end, 1.0)
        counted = pad_spatial(counted, (0,) * len(out), overhang)
    else:
        counted = pad_spatial(counted, g.pads_begin, end)
    return total / _window_reduce(counted, g, out, np.add)


def _adaptive_matrix(size: int, out: int) -> Array:
    """Row i averages input [floor(i*size/out), ceil((i+1)*size/out)) (PyTorch's adaptive windows)."""
    m = np.zeros((out, size), np.float32)
    for i in range(out):
        start, end = (i * size) // out, -(-((i + 1) * size) // out)
        m[i, start:end] = 1.0 / (end - start)
    return m


def _adaptive_avg_pool(ins: Inputs, a: KernelAttrs) -> Array:
    y = ins[0]
    for axis, out in enumerate(a["output_size"], start=2):
        y = np.moveaxis(np.tensordot(y, _adaptive_matrix(y.shape[axis], out), axes=([axis], [1])), -1, axis)
    return np.ascontiguousarray(y)


KERNELS: dict[str, Kernel] = {
    "top.MaxPool": Kernel(_max_pool),
    "top.AvgPool": Kernel(_avg_pool),
    "top.AdaptiveAvgPool": Kernel(_adaptive_avg_pool),
}

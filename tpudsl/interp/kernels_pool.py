"""Pooling (1-D/2-D/3-D): MaxPool (also with its mask), AvgPool with ceil_mode/count_include_pad
and dilations, AdaptiveAvgPool.

Windows are reduced axis by axis (whole-array max/add steps, no per-window loop). The average's
divisor is the same window sum over a 0/1 mask of the positions that count, which gives ONNX's
rule for free: count_include_pad counts explicit pads but never the ceil_mode overhang."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tpudsl.dialects.geometry.window import ceil_mode_pads, ceil_overhang, window_out_size
from tpudsl.interp.kernel import Array, Inputs, Kernel, KernelAttrs
from tpudsl.interp.windows import Geometry, pad_spatial, tap_slices


def _geometry(shape: tuple[int, ...], a: KernelAttrs) -> tuple[Geometry, tuple[int, ...], tuple[int, ...]]:
    """Pool geometry, output size, and the ceil_mode overhang past the end pads."""
    g = Geometry.of(a, (0, 0, *shape[2:]), shape)  # a global pool may omit kernel_shape
    ceil_mode = bool(a.get("ceil_mode", False))
    axes = list(zip(shape[2:], g.kernel, g.strides, g.dilations, g.pads_begin, g.pads_end, strict=True))
    out = tuple(window_out_size(*axis, ceil_mode) for axis in axes)
    overhang = tuple(ceil_overhang(*axis, o) for axis, o in zip(axes, out, strict=True))
    return g, out, overhang


def as_ceil_mode(a: KernelAttrs) -> dict[str, object]:
    """tpu.Pool2D's ceil_overhang (end pads holding a ceil overhang, never counted) as the
    attributes of the ceil-mode pool it stands for, whose divisor is Top's; {} without one."""
    overhang = a.get("ceil_overhang")
    return {"pads": ceil_mode_pads(a["pads"], overhang), "ceil_mode": True} if overhang else {}


def _keepdims(y: Array, a: KernelAttrs) -> Array:
    """keepdims=false (a global pool, the shape rule checked it) drops the spatial dims."""
    return y if a.get("keepdims", True) else y.reshape(y.shape[:2])


def _along(y: Array, axis: int, sl: slice) -> Array:
    index = [slice(None)] * y.ndim
    index[axis] = sl
    return y[tuple(index)]


def _window_reduce(xp: Array, g: Geometry, out: tuple[int, ...], combine: Callable[[Array, Array], Array]) -> Array:
    """Reduce every window of the padded xp with `combine` (AvgPool's add), one spatial axis at a
    time: windows are boxes, so k_h + k_w whole-array steps do what k_h * k_w taps would."""
    y = xp
    for axis, (k, s, d, o) in enumerate(zip(g.kernel, g.strides, g.dilations, out, strict=True), start=xp.ndim - len(out)):
        acc = _along(y, axis, slice(0, (o - 1) * s + 1, s)).copy()
        for t in range(1, k):
            combine(acc, _along(y, axis, slice(t * d, t * d + (o - 1) * s + 1, s)), out=acc)
        y = acc
    return y


def _phases(y: Array) -> tuple[Array, Array]:
    """The even and odd elements of the last axis of a C-contiguous float32 y of even length, each
    a fresh contiguous array: every (even, odd) pair is read as one uint64 and cast to uint32,
    which keeps its low half (the even element on a little-endian machine), and the odd elements
    are the same cast of the pairs read 4 bytes further on. Casts are contiguous SIMD loops: 2x a
    stride-2 copy, 4x a stride-2 np.maximum (the float32 bits are moved, never converted)."""
    flat = y.reshape(-1)
    half = flat.size // 2
    even = np.empty(y.shape[:-1] + (y.shape[-1] // 2,), np.float32)
    odd = np.empty_like(even)
    np.copyto(even.reshape(-1).view(np.uint32), flat.view(np.uint64), casting="unsafe")
    shifted = np.ndarray((half - 1,), np.uint64, buffer=flat, offset=4)  # pairs (odd m, even m + 1)
    odd_flat = odd.reshape(-1)
    np.copyto(odd_flat[:-1].view(np.uint32), shifted, casting="unsafe")
    odd_flat[-1] = flat[-1]
    return even, odd


def _fast_last_axis(y: Array, k: int, s: int, d: int, pb: int, o: int) -> bool:
    """Whether `_max_last_axis` takes this last axis: float32, contiguous, stride 2 on an even
    length, no dilation, at most 3 taps, the first tap's pad inside the window, and one output
    per input pair (ResNet's and DenseNet's 3x3/2 pad 1 pools, 2x2/2)."""
    size = y.shape[-1]
    return (s == 2 and d == 1 and k <= 3 and pb < k and size % 2 == 0 and o == size // 2 and y.size > 0
            and y.dtype == np.float32 and y.flags.c_contiguous and np.little_endian)


def _max_last_axis(y: Array, k: int, pb: int) -> Array:
    """The stride-2 window max along the last axis (`_fast_last_axis`), from its even and odd
    phases with unit-stride maxima over the whole flat array: tap t reads phase (t - pb) % 2 at
    output j + (t - pb) // 2. A shift of one crosses into the neighbouring row at that row's
    first (shift -1) or last (shift +1) output, so those columns are recomputed afterwards from
    the input positions inside the row (np.maximum throughout: a NaN in a window wins, as on the
    general path)."""
    half = y.shape[-1] // 2
    phase = _phases(y)
    acc = phase[0]  # tap t = pb: phase 0, shift 0; the others accumulate into a fresh array (the
    out = np.empty_like(acc)  # phases are read again by later taps, so never written)
    src_acc, flat = acc.reshape(-1), out.reshape(-1)
    border = set()
    for t in range(k):
        if t == pb:
            continue
        q, shift = (t - pb) % 2, (t - pb) // 2
        src = phase[q].reshape(-1)
        if shift == 0:
            np.maximum(src_acc, src, out=flat)
        elif shift < 0:
            np.maximum(src_acc[1:], src[:-1], out=flat[1:])
            flat[0] = src_acc[0]
            border.add(0)
        else:
            np.maximum(src_acc[:-1], src[1:], out=flat[:-1])
            flat[-1] = src_acc[-1]
            border.add(half - 1)
        acc, src_acc = out, flat
    for j in border:
        cols = [p for p in range(2 * j - pb, 2 * j - pb + k) if 0 <= p < y.shape[-1]]
        column = acc[..., j]
        column[...] = y[..., cols[0]]
        for p in cols[1:]:
            np.maximum(column, y[..., p], out=column)
    return acc


def _max_reduce(x: Array, g: Geometry, out: tuple[int, ...]) -> Array:
    """The max of every window, one spatial axis at a time, straight from x: tap t of an axis
    updates the outputs j whose input j * s + t * d - pad lies inside x. Pads (and the ceil_mode
    overhang) are -inf, which never wins, so they need no padded copy (a third of the kernel at
    ResNet-18's 64x112x112 pool). A window with no input position stays -inf."""
    y = x
    for axis, (size, k, s, d, pb, o) in enumerate(
            zip(x.shape[2:], g.kernel, g.strides, g.dilations, g.pads_begin, out, strict=True), start=2):
        if axis == x.ndim - 1 and _fast_last_axis(y, k, s, d, pb, o):
            y = _max_last_axis(y, k, pb)
            continue
        spans = []  # (first output, end output, first input) of each tap that reads inside x
        for t in range(k):
            off = t * d - pb
            lo, hi = max(0, -(off // s)), min(o, (size - 1 - off) // s + 1)
            if lo < hi:
                spans.append((lo, hi, lo * s + off))
        whole = next((span for span in spans if span[:2] == (0, o)), None)
        if whole is None:
            acc = np.full(y.shape[:axis] + (o,) + y.shape[axis + 1:], -np.inf, y.dtype)
        else:
            spans.remove(whole)
            acc = _along(y, axis, slice(whole[2], whole[2] + (o - 1) * s + 1, s)).copy()
        for lo, hi, first in spans:
            part = _along(acc, axis, slice(lo, hi))
            np.maximum(part, _along(y, axis, slice(first, first + (hi - lo - 1) * s + 1, s)), out=part)
        y = acc
    return y


def _max_pool(ins: Inputs, a: KernelAttrs) -> Array:
    x = ins[0]
    g, out, _ = _geometry(x.shape, a)
    return _keepdims(_max_reduce(x, g, out), a)


def _max_pool_with_mask(ins: Inputs, a: KernelAttrs) -> list[Array]:
    """MaxPool and, per output, the row-major index of its maximum in the input's (n, c) plane
    (TPU-MLIR's mask). Taps are visited in row-major window order and only a strictly larger
    value wins, so a tie keeps the first position (as TPU-MLIR and onnxruntime do); pads
    (index -1) never win over an input value."""
    x = ins[0]
    g, out, overhang = _geometry(x.shape, a)
    end = tuple(pe + o for pe, o in zip(g.pads_end, overhang, strict=True))
    xp = pad_spatial(x, g.pads_begin, end, -np.inf)
    plane = np.arange(int(np.prod(x.shape[2:])), dtype=np.int64).reshape(1, 1, *x.shape[2:])
    index = pad_spatial(plane, g.pads_begin, end, -1)
    best = np.full((*x.shape[:2], *out), -np.inf, x.dtype)
    mask = np.full((1, 1, *out), -1, np.int64)
    for tap in g.taps():
        where = (slice(None), slice(None), *tap_slices(tap, g, out))
        value, at = xp[where], index[where]
        wins = (value > best) | ((mask < 0) & (at >= 0))
        best = np.where(wins, value, best)
        mask = np.where(wins, at, mask)
    return [_keepdims(best, a), _keepdims(np.broadcast_to(mask, best.shape), a)]


def _is_global(g: Geometry, shape: tuple[int, ...], out: tuple[int, ...]) -> bool:
    return g.kernel == shape[2:] and not any(g.pads_begin) and not any(g.pads_end) and all(o == 1 for o in out)


def _global_weights(shape: tuple[int, ...], dtype: np.dtype) -> Array:
    """1/size per spatial position: the GEMV's vector."""
    size = int(np.prod(shape[2:]))
    return np.full(size, 1 / size if size else np.nan, np.result_type(dtype, np.float32))


def _avg_pool(ins: Inputs, a: KernelAttrs) -> Array:
    x = ins[0]
    g, out, overhang = _geometry(x.shape, a)
    if _is_global(g, x.shape, out):
        # Global average pool (SE blocks, classifier heads): one GEMV of the channel rows with
        # 1/size (BLAS); numpy's mean over each row measured 3.5-6x slower at 7x7-112x112.
        weights = _global_weights(x.shape, x.dtype)
        mean = x.reshape(-1, weights.size) @ weights
        return _keepdims(mean.reshape(*x.shape[:2], *out), a)
    end = tuple(pe + o for pe, o in zip(g.pads_end, overhang, strict=True))
    total = _window_reduce(pad_spatial(x, g.pads_begin, end), g, out, np.add)
    counted = np.ones((1, 1, *x.shape[2:]), np.float32)
    if a.get("count_include_pad", False):
        counted = pad_spatial(counted, g.pads_begin, g.pads_end, 1.0)
        counted = pad_spatial(counted, (0,) * len(out), overhang)
    else:
        counted = pad_spatial(counted, g.pads_begin, end)
    return _keepdims(total / _window_reduce(counted, g, out, np.add), a)


def _avg_pool_prepare(static: Inputs, a: KernelAttrs) -> Callable[[Inputs, KernelAttrs], Array]:
    """A global pool of a float32 input of static shape (squeeze-excite: 8 of EfficientNet's
    pools, 7x7-112x112) decided and its vector made once: the geometry was most of a small one's
    call. Any other pool, or another input shape or dtype, goes through `_avg_pool`."""
    shape = a.in_shapes[0] if a.in_shapes else None
    if shape is None or len(shape) < 3:
        return _avg_pool
    g, out, _ = _geometry(shape, a)
    if not _is_global(g, shape, out):
        return _avg_pool
    weights = _global_weights(shape, np.dtype(np.float32))
    result = (*shape[:2], *out) if a.get("keepdims", True) else shape[:2]

    def run(ins: Inputs, a: KernelAttrs) -> Array:
        x = ins[0]
        if x.shape != shape or x.dtype != weights.dtype:
            return _avg_pool(ins, a)
        return (x.reshape(-1, weights.size) @ weights).reshape(result)

    return run


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
    "top.MaxPoolWithMask": Kernel(_max_pool_with_mask),
    "top.AvgPool": Kernel(_avg_pool, _avg_pool_prepare),
    "top.AdaptiveAvgPool": Kernel(_adaptive_avg_pool),
}

"""Normalisation kernels: BatchNorm, Scale, LayerNorm, InstanceNorm, GroupNorm, RMSNorm, LRN.

All share one step, `_normalize` over some axes; they differ in which axes and where the affine
parameters broadcast. Per-channel parameters ([C] or [1,C,1,...]) are put on axis 1."""

from __future__ import annotations

import functools
import math

import numpy as np

from tpudsl.dialects.geometry.batch_norm import batch_norm_affine
from tpudsl.interp.kernel import Array, Inputs, Kernel, KernelAttrs, apply_fused_relu


def _per_channel(p: Array | None, ndim: int) -> Array | None:
    return None if p is None else p.reshape((1, -1) + (1,) * (ndim - 2))


def _affine(y: Array, scale: Array | None, bias: Array | None, fresh: bool = False) -> Array:
    """y * scale + bias; y itself is written only when `fresh` (the kernel's own array, whose
    shape and float dtype the result keeps): it may be the kernel's input. The product is
    written when bias keeps its shape."""
    if fresh and all(p is None or np.broadcast_shapes(y.shape, p.shape) == y.shape for p in (scale, bias)):
        if scale is not None:
            y *= scale
        if bias is not None:
            y += bias
        return y
    if scale is not None:
        y = y * scale
        if bias is not None and np.broadcast_shapes(y.shape, bias.shape) == y.shape:
            y += bias
            return y
    if bias is not None:
        y = y + bias
    return y


@functools.lru_cache(maxsize=64)
def _mean_vector(d: int, dtype: np.dtype) -> Array:
    """[1/d] * d (read-only, shared): a row mean as one GEMV."""
    ones = np.full(d, dtype.type(1 / d) if d else dtype.type(np.nan), dtype)
    ones.flags.writeable = False
    return ones


def _normalize(x: Array, axis: int, eps: float) -> tuple[Array, Array, Array]:
    """(x - mean) / sqrt(var + eps) over the axes from `axis` on, with the mean and the
    reciprocal std (keepdims shapes).

    The float32 mean is off by up to an ulp of the mean, which is many standard deviations in a
    row of large mean and small spread (mean/std 1e5: 5e-5 of the output, and the cmodel's own
    float32 mean is off differently). The centred rows are exact there (x - mean of nearby
    values), so their mean, the first mean's error, is taken out: the corrected two-pass
    algorithm (Bjorck), which the cmodel's BdcLayerNorm/BdcGroupNorm also use; its pass over the
    data only where it changes the result.

    As rows of a 2-D view: the means are one GEMV (BLAS) and the squared deviations one einsum
    row dot, where numpy's mean over short trailing rows (LayerNorm's 96-768 channels) pays a
    reduction loop per row and a squared temporary: 1.15-1.47x faster LayerNorms (ConvNeXt, ViT)."""
    d = math.prod(x.shape[axis:])
    rows = x.reshape(-1, d)
    dtype = np.result_type(x.dtype, np.float32)  # float16 sums in float32, as np.mean does
    ones = _mean_vector(d, dtype)
    mean = rows @ ones
    centered = rows - mean[:, None]
    shift = centered @ ones  # the first mean's error: the mean of the centred rows
    rstd = _scale_rows(centered, mean, shift, np.einsum("ij,ij->i", centered, centered), (slice(None), None), eps)
    kept = x.shape[:axis] + (1,) * (x.ndim - axis)
    return centered.reshape(x.shape), mean.reshape(kept), rstd.reshape(kept)


def _scale_rows(centered: Array, mean: Array, shift: Array, sumsq: Array, across: tuple, eps: float) -> Array:
    """The steps after the sums, shared by both layouts: the mean corrected by `shift`, 1/std from
    the sums of squared deviations `sumsq` (in place), `centered` normalised in place; `across`
    indexes a statistic to broadcast it over the normalised axis. Returns 1/std."""
    d = centered.size // max(mean.size, 1)
    dtype = sumsq.dtype
    inv = dtype.type(1 / d) if d else dtype.type(np.nan)  # the mean of nothing is NaN, as np.mean
    mean += shift
    # mean((c - shift)^2) = mean(c^2) - shift^2: the variance without correcting c first (shift^2 is
    # far below mean(c^2) unless the row is constant; clamped at 0 for rounding there).
    rstd = sumsq
    rstd *= inv
    rstd -= shift * shift
    np.maximum(rstd, 0, out=rstd)
    rstd += dtype.type(eps)
    np.sqrt(rstd, out=rstd)
    np.reciprocal(rstd, out=rstd)
    centered *= rstd[across]  # fresh: normalised in place
    shift *= rstd
    # The correction in normalised units; a pass over the rows only where it reaches 2^-24 (half
    # an ulp of 1): rows of large mean and small spread. Elsewhere it is below the result's own
    # rounding, and skipping a column-broadcast pass is 15-20% of the kernel.
    if not np.max(np.abs(shift), initial=0.0) < 2.0**-24:
        centered -= shift[across]
    return rstd


def _moved_last(x: Array) -> int | None:
    """k when x is np.moveaxis(c, k, -1) of a C-contiguous c, i.e. a Permute's channels-last view of
    a channels-first array (ConvNeXt's NCHW -> NHWC before its LayerNorms), else None."""
    if x.ndim < 2 or x.flags.c_contiguous:
        return None
    k = sum(1 for s in x.strides[:-1] if s > x.strides[-1])
    return k if np.moveaxis(x, -1, k).flags.c_contiguous else None


def _normalize_moved(x: Array, k: int, eps: float) -> tuple[Array, Array, Array]:
    """`_normalize` over the last axis of x = np.moveaxis(c, k, -1), computed on c as [A, C, B]
    (C the normalised axis): the column sums are GEMVs of a ones vector with each [C, B] matrix
    and the broadcasts of the statistics run along contiguous rows of B. It costs what the
    channels-last copy and `_normalize` on its rows did (0.97-1.13x at ConvNeXt's 96x56x56 to
    768x7x7); the gain is the copies its callers no longer make. Returns the normalised [A, C, B]
    array (fresh, C-contiguous) with the mean and 1/std in x's keepdims shape."""
    c = np.moveaxis(x, -1, k)
    x3 = c.reshape(math.prod(c.shape[:k]), c.shape[k], -1)
    dtype = np.result_type(x.dtype, np.float32)
    ones = _mean_vector(x3.shape[1], dtype)
    mean = ones @ x3  # [A, B]
    centered = x3 - mean[:, None, :]
    shift = ones @ centered
    across = (slice(None), None, slice(None))
    rstd = _scale_rows(centered, mean, shift, np.einsum("acb,acb->ab", centered, centered), across, eps)
    kept = x.shape[:-1] + (1,)
    return centered, mean.reshape(kept), rstd.reshape(kept)


def _batch_norm(ins: Inputs, a: KernelAttrs) -> Array:
    x, mean, var = ins[:3]
    gamma, beta = (list(ins[3:]) + [None, None])[:2]
    n = x.ndim
    y = (x - _per_channel(mean, n)) / np.sqrt(_per_channel(var, n) + np.float32(a.get("epsilon", 1e-5)))
    y = _affine(y, _per_channel(gamma, n), _per_channel(beta, n))
    return apply_fused_relu(y, a, out=y)  # y is fresh: never x itself


def _batch_norm_prepare(static: Inputs, a: KernelAttrs):
    """Constant statistics and affine (DenseNet's pre-activation BNs, which canonicalize cannot
    fold into a conv): one scale and one shift per channel (geometry/batch_norm.py), two passes
    over x instead of four."""
    if any(p is None for p in static[1:]):  # a computed (or `none`) parameter: the general kernel
        return _batch_norm
    mean, var = static[1], static[2]
    gamma, beta = (list(static[3:]) + [None, None])[:2]
    scale, shift = (v.astype(np.float32) for v in batch_norm_affine(mean, var, gamma, beta, a.get("epsilon", 1e-5)))

    def run(ins: Inputs, a: KernelAttrs) -> Array:
        x = ins[0]
        y = x * _per_channel(scale, x.ndim)
        y += _per_channel(shift, x.ndim)
        return apply_fused_relu(y, a, out=y)  # a fused Relu (DenseNet's BN -> Relu): no third array

    return run


def _scale(ins: Inputs, a: KernelAttrs) -> Array:
    x, scale, bias = ins
    return _affine(x, _per_channel(scale, x.ndim), _per_channel(bias, x.ndim))


def _layer_norm(ins: Inputs, a: KernelAttrs) -> list[Array]:
    x, weight, bias = (list(ins) + [None, None])[:3]
    axis = a.get("axis", -1) % x.ndim
    y, mean, rstd = _normalize(x, axis, a.get("eps", 1e-5))
    return [_affine(y, weight, bias, fresh=True), mean, rstd]


# A broadcast of a [d] vector along rows of d runs numpy's inner loop once per row (~15 ns each): for
# ConvNeXt's 3136 rows of 96 that is more than the data (56 us against 35 for a contiguous multiply).
# Repeated k times, the vector covers k rows at once, and the inner loop runs over >= TILE elements.
TILE = 4096


def _tiled(p: Array | None) -> Array | None:
    return None if p is None else np.tile(p.reshape(-1), -(-TILE // max(p.size, 1)))


def _layer_norm_prepare(static: Inputs, a: KernelAttrs, view: bool = False):
    """A `top.Weight` weight and bias (or none) tiled at init; the affine then runs over blocks of rows
    (1.1x a ConvNeXt LayerNorm, the same float operations). A computed weight or bias, or one that is
    not the normalised axes' shape, takes the general kernel. An input that is a channels-last view
    of a channels-first array (`_moved_last`: a Permute's view, see `_takes_views`) is normalised in
    its own layout; the result is the same view of the normalised array when `view` (every reader
    takes strided operands: MatMul, Permute), else a contiguous copy of it."""
    weight, bias = (list(static[1:]) + [None, None])[:2]
    tiled = {1: _tiled(weight), 2: _tiled(bias)}
    columns = {i: None if p is None else p.reshape(-1, 1) for i, p in ((1, weight), (2, bias))}

    def run(ins: Inputs, a: KernelAttrs) -> list[Array]:
        x = ins[0]
        axis = a.get("axis", -1) % x.ndim
        params = (list(ins[1:]) + [None, None])[:2]
        if x.size == 0 or any(p is not None and (tiled[i] is None or p.shape != x.shape[axis:])
                              for i, p in enumerate(params, 1)):
            # (a strided x, which `_takes_views` let through, copied first: the result is contiguous)
            return _layer_norm([np.ascontiguousarray(x), *ins[1:]], a)
        k = _moved_last(x) if axis == x.ndim - 1 else None
        if k is not None:
            y3, mean, rstd = _normalize_moved(x, k, a.get("eps", 1e-5))
            for i, apply in ((1, np.multiply), (2, np.add)):
                if params[i - 1] is not None:
                    apply(y3, columns[i], out=y3)
            y = np.moveaxis(y3.reshape(np.moveaxis(x, -1, k).shape), k, -1)
            return [y if view else np.ascontiguousarray(y), mean, rstd]
        y, mean, rstd = _normalize(x, axis, a.get("eps", 1e-5))
        rows = y.reshape(-1, math.prod(x.shape[axis:]))
        for i, apply in ((1, np.multiply), (2, np.add)):
            if params[i - 1] is not None:
                _broadcast_rows(apply, rows, tiled[i])
        return [y, mean, rstd]

    return run


def _takes_views(a: KernelAttrs) -> bool:
    """Whether a LayerNorm normalises its input's last axis only (from its operand type): then a
    channels-last view of a channels-first array is cheaper to read as it is than to copy."""
    shape = a.in_shapes[0] if a.in_shapes else None
    return shape is not None and len(shape) >= 2 and a.get("axis", -1) % len(shape) == len(shape) - 1


def _broadcast_rows(apply, rows: Array, tiled: Array) -> None:
    """rows[i] = apply(rows[i], p) in place, for `tiled` p repeated k times: k rows a step, the rest
    of the rows one at a time."""
    n, d = rows.shape
    k = tiled.size // d
    head = n - n % k
    if head:
        block = rows[:head].reshape(-1, k * d)
        apply(block, tiled, out=block)
    if head < n:
        apply(rows[head:], tiled[:d], out=rows[head:])


def _instance_norm(ins: Inputs, a: KernelAttrs) -> Array:
    x, weight, bias = (list(ins) + [None, None])[:3]
    y, _, _ = _normalize(x, 2, a.get("eps", 1e-5))
    return _affine(y, _per_channel(weight, x.ndim), _per_channel(bias, x.ndim), fresh=True)


def _group_norm(ins: Inputs, a: KernelAttrs) -> Array:
    x, weight, bias = (list(ins) + [None, None])[:3]
    grouped = x.reshape(x.shape[0], int(a["num_groups"]), -1)
    y, _, _ = _normalize(grouped, 2, a.get("eps", 1e-5))
    return _affine(y.reshape(x.shape), _per_channel(weight, x.ndim), _per_channel(bias, x.ndim), fresh=True)


def _rms_norm(ins: Inputs, a: KernelAttrs) -> Array:
    x, gamma = (list(ins) + [None])[:2]
    y = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + np.float32(a.get("eps", 1e-5)))
    return _affine(y, gamma, None)


def _lrn(ins: Inputs, a: KernelAttrs) -> Array:
    """ONNX LRN: x / (bias + alpha/size * sum of squares over `size` neighbouring channels)^beta."""
    x = ins[0]
    size = int(a["size"])
    before, after = (size - 1) // 2, size // 2
    sq = np.pad(x * x, [(0, 0), (before, after)] + [(0, 0)] * (x.ndim - 2))
    window_sum = sum(sq[:, i : i + x.shape[1]] for i in range(size))
    alpha, beta, bias = (np.float32(a.get(k, d)) for k, d in (("alpha", 1e-4), ("beta", 0.75), ("bias", 1.0)))
    return x / (bias + alpha / size * window_sum) ** beta


KERNELS: dict[str, Kernel] = {
    # Both runs apply the fused relu in place on their fresh result (fuse-relu fuses BN -> Relu).
    "top.BatchNorm": Kernel(_batch_norm, _batch_norm_prepare, fuses_relu=True),
    "top.Scale": Kernel(_scale),
    "top.LayerNorm": Kernel(_layer_norm, _layer_norm_prepare, strided_operands=_takes_views,
                            view=functools.partial(_layer_norm_prepare, view=True)),
    "top.InstanceNorm": Kernel(_instance_norm),
    "top.GroupNorm": Kernel(_group_norm),
    "top.RMSNorm": Kernel(_rms_norm),
    "top.LRN": Kernel(_lrn),
}

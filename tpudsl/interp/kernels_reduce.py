"""Reductions along axes: Reduce (all modes), Softmax / log-softmax, Arg, CumSum."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tpudsl.interp.kernel import Array, Inputs, Kernel, KernelAttrs

# Reduce mode -> f(x, axes, keepdims).
REDUCE: dict[str, Callable[[Array, tuple[int, ...], bool], Array]] = {
    "ReduceSum": lambda x, ax, k: np.sum(x, axis=ax, keepdims=k),
    "ReduceMean": lambda x, ax, k: np.mean(x, axis=ax, keepdims=k),
    "ReduceMax": lambda x, ax, k: np.max(x, axis=ax, keepdims=k, initial=_lowest(x.dtype) if x.size == 0 else None),
    "ReduceMin": lambda x, ax, k: np.min(x, axis=ax, keepdims=k, initial=_highest(x.dtype) if x.size == 0 else None),
    "ReduceProd": lambda x, ax, k: np.prod(x, axis=ax, keepdims=k),
    "ReduceL1": lambda x, ax, k: np.sum(np.abs(x), axis=ax, keepdims=k),
    "ReduceL2": lambda x, ax, k: np.sqrt(np.sum(x * x, axis=ax, keepdims=k)),
    "ReduceSumSquare": lambda x, ax, k: np.sum(x * x, axis=ax, keepdims=k),
    "ReduceLogSumExp": lambda x, ax, k: _logsumexp(x, ax, k),
}


# ONNX: the max of an empty set is the lowest value of the type (-inf, False), the min the highest.
def _lowest(dtype: np.dtype) -> object:
    return False if dtype == np.bool_ else -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def _highest(dtype: np.dtype) -> object:
    return True if dtype == np.bool_ else np.inf if dtype.kind == "f" else np.iinfo(dtype).max


def _logsumexp(x: Array, axes: tuple[int, ...], keepdims: bool) -> Array:
    m = np.max(x, axis=axes, keepdims=True)
    y = np.log(np.sum(np.exp(x - m), axis=axes, keepdims=True)) + m
    return y if keepdims else np.squeeze(y, axis=axes)


def _axes(a: KernelAttrs, ndim: int) -> tuple[int, ...]:
    axes = a.get("axes") or list(range(ndim))
    return tuple(sorted(ax % ndim for ax in axes))


def _reduce(ins: Inputs, a: KernelAttrs) -> Array:
    x = ins[0]
    y = REDUCE[a["mode"]](x, _axes(a, x.ndim), bool(a.get("keepdims", True)))
    return np.asarray(y, dtype=x.dtype)


# Softmax over the last axis shifts every row by the tensor's max, not its own: numpy's max over
# rows of 128-200 pays a reduction loop per row (35 us of a 127 us ViT softmax, 3x197x197) and the
# row-broadcast subtraction 18 us, against 5 + 5 us for the tensor's max and a scalar subtraction.
# softmax does not depend on the shift; the row's values are then exp(x - m_row) * exp(m_row - m),
# so the row sum s >= exp(m_row - m). Where s >= 2^-24 every output >= 2^-102 keeps its relative
# precision (its exponential is a normal float32) and the smaller ones are within 2^-125 absolutely;
# the rounding of x - m moves an output by up to 2^-24 |x - m| relatively, |x - m| <= |x - m_row|
# + 24 ln 2 + ln(row length). A row whose sum is below (or NaN: infinities, NaN) is recomputed with
# its own max, as before.
_MIN_ROW_SUM = np.float32(2.0**-24)


def _softmax_rows(x: Array) -> Array:
    """exp(x - max) / sum over the last axis of a non-empty float32 x, in a fresh array."""
    d = x.shape[-1]
    e = np.subtract(x, x.max())
    np.exp(e, out=e)
    rows = e.reshape(-1, d)
    ones = np.ones(d, np.float32)
    sums = rows @ ones  # one GEMV, not numpy's sum per row
    bad = np.flatnonzero(~(sums >= _MIN_ROW_SUM))
    if bad.size:
        own = x.reshape(-1, d)[bad]
        own = np.exp(own - own.max(axis=-1, keepdims=True))
        rows[bad] = own
        sums[bad] = own @ ones
    np.divide(np.float32(1), sums, out=sums)  # one reciprocal per row, not a division per element
    e *= sums.reshape(e.shape[:-1] + (1,))
    return e


def _softmax(ins: Inputs, a: KernelAttrs) -> Array:
    beta = a.get("beta", 1.0)
    x = ins[0] if beta == 1 else ins[0] * np.float32(beta)
    axis = a.get("axis", -1)
    if x.size and axis % x.ndim == x.ndim - 1 and x.dtype == np.float32 and not a.get("log", False):
        return _softmax_rows(x)
    shifted = x - x.max(axis=axis, keepdims=True)
    if a.get("log", False):
        shifted -= np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
        return shifted
    # exp(x - max) / sum, as onnxruntime computes it: one exp, in place on the fresh array
    e = np.exp(shifted, out=shifted)
    e /= e.sum(axis=axis, keepdims=True)
    return e


def _arg(ins: Inputs, a: KernelAttrs) -> list[Array]:
    x = ins[0]
    axis = a.get("axis", 0) % x.ndim
    is_max = a.get("mode", "ArgMax") == "ArgMax"
    if a.get("select_last_index", False):
        flipped = np.flip(x, axis=axis)
        idx = x.shape[axis] - 1 - (np.argmax(flipped, axis) if is_max else np.argmin(flipped, axis))
    else:
        idx = np.argmax(x, axis) if is_max else np.argmin(x, axis)
    idx = np.expand_dims(idx, axis)
    values = np.take_along_axis(x, idx, axis)
    if not a.get("keepdims", True):
        idx, values = np.squeeze(idx, axis), np.squeeze(values, axis)
    return [idx.astype(a.out_dtype(0) or np.float32), values]


def _cumsum(ins: Inputs, a: KernelAttrs) -> Array:
    x = ins[0]
    return np.cumsum(x, axis=int(a["axis"]), dtype=x.dtype)


KERNELS: dict[str, Kernel] = {
    "top.Reduce": Kernel(_reduce),
    "top.Softmax": Kernel(_softmax),
    "top.Arg": Kernel(_arg),
    "top.CumSum": Kernel(_cumsum),
}

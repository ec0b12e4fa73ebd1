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


def _softmax(ins: Inputs, a: KernelAttrs) -> Array:
    beta = a.get("beta", 1.0)
    x = ins[0] if beta == 1 else ins[0] * np.float32(beta)
    axis = a.get("axis", -1)
    shifted = x - x.max(axis=axis, keepdims=True)
    if a.get("log", False):
        shifted -= np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
        return shifted
    # exp(x - max) / sum, as onnxruntime computes it: one exp, in place on the fresh array
    e = np.exp(shifted, out=shifted)
    if e.size and axis % e.ndim == e.ndim - 1 and e.dtype == np.float32:
        # Attention's rows (128-200 long): their sums as one GEMV, and one reciprocal per row
        # times the row, not a division per element: 10-15% of the kernel (one BLAS thread).
        d = e.shape[-1]
        inv = e.reshape(-1, d) @ np.ones(d, np.float32)
        np.divide(np.float32(1), inv, out=inv)
        e *= inv.reshape(e.shape[:-1] + (1,))
        return e
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

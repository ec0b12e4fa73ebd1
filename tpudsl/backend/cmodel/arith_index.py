"""The cmodel's arithmetic of the index records (opcodes 71-74): Arg, TopK, CumSum and Trilu along
C of a local (n, c, h, w) tensor, written from the records' definitions (isa.py), never imported
from the interpreter. Arg, TopK and Trilu compare or move values (exact in every dtype); CumSum
adds, each partial sum rounded to the record's dtype: computed in float64 and converted once per
step, which is the correctly rounded sum of the two operands (a float64 sum rounded again to a
format of p <= 24 bits is the sum rounded once: 53 >= 2 p + 2)."""

from __future__ import annotations

import numpy as np


def arg(x: np.ndarray, is_min: bool, last: bool) -> np.ndarray:
    """The index (n, 1, h, w) of the first (last) extreme element along C; a row with a NaN: its
    first (last) NaN."""
    xf = x.astype(np.float64)
    key = -xf if is_min else xf
    nan = np.isnan(xf)
    best = np.where(nan, -np.inf, key).max(axis=1, keepdims=True)
    hit = np.where(nan.any(axis=1, keepdims=True), nan, key == best)
    if last:
        return x.shape[1] - 1 - np.argmax(hit[:, ::-1], axis=1)[:, None]
    return np.argmax(hit, axis=1)[:, None]


def topk(x: np.ndarray, k: int, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    """(values, indices) of the k first elements along C in the order: by value (descending when
    largest), equal values by index, NaN after every number."""
    xf = x.astype(np.float64)
    nan = np.isnan(xf)
    key = np.where(nan, 0.0, -xf if largest else xf)
    position = np.broadcast_to(np.arange(x.shape[1]).reshape(1, -1, 1, 1), x.shape)
    order = np.lexsort((position, key, nan), axis=1)[:, :k]  # the last key sorts first
    return np.take_along_axis(x, order, axis=1), order


def cumsum(x: np.ndarray) -> np.ndarray:
    """Running sums along C, each rounded to x's dtype before the next element is added."""
    y = np.empty_like(x)
    total = np.zeros(x[:, :1].shape, np.float64)
    for i in range(x.shape[1]):
        y[:, i:i + 1] = (total + x[:, i:i + 1].astype(np.float64)).astype(x.dtype)
        total = y[:, i:i + 1].astype(np.float64)
    return y


def trilu(x: np.ndarray, upper: bool, diagonal: int, row0: int) -> np.ndarray:
    """x where column j - row i >= diagonal (upper) or <= diagonal (lower) in each (h, w) plane,
    rows counted from row0; 0 elsewhere."""
    offset = np.arange(x.shape[3])[None, :] - (row0 + np.arange(x.shape[2]))[:, None]
    keep = offset >= diagonal if upper else offset <= diagonal
    return np.where(keep, x, np.zeros((), x.dtype))

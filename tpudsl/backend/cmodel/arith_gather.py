"""The cmodel's arithmetic of records 76-81 (written from their definitions in isa.py, never from
the interpreter): index checking and the gathers/scatters on numpy arrays, LRN in float32 steps,
and the max pool's mask."""

from __future__ import annotations

import numpy as np

from tpudsl.backend.cmodel.arith import _windows as windows
from tpudsl.backend.cmodel.memory import Fault


def indices(raw: np.ndarray, sizes: np.ndarray | int, what: str) -> np.ndarray:
    """Integer indices from stored values (any dtype), negatives wrapped by `sizes` (broadcast);
    a value that is no integer or lies outside [-size, size) is a Fault naming it."""
    wide = raw.astype(np.float64)
    if not np.all(wide == np.round(wide)):
        raise Fault(f"{what}: index {wide[wide != np.round(wide)][0]} is not an integer")
    idx, size = wide.astype(np.int64), np.broadcast_to(np.asarray(sizes, np.int64), wide.shape)
    bad = (idx < -size) | (idx >= size)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise Fault(f"{what}: index {idx[first]} at position {first} is outside [-{size[first]}, {size[first]})")
    return np.where(idx < 0, idx + size, idx)


def along_axis(idx: np.ndarray, axis: int) -> tuple[np.ndarray, ...]:
    """The full coordinates of every element of the 4-D `idx` with dim `axis` replaced by its value."""
    grid = list(np.indices(idx.shape, sparse=True))
    grid[axis] = idx
    return tuple(np.broadcast_to(g, idx.shape) for g in grid)


def scatter_in_order(dst: np.ndarray, flat_at: np.ndarray, values: np.ndarray) -> None:
    """dst.reshape(-1, slab)[flat_at[p]] = values[p] for p in order: of duplicate positions the
    last one's value stays (the first occurrence of each position in reversed order)."""
    rows = dst.reshape(-1, values.shape[-1]) if values.ndim > 1 else dst.reshape(-1)
    _, first_from_end = np.unique(flat_at[::-1], return_index=True)
    keep = len(flat_at) - 1 - first_from_end
    rows[flat_at[keep]] = values[keep]


# The scatter records' reductions by code (isa.py, records 78/79; 0, replacing, moves bytes).
_COMBINE = {1: np.add, 3: np.maximum, 4: np.minimum, 5: np.multiply}


def combine_in_order(dst: np.ndarray, flat_at: np.ndarray, values: np.ndarray, reduction: int) -> None:
    """dst.reshape(-1, slab)[flat_at[p]] = combine(it, values[p]) for p in order, each result
    computed in float64 and converted once to dst's float dtype before the next update: the
    operation correctly rounded (a float64 sum or product of two values of p <= 24 bits rounded
    again to p bits is rounded once: 53 >= 2 p + 2)."""
    if reduction not in _COMBINE:
        raise Fault(f"scatter reduction {reduction} is not one of 0, {', '.join(map(str, _COMBINE))}")
    combine = _COMBINE[reduction]
    rows = dst.reshape(-1, values.shape[-1])
    for at, value in zip(flat_at.tolist(), values.astype(np.float64), strict=True):
        rows[at] = combine(rows[at].astype(np.float64), value).astype(dst.dtype)


def lrn(x: np.ndarray, size: int, alpha: float, beta: float, bias: float) -> np.ndarray:
    """BdcLRN in float32: window sums of squares position by position, then the power."""
    x = x.astype(np.float32)
    sq = x * x
    c, before = x.shape[1], (size - 1) // 2
    total = np.zeros_like(sq)
    for i in range(size):  # the term of window position i for every channel, added in order
        lo, hi = max(0, before - i), min(c, c + before - i)  # channels whose position-i neighbour exists
        if lo < hi:
            total[:, lo:hi] = total[:, lo:hi] + sq[:, lo - before + i:hi - before + i]
    k = np.float32(alpha) / np.float32(size)
    return x / (np.float32(bias) + k * total) ** np.float32(beta)


def max_with_mask(x: np.ndarray, out_shape: tuple[int, int, int, int], r) -> tuple[np.ndarray, np.ndarray]:
    """BdcPoolMask: each window's first maximum in row-major window order over the input positions
    it covers (pads never count), and its plane index."""
    n, c, oh, ow = out_shape
    pads = ((r.pt, r.pb), (r.pl, r.pr))
    xp = np.pad(x.astype(np.float32), ((0, 0), (0, 0), *pads), constant_values=-np.inf)
    rows = np.arange(r.ih, dtype=np.float64)[:, None] + r.ih0
    plane = np.pad(rows * r.iw + np.arange(r.iw), pads, constant_values=-1.0)[None, None]
    vals = windows(xp, r.kh, r.kw, r.sh, r.sw, 1, 1, oh, ow).reshape(n, c, oh, ow, -1)
    where = windows(plane, r.kh, r.kw, r.sh, r.sw, 1, 1, oh, ow).reshape(1, 1, oh, ow, -1)
    inside = where >= 0
    top = np.where(inside, vals, -np.inf).max(axis=-1, keepdims=True)
    first = np.argmax(inside & (vals == top), axis=-1)[..., None]  # row-major window order
    mask = np.take_along_axis(np.broadcast_to(where, vals.shape), first, axis=-1)[..., 0]
    best = np.take_along_axis(vals, first, axis=-1)[..., 0]  # its value: -0.0 and 0.0 tie, the first stays
    return best, mask.astype(np.float32)

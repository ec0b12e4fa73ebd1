"""The cmodel's handlers of records 76-81 (isa.py), merged into engine.HANDLERS: the index records
in global memory (indices checked whole before anything is written), BdcLRN and BdcPoolMask."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tpudsl.backend import isa
from tpudsl.backend.cmodel import arith_gather
from tpudsl.backend.cmodel.memory import Fault, Memory, contiguous, numpy_dtype

_BYTE = np.dtype(np.uint8)


def _elements(m: Memory, addr: int, shape, esize: int) -> np.ndarray:
    """A contiguous tensor of `esize`-byte elements as (*shape, esize) bytes."""
    full = (*shape, esize)
    return m.read_global(addr, contiguous(full), full, _BYTE)


def _store(m: Memory, addr: int, data: np.ndarray) -> None:
    m.write_global(addr, contiguous(data.shape), np.ascontiguousarray(data))


def _read_indices(m: Memory, r, shape) -> np.ndarray:
    return m.read_global(r.idx, contiguous(shape), shape, numpy_dtype(r.index_dtype))


def _check_axis(r) -> None:
    if r.axis > 3:
        raise Fault(f"axis {r.axis} of {type(r).__name__} is not one of 0..3")
    dims = zip((r.xn, r.xc, r.xh, r.xw), (r.in_, r.ic, r.ih, r.iw), strict=True)
    if any(i > x for d, (x, i) in enumerate(dims) if d != r.axis):
        raise Fault(f"index shape {(r.in_, r.ic, r.ih, r.iw)} exceeds {(r.xn, r.xc, r.xh, r.xw)} off axis {r.axis}")


def _gather_elements(m: Memory, r: isa.GdmaGatherElements) -> None:
    _check_axis(r)
    shape = (r.in_, r.ic, r.ih, r.iw)
    idx = arith_gather.indices(_read_indices(m, r, shape), (r.xn, r.xc, r.xh, r.xw)[r.axis], "gather elements")
    x = _elements(m, r.src, (r.xn, r.xc, r.xh, r.xw), r.esize)
    _store(m, r.dst, x[arith_gather.along_axis(idx, r.axis)])


def _scatter(r, y: np.ndarray, at: np.ndarray, upd: np.ndarray) -> None:
    """Records 78/79 (83/84): the updates (rows of bytes) written (combined) into y's rows in index order."""
    if not isinstance(r, isa.GdmaScatterElementsReduce | isa.GdmaScatterNDReduce):
        arith_gather.scatter_in_order(y, at, upd)
        return
    dt = numpy_dtype(r.dtype)
    if dt.itemsize != r.esize or (dt.kind != "f" and dt.name != "bfloat16"):
        raise Fault(f"scatter reduction {r.reduction} on dtype {isa.DTYPE_NAMES[r.dtype]} with esize {r.esize} "
                    "(a float type of that size is modelled)")
    arith_gather.combine_in_order(y.view(dt), at, upd.view(dt), r.reduction)


def _scatter_elements(m: Memory, r: isa.GdmaScatterElements) -> None:
    _check_axis(r)
    xs, shape = (r.xn, r.xc, r.xh, r.xw), (r.in_, r.ic, r.ih, r.iw)
    idx = arith_gather.indices(_read_indices(m, r, shape), xs[r.axis], "scatter elements")
    y, upd = _elements(m, r.src, xs, r.esize), _elements(m, r.upd, shape, r.esize)
    at = np.ravel_multi_index(arith_gather.along_axis(idx, r.axis), xs).reshape(-1)
    _scatter(r, y, at, upd.reshape(-1, r.esize))
    _store(m, r.dst, y)


def _dims(r) -> tuple[int, ...]:
    if not 1 <= r.k <= 4:
        raise Fault(f"index tuples of length {r.k} (1..4 are modelled)")
    return (r.d0, r.d1, r.d2, r.d3)[: r.k]


def _gather_nd(m: Memory, r: isa.GdmaGatherND) -> None:
    dims = _dims(r)
    idx = arith_gather.indices(_read_indices(m, r, (r.batch, r.count, r.k)), np.array(dims), "gather nd")
    x = _elements(m, r.src, (r.batch, int(np.prod(dims)), r.slab * r.esize), 1)[..., 0]
    at = np.ravel_multi_index(tuple(np.moveaxis(idx, -1, 0)), dims)  # (batch, count)
    _store(m, r.dst, np.take_along_axis(x, at[..., None], axis=1))


def _scatter_nd(m: Memory, r: isa.GdmaScatterND) -> None:
    dims = _dims(r)
    idx = arith_gather.indices(_read_indices(m, r, (r.count, r.k)), np.array(dims), "scatter nd")
    y = _elements(m, r.src, (int(np.prod(dims)), r.slab * r.esize), 1)[..., 0]
    upd = _elements(m, r.upd, (r.count, r.slab * r.esize), 1)[..., 0]
    _scatter(r, y, np.ravel_multi_index(tuple(idx.T), dims), upd)
    _store(m, r.dst, y)


def _lrn(m: Memory, r: isa.BdcLRN) -> None:
    dt = numpy_dtype(r.dtype)
    if r.size < 1:
        raise Fault(f"LRN size {r.size} is not positive")
    x = m.read_local(r.in_addr, (r.n, r.c, r.h, r.w), dt)
    m.write_local(r.out_addr, arith_gather.lrn(x, r.size, r.alpha, r.beta, r.bias).astype(dt))


def _pool_mask(m: Memory, r: isa.BdcPoolMask) -> None:
    dt = numpy_dtype(r.dtype)
    x = m.read_local(r.in_addr, (r.n, r.c, r.ih, r.iw), dt)
    for size, k, s, out in ((r.ih + r.pt + r.pb, r.kh, r.sh, r.oh), (r.iw + r.pl + r.pr, r.kw, r.sw, r.ow)):
        if k < 1 or s < 1 or (out - 1) * s + k > size:
            raise Fault(f"pool mask: {out} outputs of a {k}-window at stride {s} do not fit {size} padded inputs")
    best, mask = arith_gather.max_with_mask(x, (r.on, r.oc, r.oh, r.ow), r)
    m.write_local(r.out_addr, best.astype(dt))
    m.write_local(r.mask_addr, mask)


HANDLERS: dict[type[isa.Record], Callable] = {
    isa.GdmaGatherElements: _gather_elements, isa.GdmaGatherND: _gather_nd,
    isa.GdmaScatterElements: _scatter_elements, isa.GdmaScatterND: _scatter_nd,
    isa.GdmaScatterElementsReduce: _scatter_elements, isa.GdmaScatterNDReduce: _scatter_nd,
    isa.BdcLRN: _lrn, isa.BdcPoolMask: _pool_mask,
}

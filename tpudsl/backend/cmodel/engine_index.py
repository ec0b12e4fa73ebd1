"""The cmodel's handlers of the index records (opcodes 71-74), merged into engine.HANDLERS: each
reads its operand from the `Memory`, computes (arith_index.py) and writes its results; a bad
mode or k is a Fault, which the engine reports with the instruction."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tpudsl.backend import isa
from tpudsl.backend.cmodel import arith_index
from tpudsl.backend.cmodel.memory import Fault, Memory, numpy_dtype


def _indices(m: Memory, addr: int, idx: np.ndarray, code: int) -> None:
    """Integer indices written as the index dtype's values (floats, as the Tpu ops hold them)."""
    m.write_local(addr, idx.astype(np.float64).astype(numpy_dtype(code)))


def _arg(m: Memory, r: isa.BdcArg) -> None:
    dt = numpy_dtype(r.dtype)
    if r.mode not in isa.ARG_MODES.values():
        raise Fault(f"unknown arg mode {r.mode}")
    x = m.read_local(r.in_addr, (r.n, r.c, r.h, r.w), dt)
    idx = arith_index.arg(x, r.mode == isa.ARG_MODES["ArgMin"], bool(r.select_last))
    _indices(m, r.idx_addr, idx, r.idx_dtype)
    if r.val_addr != isa.NO_ADDR:
        m.write_local(r.val_addr, np.take_along_axis(x, idx, axis=1))


def _topk(m: Memory, r: isa.BdcTopK) -> None:
    if not 1 <= r.k <= r.c:
        raise Fault(f"topk: k {r.k} is outside 1..{r.c}")
    x = m.read_local(r.in_addr, (r.n, r.c, r.h, r.w), numpy_dtype(r.dtype))
    values, idx = arith_index.topk(x, r.k, bool(r.largest))
    m.write_local(r.val_addr, values)
    _indices(m, r.idx_addr, idx, r.idx_dtype)


def _cumsum(m: Memory, r: isa.BdcCumSum) -> None:
    x = m.read_local(r.in_addr, (r.n, r.c, r.h, r.w), numpy_dtype(r.dtype))
    m.write_local(r.out_addr, arith_index.cumsum(x))


def _trilu(m: Memory, r: isa.BdcTrilu) -> None:
    x = m.read_local(r.in_addr, (r.n, r.c, r.h, r.w), numpy_dtype(r.dtype))
    m.write_local(r.out_addr, arith_index.trilu(x, bool(r.upper), r.diagonal, r.row0))


HANDLERS: dict[type[isa.Record], Callable] = {
    isa.BdcArg: _arg, isa.BdcTopK: _topk, isa.BdcCumSum: _cumsum, isa.BdcTrilu: _trilu,
}

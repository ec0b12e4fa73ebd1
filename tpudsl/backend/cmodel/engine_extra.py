"""The cmodel's handlers of the records added for issue 11 (opcodes 60-66 and 70), merged into
engine.HANDLERS: each reads its operands from the `Memory`, computes (arith_extra.py) and writes
its result; a bad record or index is a Fault, which the engine reports with the instruction."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tpudsl.backend import isa
from tpudsl.backend.cmodel import arith_extra
from tpudsl.backend.cmodel.elementwise import code_below, elementwise
from tpudsl.backend.cmodel.memory import Fault, Memory, numpy_dtype


def _sources(first: int, count: int, before: int, size: int, mode: int, start: int, held: int, dim: str) -> np.ndarray:
    """Indices into the slice's input of output indices first .. first + count - 1 of a padded dim."""
    src = isa.reflect_index(np.arange(first, first + count) - before, size, mode) - start
    if count and (src.min() < 0 or src.max() >= held):
        raise Fault(f"pad reflect: {dim} reads input {src.min() + start}..{src.max() + start}, the slice holds "
                    f"{start}..{start + held - 1}")
    return src


def _pad_reflect(m: Memory, r: isa.BdcPadReflect) -> None:
    dt = numpy_dtype(r.dtype)
    if r.mode not in isa.REFLECT_MODES.values():
        raise Fault(f"unknown reflect pad mode {r.mode}")
    x = m.read_local(r.in_addr, (r.n, r.c, r.h, r.w), dt)
    oc, ow = r.c + r.pc0 + r.pc1, r.w + r.pw0 + r.pw1  # C and W are whole in every slice
    y = x[_sources(r.on0, r.on, r.pn0, r.full_n, r.mode, r.n0, r.n, "N")]
    y = y[:, _sources(0, oc, r.pc0, r.c, r.mode, 0, r.c, "C")]
    y = y[:, :, _sources(r.oh0, r.oh, r.ph0, r.full_h, r.mode, r.h0, r.h, "H")]
    m.write_local(r.out_addr, y[:, :, :, _sources(0, ow, r.pw0, r.w, r.mode, 0, r.w, "W")])


def _gather(m: Memory, r: isa.GdmaGather) -> None:
    """dst[o, p, :] = src[o, idx[p], :]; indices are checked whole before anything is written."""
    raw = m.read_global(r.idx, (1,), (r.count,), numpy_dtype(r.index_dtype)).astype(np.float64)
    if not np.all(raw == np.round(raw)):
        raise Fault(f"gather: index {raw[raw != np.round(raw)][0]} is not an integer")
    idx = raw.astype(np.int64)
    bad = (idx < -r.axis) | (idx >= r.axis)
    if bad.any():
        raise Fault(f"gather: index {idx[bad][0]} is outside [-{r.axis}, {r.axis})")
    idx = np.where(idx < 0, idx + r.axis, idx)
    byte = np.dtype(np.uint8)
    x = m.read_global(r.src, (r.axis * r.inner * r.esize, r.inner * r.esize, 1), (r.outer, r.axis, r.inner * r.esize),
                      byte)
    m.write_global(r.dst, (r.count * r.inner * r.esize, r.inner * r.esize, 1), x[:, idx])


def _select(m: Memory, r: isa.BdcSelect) -> None:
    dt = numpy_dtype(r.dtype)
    cond = m.read_local(r.cond_addr, (r.cn, r.cc, r.ch, r.cw), dt)
    a, b = (np.asarray(value, np.float32).astype(dt) if addr == isa.NO_ADDR else m.read_local(addr, shape, dt)
            for addr, shape, value in ((r.a_addr, (r.an, r.ac, r.ah, r.aw), r.a_value),
                                       (r.b_addr, (r.bn, r.bc, r.bh, r.bw), r.b_value)))
    try:
        y = np.broadcast_to(arith_extra.select(cond, a, b), (r.n, r.c, r.h, r.w))
    except ValueError:
        raise Fault(f"select: cond {cond.shape}, a {a.shape}, b {b.shape} do not broadcast to "
                    f"{(r.n, r.c, r.h, r.w)}") from None
    m.write_local(r.out_addr, y.astype(dt))


HANDLERS: dict[type[isa.Record], Callable] = {
    isa.BdcPadReflect: _pad_reflect, isa.GdmaGather: _gather, isa.BdcSelect: _select,
    # element-wise (elementwise.py): compute, its operand tiles, the codes it must reject
    isa.BdcScale: elementwise(lambda r, x, s, b: arith_extra.scale(x, s, b, r.do_relu, r.relu_limit),
                              "in", "scale", "bias"),
    isa.BdcActiveX: elementwise(lambda r, x: arith_extra.active_extra(x, r.mode, r.coeff0, r.coeff1), "in",
                                check=code_below("mode", len(isa.ACTIVE_EXTRA_MODES),
                                                 "unknown activation mode {} of BdcActiveX")),
    isa.BdcRMSNorm: elementwise(lambda r, x, gamma: arith_extra.rms_norm(x, gamma, r.eps), "in", optional=("gamma",)),
    isa.BdcBinaryX: elementwise(lambda r, a, b: arith_extra.elementwise_x(a, b, r.op, r.reverse, r.do_relu,
                                                                          r.relu_limit), "a", "b",
                                check=code_below("op", isa.ELEMENTWISE_X_OPS["Clip"], "unknown op {} of BdcBinaryX")),
    isa.BdcConstX: elementwise(lambda r, x: arith_extra.const_x(x, r.op, r.reverse, r.value, r.value2, r.do_relu,
                                                                r.relu_limit), "in",
                               check=code_below("op", len(isa.ELEMENTWISE_X_OPS), "unknown op {} of BdcConstX")),
}

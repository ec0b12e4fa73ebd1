"""The cmodel's per-channel requantization (BdcRequantAxis, opcode 85; tpu.RequantIntAxis), written
from isa.py's definition of the record: never from the Tpu interpreter (tpudsl/interp), which it
is checked against bit for bit. The rounding shift is the cmodel's own (arith_int8.shift_round).

Channel c of the (n, c, h, w) input reads row c of the quant tile, (m, s, zp) with s = -rshift
(bm1684x's layout: a left shift, negative for right); y = sat((in - in_zp) m / 2^rshift rounded by
round_mode, + zp) in out_dtype (i8, u8, or i32)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tpudsl.backend import isa
from tpudsl.backend.cmodel import arith_int8
from tpudsl.backend.cmodel.memory import Fault, Memory, numpy_dtype

_INTS = ("i8", "u8", "i32")


def requant_axis(x: np.ndarray, quant: np.ndarray, in_zp: int, round_mode: int, out_dtype: int) -> np.ndarray:
    """x (n, c, h, w) integers, quant (c, 3) int32 rows (m, -rshift, zp)."""
    rows = quant.astype(np.int64).reshape(-1, 3)
    if rows.shape[0] != x.shape[1]:
        raise Fault(f"a quant tile of {rows.shape[0]} rows for {x.shape[1]} channels")
    m, shift, zp = (rows[:, i].reshape(1, -1, 1, 1) for i in range(3))
    product = (x.astype(np.int64) - in_zp) * m  # |x - zp| <= 2^31 + 255, |m| < 2^31: exact in int64
    return arith_int8.store(arith_int8.shift_round(product, -shift, round_mode), zp, out_dtype)


def _requant_axis(m: Memory, r: isa.BdcRequantAxis) -> None:
    if isa.DTYPE_NAMES.get(r.dtype) not in _INTS or isa.DTYPE_NAMES.get(r.out_dtype) not in _INTS:
        raise Fault(f"BdcRequantAxis from dtype {r.dtype} to {r.out_dtype} (integers only)")
    x = m.read_local(r.in_addr, (r.n, r.c, r.h, r.w), numpy_dtype(r.dtype))
    quant = m.read_local(r.quant_addr, (1, r.c, 1, 3), numpy_dtype(isa.DTYPES["i32"]))
    m.write_local(r.out_addr, requant_axis(x, quant, r.in_zp, r.round_mode, r.out_dtype))


HANDLERS: dict[type[isa.Record], Callable] = {isa.BdcRequantAxis: _requant_axis}

"""The one shape of the cmodel's element-wise handlers: check the record's codes, read its operand
tiles (operands.py), compute, check the result's shape, round once to the record's dtype and write
it. A handler is a row: `elementwise(compute, "a", "b")`."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tpudsl.backend import isa, operands
from tpudsl.backend.cmodel.memory import Fault, Memory, numpy_dtype

Check = Callable[[isa.Record], "str | None"]


def code_below(field: str, limit: int, message: str) -> Check:
    """A check: the record's `field` is in range(limit), else `message` with `{}` its value."""
    return lambda r: None if 0 <= getattr(r, field) < limit else message.format(getattr(r, field))


def elementwise(compute: Callable[..., np.ndarray], *tiles: str, optional: tuple[str, ...] = (),
                check: Check | None = None) -> Callable[[Memory, isa.Record], None]:
    """The handler of a record that reads the local tiles `tiles` and then `optional` ones (None
    where the address is NO_ADDR), computes y = compute(r, *arrays) and writes y, which must be
    the record's (n, c, h, w), at out_addr in the record's dtype. `check(r)`: a message for a code
    the record must not have, a Fault before anything is read."""

    def handler(m: Memory, r: isa.Record) -> None:
        message = check(r) if check is not None else None
        if message:
            raise Fault(message)
        arrays = [_read(m, r, name) for name in tiles]
        arrays += [None if operands.tile(r, name)[0] == isa.NO_ADDR else _read(m, r, name) for name in optional]
        y = compute(r, *arrays)
        if y.shape != operands.out_shape(r):
            shapes = " and ".join(str(a.shape) for a in arrays if a is not None)
            raise Fault(f"operands {shapes} do not broadcast to {operands.out_shape(r)}")
        m.write_local(r.out_addr, y.astype(numpy_dtype(r.dtype)))  # type: ignore[attr-defined]

    return handler


def _read(m: Memory, r: isa.Record, name: str) -> np.ndarray:
    addr, shape, dtype = operands.tile(r, name)
    return m.read_local(addr, shape, numpy_dtype(dtype))

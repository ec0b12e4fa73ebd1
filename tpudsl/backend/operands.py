"""Where a record's local operand tiles are, read from the field names isa.py's records follow, so
that the cmodel's element-wise handlers (cmodel/elementwise.py) and the schedule's footprints
(schedule.py) share one description of them:

- "in": `in_addr`, shape (n, c, h, w);
- "a", "b", "cond": `a_addr` ..., shape (an, ac, ah, aw), (bn, ...), (cn, ...): operands that broadcast;
- any other name X (weight, bias, scale, gamma): `X_addr`, a per-channel (1, c, 1, 1) tile.

Each tile is in the record's `X_dtype` where it has one (BdcBinaryQZ's `b_dtype`), else in its `dtype`.
An element-wise record writes (n, c, h, w) at `out_addr`."""

from __future__ import annotations

from tpudsl.backend import isa

_BROADCAST = {"a": "a", "b": "b", "cond": "c"}  # operand -> the prefix of its shape fields


def tile(r: isa.Record, name: str) -> tuple[int, tuple[int, int, int, int], int]:
    """(local address, (n, c, h, w), dtype code) of operand `name` of record `r`."""
    dtype = getattr(r, f"{name}_dtype", r.dtype)  # type: ignore[attr-defined]
    if name == "in":
        return r.in_addr, (r.n, r.c, r.h, r.w), dtype  # type: ignore[attr-defined]
    prefix = _BROADCAST.get(name)
    shape = (1, r.c, 1, 1) if prefix is None else tuple(getattr(r, prefix + d) for d in "nchw")  # type: ignore[attr-defined]
    return getattr(r, f"{name}_addr"), shape, dtype  # type: ignore[return-value]


def out_shape(r: isa.Record) -> tuple[int, int, int, int]:
    return r.n, r.c, r.h, r.w  # type: ignore[attr-defined]

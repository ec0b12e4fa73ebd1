"""Concat chains without copying what is already in place (DenseNet's dense blocks).

A dense block concatenates each layer's output to everything before it: x1 = Concat(x0, y1),
x2 = Concat(x1, y2), ... With np.concatenate every step copies all of x(k-1) again, so a block of
n layers copies its first channels n times. Planned at `init`: a chain is a sequence of Concats
along the same axis where each one's first operand is the previous one's result (and no other
chain Concat extends that result). The chain's first Concat allocates one buffer of the last
one's shape and copies its operands into it; every later one copies only its new operands, behind
what is there, and returns the view of the buffer's prefix. A region of the buffer is written
once, before any view that covers it exists, and never again, so every view (x0 .. xn, kept by
`keep_all` and dumps under their names) keeps its value.

Only where the axes before the concat axis have extent 1 (batch 1, channel axis): the prefix views
are then contiguous, to every reader indistinguishable from a fresh array. Every operand must
have a static shape and the result's dtype (one numpy has: a bf16 value is held in float32), the
result no fused relu and a known shape (so the step stores it as it is), else the op keeps its
kernel. The chain is the interpreter's plan of top.Concat, whatever the table's Concat kernel.
The backend finds its chains (backend/concat_in_place.py, where "extends" also means "begins with
all of that one's inputs") with the same `ir/chains.py` (neither phase imports the other).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.ir import Operation, SSAValue

from tpudsl.interp.kernel import Array, Inputs, KernelAttrs, Run, carrier
from tpudsl.ir.chains import extension_chains

CONCAT = "top.Concat"


def _axis(step) -> int | None:
    """The concat axis of a step that can be a chain member, else None."""
    a: KernelAttrs = step.attrs
    shape = a.out_shape(0)
    if step.op.name != CONCAT or step.plain is None or shape is None or a.get("do_relu", False):
        return None
    axis = a.get("axis", 1) % len(shape)
    if math.prod(shape[:axis]) != 1:
        return None
    return axis


def link(steps: Sequence, dtype_of: Callable[[SSAValue], np.dtype | None]) -> None:
    """Give the Concat steps that form chains (of two or more) a run writing into one buffer.
    `steps` are the interpreter's (op, attrs, plain, run); `dtype_of` gives a value's dtype."""
    members = {}  # op -> (step, axis)
    for step in steps:
        axis = _axis(step)
        if axis is None:
            continue
        dtype = step.attrs.out_dtype(0)
        if dtype is not None and carrier(dtype) == dtype and all(s is not None for s in step.attrs.in_shapes) and all(dtype_of(v) == dtype for v in step.op.operands):
            members[step.op] = (step, axis)

    def extended(op: Operation) -> Operation | None:
        first = op.operands[0].owner
        return first if first in members and members[first][1] == members[op][1] else None  # type: ignore[return-value]

    for ops in extension_chains(list(members), extended):
        chain = [members[op][0] for op in ops]
        axis = members[ops[0]][1]
        final = chain[-1].attrs.out_shape(0)
        chain[0].run = _head(final, axis, chain[0].attrs.out_dtype(0))
        for s in chain[1:]:
            s.run = _extend(axis)


def _prefix(buf: Array, axis: int, end: int) -> Array:
    return buf[(slice(None),) * axis + (slice(0, end),)]


def _write(buf: Array, axis: int, start: int, ins: Inputs) -> int:
    """Copy `ins` one after another into buf along axis from `start`; the end."""
    for x in ins:
        end = start + x.shape[axis]
        buf[(slice(None),) * axis + (slice(start, end),)] = x
        start = end
    return start


def _head(final: tuple[int, ...], axis: int, dtype: np.dtype) -> Run:
    def run(ins: Inputs, a: KernelAttrs) -> Array:
        buf = np.empty(final, dtype)
        return _prefix(buf, axis, _write(buf, axis, 0, ins))

    return run


def _extend(axis: int) -> Run:
    def run(ins: Inputs, a: KernelAttrs) -> Array:
        buf = ins[0].base  # operand 0 is the previous member's prefix view of the chain's buffer
        return _prefix(buf, axis, _write(buf, axis, ins[0].shape[axis], ins[1:]))

    return run

"""Which dying operand an element-wise step may write its result into (the one place of the rule).

An `in_place` kernel (kernel.py) given `out` writes its result there instead of allocating: no fresh
buffer, the lines still in cache, and the peak drops by a tensor. The array may be shared, so the
plan (`candidates`, at init) keeps only float32 operands of the result's static shape that die at the
step and are neither weights nor graph inputs (the caller's arrays) nor outputs; and at each call
(`donor`) the array must own its data, be contiguous and writeable and have no reference but the
step loop's: numpy's own temporary-elision test. A view (a Reshape's, a concat chain's prefix, a
channels-last conv result) is refused for not owning its data, and its base for the reference the
view holds; a second reader of the value, or the same value twice in the operand list, raises the
count too. keep_all never gets here (every tensor is kept).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np

F32 = np.dtype(np.float32)

# References to an operand array while `donor` looks at it, when nothing else holds it: its value
# slot in the step loop, the step's operand list, and getrefcount's own argument.
# (tests/test_interp_inplace.py checks this count against the loop.)
LOOP_REFS = 3


def candidates(operands: Sequence[int], shapes: Sequence[tuple[int, ...] | None], dtypes: Sequence[np.dtype | None],
               result: tuple[tuple[int, ...], np.dtype], dying: set[int], kept: set[int]) -> tuple[int, ...]:
    """Positions of the operands that may take the result: float32 (like the result), of the result's
    static shape, dying at this step (freed after it), not kept (weights, inputs, outputs), and read
    once by the step."""
    shape, dtype = result
    if dtype != F32:
        return ()
    return tuple(i for i, s in enumerate(operands)
                 if s in dying and s not in kept and operands.count(s) == 1
                 and shapes[i] == shape and dtypes[i] == F32)


def donor(ins: list, positions: tuple[int, ...]) -> np.ndarray | None:
    """The first candidate operand that nothing but the step loop references and that owns its
    contiguous, writeable float32 data, else None."""
    for i in positions:
        if sys.getrefcount(ins[i]) == LOOP_REFS and type(ins[i]) is np.ndarray:
            x = ins[i]
            flags = x.flags
            if flags.owndata and flags.c_contiguous and flags.writeable and x.dtype == F32:
                return x
    return None

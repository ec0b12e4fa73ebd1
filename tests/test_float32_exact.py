"""check_float32_exact (tpudsl/ir/npz.py): integer input data beyond 2^24 is refused naming the
value of largest magnitude, judged against Python integers (no numpy arithmetic), at the edges of
every integer type: int64's least (whose numpy abs wraps), uint64's largest, 2^24 and one past it."""

from __future__ import annotations

import numpy as np
import pytest

from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.npz import check_float32_exact


@pytest.mark.parametrize("dtype, values", [
    (np.int64, [np.iinfo(np.int64).min, 0]),
    (np.int64, [3, np.iinfo(np.int64).max]),
    (np.uint64, [np.iinfo(np.uint64).max]),
    (np.int32, [-(1 << 24), 1 << 24]),
    (np.int32, [5, -(1 << 24) - 1]),
    (np.uint32, [(1 << 24) + 1]),
    (np.int8, [-128, 127]),
    (np.uint16, [65535]),
    (np.int64, []),
])
def test_the_largest_magnitude_beyond_2_24_is_refused_by_value(dtype, values):
    array = np.array(values, dtype)
    largest = max((abs(int(v)) for v in values), default=0)
    if largest <= 1 << 24:
        check_float32_exact("x", array)
        return
    with pytest.raises(TpudslError, match=f"^error: input 'x' holds the integer {largest}, which float32"):
        check_float32_exact("x", array)

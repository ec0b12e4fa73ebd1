"""tpu.RequantIntAxis in the Tpu interpreter against a separately written reference in Python ints
and fractions (tests/test_requant.py's `ref_round`): per channel c along rq_axis, quant row c =
(multiplier, -rshift, zero point), y = sat(round((x - zp_in) * m / 2^rshift) + zp)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.feature_tally import FeatureTally
from tests.test_requant import ref_round
from tpudsl.dialects.attrs import ROUND_MODES
from tpudsl.interp.kernel import KernelAttrs
from tpudsl.interp.kernels_tpu import TPU_KERNELS

INT32 = st.integers(-(2**31), 2**31 - 1)


def ref_axis(x: list[list[int]], rows: list[tuple[int, int, int]], zp_in: int, mode: str, lo: int, hi: int):
    """x[c][i] requantized with rows[c] = (m, -rshift, zp), exact rationals, by definition."""
    out = []
    for xs, (m, neg_shift, zp) in zip(x, rows, strict=True):
        rshift = min(-neg_shift, 63)
        out.append([max(lo, min(hi, ref_round(Fraction((v - zp_in) * m) / Fraction(2) ** rshift, mode) + zp))
                    for v in xs])
    return out


def run_axis(x: np.ndarray, quant: np.ndarray, mode: str, axis: int, out_dtype, zp_in: int = 0, zp_out: int = 0,
             fuse: bool = False) -> np.ndarray:
    attrs = KernelAttrs({"quant_mode": "MultiplierShift", "round_mode": mode, "rq_axis": axis, "fuse_rq_axis": fuse},
                        [x.shape], [np.dtype(out_dtype)], (None, None), [x.shape, quant.shape], ((zp_in, 0), zp_out))
    return TPU_KERNELS["tpu.RequantIntAxis"].run([x, quant], attrs)


def test_requant_int_axis_property():
    """Every int32 accumulator, every int32 multiplier, shifts -4..63 per channel, every round mode,
    int8 or uint8 results with a zero point: exact. Ties (where the modes differ) in a tenth of the
    examples, every mode, and channels whose shifts differ in a fifth, by construction: each mode
    has its own run, then a quarter of the examples have 2-4 channels, each a tie with its own shift."""
    tally = FeatureTally((*ROUND_MODES, "tie", "shifts differ"))

    def check(channels, xs, mode, unsigned, zp):
        lo, hi, dtype = (0, 255, np.uint8) if unsigned else (-128, 127, np.int8)
        zp = abs(zp) if unsigned else zp
        rows, data, ties = [], [], 0
        for m, acc, rshift, tie in channels:
            if tie:  # one product exactly half-way: an odd accumulator times 2^(rshift-1)
                rshift = 1 + rshift % 31
                m, xs_c = 2 ** (rshift - 1), [acc | 1, *xs[1:]]
            else:
                xs_c = [acc, *xs[1:]]
            rows.append((m, -rshift, zp))
            data.append(xs_c)
            ties += rshift > 0 and ((xs_c[0] * m) % 2**rshift) * 2 == 2**rshift
        x = np.array(data, np.int32).T.reshape(1, 3, len(channels))  # channels along the last axis
        quant = np.array(rows, np.int64).astype(np.int32)
        got = run_axis(x, quant, mode, 2, dtype, zp_out=zp, fuse=True)
        assert got.dtype == dtype
        want = ref_axis(data, rows, 0, mode, lo, hi)
        assert got[0].T.tolist() == want, (channels, xs, mode)
        tally.record({mode, *(["tie"] if ties else []), *(["shifts differ"] if len({r[1] for r in rows}) > 1 else [])})

    forced = settings.default.max_examples // 4
    per_mode = max(1, (settings.default.max_examples - forced) // len(ROUND_MODES))
    for mode in ROUND_MODES:
        settings(max_examples=per_mode)(given(
            st.lists(st.tuples(INT32, INT32, st.integers(-4, 63), st.booleans()), min_size=1, max_size=4),
            st.lists(INT32, min_size=3, max_size=3), st.just(mode), st.booleans(), st.integers(-3, 3))(check))()
    settings(max_examples=forced)(given(  # ties, each channel's shift (1 + rshift % 31) its own
        st.lists(st.tuples(INT32, INT32, st.integers(-4, 63), st.just(True)), min_size=2, max_size=4,
                 unique_by=lambda c: c[2] % 31),
        st.lists(INT32, min_size=3, max_size=3), st.sampled_from(ROUND_MODES), st.booleans(), st.integers(-3, 3))(check))()
    tally.assert_each_in(1 / 20, ROUND_MODES)
    tally.assert_each_in(1 / 10, ["tie"])
    tally.assert_each_in(1 / 5, ["shifts differ"])


@pytest.mark.parametrize("axis", [0, 1, 3])
def test_channels_follow_rq_axis_with_an_input_zero_point(axis):
    """The channel of each element is its index along rq_axis; an int8 input's zero point is
    subtracted first (a reference loop over every element)."""
    rng = np.random.default_rng(axis)
    x = rng.integers(-128, 128, (2, 3, 2, 4)).astype(np.int8)
    channels = x.shape[axis]
    rows = [(int(rng.integers(1, 2**20)), -int(rng.integers(0, 20)), 5) for _ in range(channels)]
    quant = np.array(rows, np.int32).reshape(1, channels, 1, 3)
    got = run_axis(x, quant, "HalfToEven", axis, np.int8, zp_in=-7, zp_out=5)
    for idx in np.ndindex(*x.shape):
        (want,), = ref_axis([[int(x[idx])]], [rows[idx[axis]]], -7, "HalfToEven", -128, 127)
        assert got[idx] == want, idx


def test_quant_zero_points_must_be_the_result_types():
    x = np.zeros((1, 2, 1, 1), np.int32)
    quant = np.array([[1, 0, 0], [1, 0, 3]], np.int32)
    with pytest.raises(ValueError, match=r"quant zero points \[0, 3\] differ from the result type's 0"):
        run_axis(x, quant, "HalfUp", 1, np.int8)


def test_other_quant_modes_are_an_error():
    attrs = KernelAttrs({"quant_mode": "TFLite", "round_mode": "HalfUp", "rq_axis": 1, "fuse_rq_axis": False},
                        [(1, 1)], [np.dtype(np.int8)])
    with pytest.raises(ValueError, match="quant_mode=TFLite is not modelled"):
        TPU_KERNELS["tpu.RequantIntAxis"].run([np.zeros((1, 1), np.int32), np.zeros((1, 3), np.int32)], attrs)


def test_reference_rounds_as_defined():
    # the reference itself, on values whose rounding is known by hand
    assert ref_axis([[5, -5]], [(1, -1, 0)], 0, "HalfAwayFromZero", -128, 127) == [[3, -3]]
    assert ref_axis([[5, -5]], [(1, -1, 0)], 0, "HalfToEven", -128, 127) == [[2, -2]]
    assert ref_axis([[1000]], [(1, 0, 0)], 0, "Down", -128, 127) == [[127]]
    assert math.floor(Fraction(-5, 2)) == -3

"""INT8 arithmetic (tpudsl/interp/requant.py) against a separately written reference in exact
rationals: Python ints and fractions.Fraction, no numpy, no shifts."""

import math
from fractions import Fraction

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st

from tests.feature_tally import FeatureTally
from tpudsl.dialects.attrs import ROUND_MODES
from tpudsl.interp.requant import quantize, requant, right_shift_round, scale_and_shift

INT32 = st.integers(-(2**31), 2**31 - 1)


def ref_round(q: Fraction, mode: str) -> int:
    """q rounded to an integer by `mode`, by the definition of each mode on the exact value."""
    lo = math.floor(q)
    frac = q - lo
    if frac == 0:
        return lo
    hi = lo + 1
    nearer = lo if frac < Fraction(1, 2) else hi if frac > Fraction(1, 2) else None
    if mode == "Up":
        return hi
    if mode == "Down":
        return lo
    if mode == "TowardsZero":
        return lo if q > 0 else hi
    if nearer is not None:
        return nearer
    tie = {"HalfUp": hi, "HalfDown": lo, "HalfAwayFromZero": hi if q > 0 else lo,
           "HalfTowardsZero": lo if q > 0 else hi, "HalfToEven": lo if lo % 2 == 0 else hi,
           "HalfToOdd": lo if lo % 2 == 1 else hi}
    return tie[mode]


def ref_requant(acc: int, multiplier: int, rshift: int, mode: str) -> int:
    value = Fraction(acc * multiplier) * Fraction(2) ** (-min(rshift, 63))
    return max(-128, min(127, ref_round(value, mode)))


def ref_scale_and_shift(scale: float) -> tuple[int, int]:
    """get_scale_and_shift read from its definition: the n in [-32, 30] (smallest on ties) whose
    m = round(s 2^n) (ties away from zero) fits below 2^31 - 1 and whose error |m/2^n - s|,
    rounded to float32, is least."""
    s = Fraction(float(np.float32(scale)))
    candidates = []
    for n in range(-32, 31):
        m = ref_round(s * Fraction(2) ** n, "HalfAwayFromZero")
        if abs(m) < 2**31 - 1:
            err = np.float32(float(abs(Fraction(m) / Fraction(2) ** n - s)))
            candidates.append((err, n, m))
    err, n, m = min(candidates)
    return m, n


def test_rounding_modes_are_all_modelled():
    for mode in ROUND_MODES:
        assert right_shift_round(np.array([5]), 1, mode)[0] == ref_round(Fraction(5, 2), mode)


def test_requant_property():
    """Every int32 accumulator, every int32 multiplier, shifts -4..63, every round mode: exact.
    Each mode must occur, and ties (the case the modes differ on) in a tenth of the examples, by
    construction: each mode has its own run (a tie made in about half of it), then a fifth of the
    examples are ties, in any mode."""
    tally = FeatureTally((*ROUND_MODES, "tie"))

    def check(acc, multiplier, rshift, mode, make_tie):
        if make_tie:  # a product exactly half-way between two integers (multiplier < 2^31)
            rshift = 1 + rshift % 31
            acc, multiplier = acc | 1, 2 ** (rshift - 1)
        got = int(requant(np.array([acc]), multiplier, rshift, mode)[0])
        assert got == ref_requant(acc, multiplier, rshift, mode), (acc, multiplier, rshift, mode)
        unsaturated = int(right_shift_round(np.array([acc * multiplier]), rshift, mode)[0])
        exact = Fraction(acc * multiplier) * Fraction(2) ** (-min(rshift, 63))
        # a left shift beyond int64 is held at +-2^62 (requant.py's documented saturation)
        assert unsaturated == max(-(2**62), min(2**62, ref_round(exact, mode)))
        tally.record({mode, *(["tie"] if rshift > 0 and (exact - math.floor(exact)) == Fraction(1, 2) else [])})

    ties = settings.default.max_examples // 5
    per_mode = max(1, (settings.default.max_examples - ties) // len(ROUND_MODES))
    for mode in ROUND_MODES:
        settings(max_examples=per_mode)(given(INT32, INT32, st.integers(-4, 63), st.just(mode), st.booleans())(check))()
    settings(max_examples=ties)(given(INT32, INT32, st.integers(-4, 63), st.sampled_from(ROUND_MODES),
                                      st.just(True))(check))()
    tally.assert_each_in(1 / 20, ROUND_MODES)
    tally.assert_each_in(1 / 10, ["tie"])


def test_scale_and_shift_property():
    @given(st.floats(2.0**-30, 2.0**10, width=32))
    def check(scale):
        multiplier, rshift = scale_and_shift(scale)
        assert (multiplier, rshift) == ref_scale_and_shift(scale)
        assert abs(multiplier) < 2**31 - 1
        event("left shift" if rshift < 0 else "right shift")

    check()


def test_scale_and_shift_examples():
    # An exact float32 is found exactly at the first n where m = s 2^n is an integer: 0.5 at n = 1;
    # float32(0.0123) = 825439 / 2^26 (odd numerator), so n = 26.
    assert scale_and_shift(0.5) == (1, 1)
    assert Fraction(float(np.float32(0.0123))) == Fraction(825439, 2**26)
    assert scale_and_shift(0.0123) == (825439, 26)
    # Beyond 2^31 at every n >= 0, a scale is approximated with a left shift.
    assert scale_and_shift(2.0**33 + 2.0**10) == (2**23 + 1, -10)


def test_quantize_rounds_half_away_and_saturates():
    x = np.array([0.5, -0.5, 1.5, -1.5, 0.49999999999999994, 1e9, -1e9, np.inf, -np.inf])
    assert quantize(x, 1.0).tolist() == [1, -1, 2, -2, 0, 127, -128, 127, -128]

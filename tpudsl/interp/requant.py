"""INT8 arithmetic, written once: the INT8 lowering computes its constants here and the Tpu
interpreter's INT8 kernels compute with them here (docs/quantization.md, "INT8 arithmetic").

It lives in interp/ because the interpreter may not import lowering/ (docs/architecture.md) while
lowering may import interp/. No dialect here: numbers and numpy arrays only.

* `scale_and_shift(s)`: TPU-MLIR's `get_scale_and_shift(s, m, n, 32)` (MathUtils.cpp), the
  bm1684x choice of an int32 multiplier m and a right shift n with m / 2^n closest to s.
* `right_shift_round(x, n, mode)`: TPU-MLIR's `RightShiftRound`, x / 2^n rounded by one of the
  `#tpu<round_mode>` cases, on int64 (n < 0 shifts left).
* `requant(acc, m, n, mode)`: `applyMultiplierAndRShift` in MultiplierShift mode then saturation
  to int8: sat(right_shift_round(acc * m, n)); asymmetric: plus the output zero point, saturated to
  the storage type (int8 or uint8).
* `asymmetric_params(lo, hi)`: TPU-MLIR's getScaleAndZeroPoint for a range.
"""

from __future__ import annotations

import math

import numpy as np

INT8_MIN, INT8_MAX = -128, 127
INT32_MAX = 2**31 - 1


def round_half_away(x: float) -> int:
    """C's std::round: halves away from zero."""
    a = abs(x)
    r = math.floor(a)
    r += a - r >= 0.5  # exact, unlike floor(a + 0.5) (0.49999999999999994 + 0.5 rounds to 1)
    return int(-r if x < 0 else r)


def scale_and_shift(scale: float) -> tuple[int, int]:
    """(multiplier, rshift) with multiplier / 2^rshift closest to `scale` (a float32), as
    TPU-MLIR's get_scale_and_shift with bitwidth 32: for n = -32..30 in order, m = round(s * 2^n)
    (half away from zero); n is kept when |m| < INT32_MAX and the float32 error |m / 2^n - s| is
    below the best so far (ties keep the smaller n). A candidate whose m does not fit an int
    (C's cast would be undefined there) is skipped."""
    s = float(np.float32(scale))
    if not math.isfinite(s):
        round_half_away(s)  # the error the first candidate raised (inf or nan has no integer)
    # All 63 candidates at once (the lowering asks for one pair per channel): float64 holds every
    # s * 2^n exactly and every kept m (below 2^31), so each value is the scalar loop's.
    m = round_half_away_array(s * _POW2)
    err = np.abs(m / _POW2 - s).astype(np.float32)
    err[np.abs(m) >= INT32_MAX] = np.inf
    best_n = int(_SHIFTS[np.argmin(err)]) if np.isfinite(err).any() else 0  # argmin: the first least, the smaller n
    return round_half_away(s * 2.0**best_n), best_n


_SHIFTS = np.arange(-32, 31)
_POW2 = np.ldexp(1.0, _SHIFTS)


def right_shift_round(x: np.ndarray, shift: np.ndarray | int, mode: str) -> np.ndarray:
    """x / 2^shift rounded by `mode` (a #tpu<round_mode> case), elementwise on int64.

    val = floor(x / 2^n), mant = x - val * 2^n in [0, 2^n), half = 2^(n-1); then val is kept or
    incremented: HalfUp mant >= half; HalfDown mant > half; HalfAwayFromZero (x >= 0 and
    mant >= half) or (x < 0 and mant > half); HalfTowardsZero the reverse; HalfToEven / HalfToOdd
    mant > half, or mant == half and val odd / even; TowardsZero x < 0 and mant != 0; Up mant != 0;
    Down never. n = 0 returns x, n < 0 is x << -n (held at +-2^62 rather than wrapping: it saturates
    the same), n > 63 counts as 63 (as TPU-MLIR)."""
    x = np.asarray(x, dtype=np.int64)
    n = np.minimum(np.asarray(shift, dtype=np.int64), 63)
    left = n < 0
    pos = np.where(left, 0, n)
    val = x >> pos
    mant = x - (val << pos)
    half = np.where(pos > 0, np.int64(1) << np.maximum(pos - 1, 0), 1)  # unused where pos == 0
    neg = x < 0
    odd = (val & 1) == 1
    if mode == "HalfUp":
        up = mant >= half
    elif mode == "HalfDown":
        up = mant > half
    elif mode == "HalfAwayFromZero":
        up = np.where(neg, mant > half, mant >= half)
    elif mode == "HalfTowardsZero":
        up = np.where(neg, mant >= half, mant > half)
    elif mode == "HalfToEven":
        up = (mant > half) | ((mant == half) & odd)
    elif mode == "HalfToOdd":
        up = (mant > half) | ((mant == half) & ~odd)
    elif mode == "TowardsZero":
        up = neg & (mant != 0)
    elif mode == "Up":
        up = mant != 0
    elif mode == "Down":
        up = np.zeros(x.shape, dtype=bool)
    else:
        raise ValueError(f"round_mode {mode} has no INT8 arithmetic")
    out = np.where(pos > 0, val + up, x)
    return np.where(left, _left_shift(x, np.where(left, -n, 0)), out)


def _left_shift(x: np.ndarray, k: np.ndarray) -> np.ndarray:
    """x * 2^k (k >= 0), held at +-2^62 where it would not fit int64 (instead of wrapping): any such
    value is far beyond every storage type, so the saturation that follows is unchanged."""
    k = np.minimum(k, 62)
    bound = np.int64(1) << (62 - k)
    return np.clip(x, -bound, bound) << k


def saturate(x: np.ndarray, lo: int = INT8_MIN, hi: int = INT8_MAX, dtype=np.int8) -> np.ndarray:
    return np.clip(x, lo, hi).astype(dtype)


def store(x: np.ndarray, zero_point: int = 0, dtype=np.int8) -> np.ndarray:
    """x + zero_point saturated to the storage type's range (int8 or uint8)."""
    info = np.iinfo(dtype)
    return saturate(np.asarray(x, np.int64) + zero_point, info.min, info.max, dtype)


def requant(acc: np.ndarray, multiplier: np.ndarray | int, rshift: np.ndarray | int, mode: str,
            zero_point: int = 0, dtype=np.int8) -> np.ndarray:
    """sat(right_shift_round(acc * multiplier, rshift, mode) + zero_point) in `dtype` (int8 unless
    asymmetric); multiplier and rshift broadcast against acc (per channel: shaped [C, 1, 1]).
    |acc| < 2^31 and |multiplier| < 2^31, so the product fits int64 exactly."""
    product = np.asarray(acc, dtype=np.int64) * np.asarray(multiplier, dtype=np.int64)
    return store(right_shift_round(product, rshift, mode), zero_point, dtype)


def asymmetric_params(lo: float, hi: float) -> tuple[float, int, bool]:
    """(scale, zero_point, signed) of a range, TPU-MLIR's getScaleAndZeroPoint with the range
    first widened to hold 0 (so that 0.0, the pad value, is exact): a range with lo >= 0 is uint8
    [0, 255], any other int8 [-128, 127]; scale = (hi - lo) / 255, zero point = qmin - lo / scale
    rounded half away and kept in [qmin, qmax]."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    signed = lo < 0
    qmin, qmax = (INT8_MIN, INT8_MAX) if signed else (0, 255)
    scale = (hi - lo) / (qmax - qmin)
    return scale, min(max(round_half_away(qmin - lo / scale), qmin), qmax), signed


def quantize(x: np.ndarray, scale: float, lo: int = INT8_MIN, hi: int = INT8_MAX, dtype=np.int8,
             zero_point: int = 0) -> np.ndarray:
    """sat(round_half_away(x / scale) + zero_point), the division in float64 (f32 -> int8 Cast,
    weights, Lut); +-inf saturates, NaN is an error (it has no int8 value)."""
    q = np.asarray(x, dtype=np.float64) / scale
    if np.isnan(q).any():
        raise ValueError("a NaN cannot be quantized to int8")
    return saturate(round_half_away_array(q) + zero_point, lo, hi, dtype)


def round_half_away_array(q: np.ndarray) -> np.ndarray:
    """`round_half_away` element-wise on float64 (exact, unlike floor(|q| + 0.5)); +-inf stays."""
    a = np.abs(q)
    r = np.floor(a)
    with np.errstate(invalid="ignore"):  # inf - inf: r stays inf, which a clip saturates
        r += a - r >= 0.5
    return np.copysign(r, q)


def dequantize(q: np.ndarray, scale: float, zero_point: int = 0) -> np.ndarray:
    """float32((q - zero_point) * scale), the product in float64 (int8 -> f32 Cast)."""
    return ((np.asarray(q, dtype=np.float64) - zero_point) * scale).astype(np.float32)

"""The cmodel's F16/BF16 ReduceL1, ReduceL2 and ReduceProd (BdcReduce modes 4-6): the exact value
rounded once to the record's type, ties to even (docs/quantization.md, "F16/BF16 arithmetic").
Written again from that definition, not imported from the interpreter; like arith_half.py, a
float64 value with an error bound decides almost every element, Fractions the rest.

L1 is the exact sum of |x| (arith_half.products). L2: the square root of the exact sum of squares
(squares of f16/bf16 values are exact in float64); an undecided element compares its exact sum of
squares with the squares of the midpoints around a first guess. Prod: the float64 product where no
partial product can leave float64's range (the factors' binary exponents sum below 900 in
magnitude), else, and where the bound does not decide, the exact product as a Fraction. A product
that is exactly zero keeps the sign of the product of the signs; inf and NaN as IEEE."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from tpudsl.backend.cmodel import arith_half


def l1(x: np.ndarray) -> np.ndarray:
    a = np.abs(x.astype(np.float64))
    s = a.sum(axis=1, keepdims=True)
    return arith_half.products(s, s, x.shape[1], x.dtype, lambda i: a[i[0], :, i[2], i[3]])


def _value(bits: int, dt: np.dtype) -> float:
    return float(np.array(bits, np.uint16).view(dt))


def _sqrt_rounded(total: Fraction, dt: np.dtype) -> float:
    """sqrt(total) rounded to dt: starting below a float guess, step up while the exact root
    lies beyond the midpoint to the next value (a tie goes to the even bit pattern)."""
    if total == 0:
        return 0.0
    guess = np.array(math.sqrt(float(total))).astype(dt)
    inf_bits = int(np.array(np.inf).astype(dt).view(np.uint16))
    best = max(min(int(guess.view(np.uint16)), inf_bits) - 1, 0)
    while best < inf_bits:
        a = Fraction(_value(best, dt))
        up = _value(best + 1, dt)
        # past the largest finite value the next value is its double ulp away (where inf begins)
        b = Fraction(up) if math.isfinite(up) else 2 * a - Fraction(_value(best - 1, dt))
        mid = (a + b) / 2
        if total > mid * mid or (total == mid * mid and best % 2):
            best += 1
        else:
            break
    return _value(best, dt)


def l2(x: np.ndarray) -> np.ndarray:
    sq = np.square(x.astype(np.float64))
    q = np.sqrt(sq.sum(axis=1, keepdims=True))
    bound = q * (x.shape[1] + 4) * 2.0**-52
    low, high = (q - bound).astype(x.dtype), (q + bound).astype(x.dtype)
    y = low.astype(np.float64)
    for index in zip(*np.nonzero(~(low == high)), strict=True):
        terms = sq[index[0], :, index[2], index[3]]
        if not np.all(np.isfinite(terms)):
            y[index] = float(np.sqrt(terms.sum()))
        else:
            y[index] = _sqrt_rounded(sum((Fraction(t) for t in terms.tolist()), Fraction(0)), x.dtype)
    return y.astype(x.dtype)


def _exact_product(factors: np.ndarray, dt: np.dtype) -> float:
    signs = math.prod(-1 if s else 1 for s in np.signbit(factors).tolist())
    if np.isnan(factors).any() or (np.isinf(factors).any() and (factors == 0).any()):
        return math.nan
    if np.isinf(factors).any():
        return math.copysign(math.inf, signs)
    if (factors == 0).any():
        return math.copysign(0.0, signs)
    return arith_half._round_fraction(math.prod(Fraction(f) for f in factors.tolist()), dt)


def prod(x: np.ndarray) -> np.ndarray:
    xf = x.astype(np.float64)
    exponents = np.abs(np.frexp(xf)[1]).sum(axis=1, keepdims=True)
    safe = (exponents < 900) & np.all(np.isfinite(xf), axis=1, keepdims=True)
    p = np.prod(xf, axis=1, keepdims=True)
    bound = np.abs(p) * (x.shape[1] + 2) * 2.0**-52
    low, high = (p - bound).astype(x.dtype), (p + bound).astype(x.dtype)
    y = low.astype(np.float64)
    for index in zip(*np.nonzero(~((low == high) & safe)), strict=True):
        y[index] = _exact_product(xf[index[0], :, index[2], index[3]], x.dtype)
    return y.astype(x.dtype)


# BdcReduce mode -> the F16/BF16 kernel (reducing axis 1 of (n, c, h, w), keeping it as size 1).
HALF_MODES = {4: l1, 5: l2, 6: prod}

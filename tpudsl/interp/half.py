"""F16/BF16 reductions of the Tpu interpreter: the exact value, rounded once (docs/quantization.md,
"F16/BF16 arithmetic").

A Conv, Deconv, MatMul, average pool, ReduceSum/Mean or Softmax in F16/BF16 gives the exact real
value of its sum (products of f16/bf16 values are exact in float64; a float32 bias is one more
term; a mean or a softmax divides the exact sum), rounded once to the result type, to nearest
even. That value does not depend on any order of summation, so the cmodel (which writes the same
definition again, backend/cmodel/arith_half.py) reproduces it bit for bit.

How it is computed: BLAS sums in float64 (`s`, any order) and a bound `a` of the sum of the terms'
magnitudes; |s - exact| <= (n - 1) 2^-53 a (the classic bound for n terms summed in any order,
products exact), so wherever both ends of [s - err, s + err] round to the same value that value is
the answer. The few elements whose interval straddles a rounding boundary (an exact tie, heavy
cancellation) are summed exactly: math.fsum (correctly rounded float64) plus the sign of the
remainder decides a tie, or Fractions where the sum is divided.

Norms (LayerNorm, GroupNorm, InstanceNorm) round at fixed points in float64 instead
(kernels_tpu_half.py): fsum for their sums, one float64 operation per step.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import NamedTuple

import functools

import numpy as np

from tpudsl.interp.kernel import Array


class Format(NamedTuple):
    bits: int  # significand bits, the hidden one included
    emin: int  # exponent of the smallest normal value
    largest: float
    dtype: np.dtype


@functools.cache
def _formats() -> dict[str, Format]:
    import ml_dtypes  # here, not at import: it takes 0.5 s (module_interpreter._ml_dtype)

    return {
        "float16": Format(11, -14, 65504.0, np.dtype(np.float16)),
        "bfloat16": Format(8, -126, float(ml_dtypes.finfo(ml_dtypes.bfloat16).max), np.dtype(ml_dtypes.bfloat16)),
    }

_U = 2.0**-53  # float64's unit roundoff


# float32 as a format: the Tpu ops whose F32 result is also their exact value rounded once (EXACT_F32)
F32 = Format(24, -126, float(np.finfo(np.float32).max), np.dtype(np.float32))


def half_format(dtype: np.dtype | None) -> Format | None:
    """The format of an F16/BF16 result type, None for any other."""
    name = None if dtype is None else np.dtype(dtype).name
    return _formats()[name] if name in ("float16", "bfloat16") else None


def round_to(x: Array, fmt: Format, sticky: Array | None = None) -> Array:
    """float64 values rounded to the format (nearest, ties to even; beyond the largest finite value
    inf), as float64. `sticky`: the sign of (exact value - x) where x is itself rounded, which
    breaks what would otherwise look like a tie."""
    p, emin, largest, _ = fmt
    x = np.asarray(x, np.float64)
    _, e = np.frexp(x)  # x = m 2^e, 1/2 <= |m| < 1
    q_exp = np.maximum(e - 1, emin) - (p - 1)  # the exponent of the format's unit in the last place
    q = np.ldexp(x, -q_exp)
    r = np.rint(q)
    if sticky is not None:
        tie = np.abs(q - np.trunc(q)) == 0.5
        r = np.where(tie & (sticky > 0), np.ceil(q), np.where(tie & (sticky < 0), np.floor(q), r))
    y = np.ldexp(r, q_exp)
    return np.where(np.abs(y) > largest, np.copysign(np.inf, x), y)


def _decide(low: Array, high: Array, fmt: Format) -> tuple[Array, Array]:
    """Both ends rounded to the format, as float64. numpy's float16 and ml_dtypes' bfloat16
    conversions from float64 round directly (not through float32: round_to's definition, which
    the ties behind a nudge in tests/test_half_exact.py would tell apart), and 5x faster."""
    return low.astype(fmt.dtype).astype(np.float64), high.astype(fmt.dtype).astype(np.float64)


def _exact_sum(terms: Array) -> tuple[float, float]:
    """(the float64 nearest the exact sum, the sign of what is left over)."""
    if not np.isfinite(terms).all():
        return float(np.sum(terms)), 0.0  # inf or nan whatever the order
    values = terms.tolist()
    f = math.fsum(values)
    rest = math.fsum([*values, -f])
    return f, float((rest > 0) - (rest < 0))


def _exact_quotient(terms: Array, divisor: float) -> tuple[float, float]:
    if not np.isfinite(terms).all() or divisor == 0:  # a window without counted elements: NaN
        return float(np.float64(np.sum(terms)) / divisor), 0.0
    exact = sum(map(Fraction, terms.tolist())) / Fraction(divisor)
    f = float(exact)
    return f, float((exact > f) - (exact < f))


def _rounded(q: Array, err: Array, fmt: Format, exact: Callable[[tuple[int, ...]], tuple[float, float]]) -> Array:
    """q rounded to fmt where all of [q - err, q + err] rounds to one value; elsewhere
    round_to(*exact(index)). A zero result is +0 (the sign of a float64 zero sum depends on the order)."""
    lo, hi = _decide(q - err, q + err, fmt)
    undecided = np.argwhere(~(lo == hi))
    if len(undecided):
        f, sticky = np.array([exact(i) for i in map(tuple, undecided)]).reshape(-1, 2).T
        lo[tuple(undecided.T)] = round_to(f, fmt, sticky)
    return lo + 0.0


def _certified(s: Array, a: Array, n: int, fmt: Format, divisor: Array | None,
               terms: Callable[[tuple[int, ...]], Array]) -> Array:
    """The float64 sums s of n terms (a: a bound of their magnitudes' sums) rounded exactly, each
    divided by divisor[index] when given; terms(index) lists an element's terms."""
    err = (2 * n + 4) * _U * a  # twice the bound: also covers rounding s +- err
    if divisor is None:
        return _rounded(s, err, fmt, lambda i: _exact_sum(terms(i)))
    q = s / divisor
    err = (err / divisor + 4 * _U * np.abs(q)) * (1 + 2.0**-40)
    return _rounded(q, err, fmt, lambda i: _exact_quotient(terms(i), float(divisor[i])))


def _norms(x: Array, axis: int) -> Array:
    """An upper bound of the Euclidean norms along `axis` (squares are exact in float64 for
    f16/bf16 values; the float64 sum is within k 2^-53 of its size)."""
    return np.sqrt(np.einsum("...ij,...ij->...j" if axis == -2 else "...ij,...ij->...i", x, x)) * (1 + 2.0**-30)


def dot(left: Array, right: Array, bias: Array | None, fmt: Format) -> Array:
    """round(left @ right + bias) exactly: left (..., m, k), right (..., k, n) with broadcasting
    batch dims, float64 (f16/bf16 values); bias broadcasts to the result (float32 values).

    The sum of magnitudes the bound needs is bounded by Cauchy-Schwarz, |row| |column| (k < 2^20),
    which costs two passes over the operands instead of a second product."""
    s = left @ right
    a = _norms(left, -1)[..., :, None] * _norms(right, -2)[..., None, :]
    if bias is not None:
        s, a = s + bias, a + np.abs(bias)
    batch = s.shape[:-2]
    lb, rb = np.broadcast_to(left, batch + left.shape[-2:]), np.broadcast_to(right, batch + right.shape[-2:])
    bb = None if bias is None else np.broadcast_to(bias, s.shape)

    def terms(index: tuple[int, ...]) -> Array:
        *b, i, j = index
        products = lb[(*b, i)] * rb[(*b, slice(None), j)]
        return products if bb is None else np.append(products, bb[index])

    return _certified(s, a, left.shape[-1] + (bias is not None), fmt, None, terms)


def sums(t: Array, divisor: Array | None, fmt: Format) -> Array:
    """round(sum of t along its last axis / divisor) exactly (divisor None: the sum)."""
    return _certified(t.sum(axis=-1), np.abs(t).sum(axis=-1), t.shape[-1], fmt,
                      None if divisor is None else np.broadcast_to(divisor, t.shape[:-1]), lambda i: t[i])


def fsum_rows(rows: Array) -> Array:
    """The float64 nearest each row's exact sum (rows: 2-D float64)."""
    return np.array([math.fsum(r) for r in rows.tolist()], np.float64).reshape(rows.shape[0])


def quotients(e: Array, fmt: Format) -> Array:
    """round(e / the exact sum of e along the last axis) for e >= 0 (softmax's exponentials): the
    float64 sum of n non-negative terms is within (n - 1) 2^-53 of its own size."""
    q = e / e.sum(axis=-1, keepdims=True)
    err = q * ((4 * e.shape[-1] + 16) * _U)
    totals: dict[tuple[int, ...], Fraction] = {}

    def exact(index: tuple[int, ...]) -> tuple[float, float]:
        row = e[index[:-1]]
        if not np.isfinite(row).all():
            return float(q[index]), 0.0
        if index[:-1] not in totals:
            totals[index[:-1]] = sum(map(Fraction, row.tolist()))
        value = Fraction(float(e[index])) / totals[index[:-1]]
        f = float(value)
        return f, float((value > f) - (value < f))

    return _rounded(q, err, fmt, exact)


def _sqrt_sticky(total: Fraction) -> tuple[float, float]:
    """(sqrt(total) truncated to about 50 significant bits, 1.0 when the rest is not zero): exact
    integer square roots (total > 0, its denominator a power of two). round_to with this sticky
    is the correctly rounded square root: the truncation's grid is finer than the format's halves."""
    num, den = total.numerator, total.denominator
    scale = den.bit_length() - 1  # total = num / 2^scale, scale made even
    if scale % 2:
        num, scale = num * 2, scale + 1
    t = (num.bit_length() - 100) // 2  # num / 4^t has about 100 bits, its root about 50
    part = num >> 2 * t if t > 0 else num << -2 * t
    root = math.isqrt(part)
    exact = root * root == part and (t <= 0 or part << 2 * t == num)
    return math.ldexp(root, t - scale // 2), 0.0 if exact else 1.0


def norms(t: Array, fmt: Format) -> Array:
    """round(sqrt(the exact sum of t * t along the last axis)) exactly (ReduceL2): the squares of
    f16/bf16 values are exact in float64, the float64 sum of n of them is within (n - 1) 2^-53 of
    itself, and the square root halves that."""
    sq = t * t
    q = np.sqrt(sq.sum(axis=-1))

    def exact(index: tuple[int, ...]) -> tuple[float, float]:
        terms = sq[index]
        if not np.isfinite(terms).all():
            return float(np.sqrt(np.sum(terms))), 0.0
        total = sum(map(Fraction, terms.tolist()), Fraction(0))
        return (0.0, 0.0) if total == 0 else _sqrt_sticky(total)

    return _rounded(q, q * ((t.shape[-1] + 4) * _U), fmt, exact)


def products(t: Array, fmt: Format) -> Array:
    """round(the exact product along the last axis) (ReduceProd): mantissas and exponents apart
    (np.frexp) so that no partial product leaves float64's range; the float64 product of n
    mantissas is within (n - 1) 2^-53 of its own size. A product that is exactly zero has the sign
    of the product of the signs (IEEE's rule for one multiplication); inf and NaN as IEEE's."""
    m, e = np.frexp(t)
    mantissa, exponent = m.prod(axis=-1), e.sum(axis=-1)
    q = np.ldexp(mantissa, np.clip(exponent, -2000, 2000))  # beyond: 0 or inf in both formats
    lo, hi = _decide(q - np.abs(q) * ((t.shape[-1] + 2) * 2 * _U), q + np.abs(q) * ((t.shape[-1] + 2) * 2 * _U), fmt)
    y = np.where(np.isfinite(q), lo, q)
    for index in map(tuple, np.argwhere(np.isfinite(q) & ~(lo == hi))):
        exact = math.prod(map(Fraction, t[index].tolist()))
        f = float(exact)
        y[index] = round_to(np.array(f), fmt, np.array(float((exact > f) - (exact < f))))
    return y

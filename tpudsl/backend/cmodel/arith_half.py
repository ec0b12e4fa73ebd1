"""The cmodel's F16/BF16 reductions (docs/quantization.md, "F16/BF16 arithmetic"): the records
BdcConv, BdcDeconv, BdcMatMul (and BdcMatMulA16, its weight first dequantized: `dequantize`),
BdcPool (average), BdcReduce (sum, mean) and BdcSoftmax give the
exact value of their sum (or its quotient), rounded once to the record's type, ties to even;
BdcLayerNorm and BdcGroupNorm round at fixed float64 steps. Written again from that definition,
never imported from the interpreter (which is what the cmodel is checked against).

The exact value is certain without computing it exactly almost everywhere: float64 sums of n
exact terms are within (n - 1) 2^-53 of their sum of magnitudes whatever the order, so an element
whose whole error interval rounds to one value of the type has that value. The others are
computed as Fractions and rounded by integer arithmetic (`_round_fraction`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np

# numpy dtype name of the record -> (precision in bits, smallest normal exponent); by name, so that
# ml_dtypes (0.5 s to import) is loaded only where a bf16 tensor is
_PRECISION = {"float16": (11, -14), "bfloat16": (8, -126)}
# float32 too, for the records that round their exact value once in F32 as well (BdcSoftmax)
_ROUNDING = {**_PRECISION, "float32": (24, -126)}


def is_half(dt: np.dtype) -> bool:
    return np.dtype(dt).name in _PRECISION


def nibbles(packed: np.ndarray) -> np.ndarray:
    """BdcMatMulA16's 4-bit right side (batch, k / 2, n_out) as (batch, k, n_out): row 2i is each
    byte's low four bits, row 2i + 1 its high four."""
    b, half_k, n = packed.shape
    out = np.empty((b, 2 * half_k, n), np.uint8)
    out[:, 0::2], out[:, 1::2] = packed % 16, packed // 16
    return out


def dequantize(q: np.ndarray, scale: np.ndarray, zp: np.ndarray | None) -> np.ndarray:
    """BdcMatMulA16's right side (k, n_out): each 8-bit integer minus its zero point times its
    f16/bf16 scale, rounded once to the scale's type; scale and zp are (n_out, groups), group g of
    column j covering rows g k/groups .. (g + 1) k/groups - 1. The product is exact in float32
    (at most 9 + 11 significant bits), so float32's product cast to the type is that one rounding."""
    rows = q.shape[0] // scale.shape[1]
    s = np.repeat(scale.T.astype(np.float32), rows, axis=0)
    z = np.float32(0) if zp is None else np.repeat(zp.T.astype(np.float32), rows, axis=0)
    return ((q.astype(np.float32) - z) * s).astype(scale.dtype)


def _round_fraction(v: Fraction, dt: np.dtype) -> float:
    """v rounded to the type dt (nearest, ties to even; overflow: inf), by integer arithmetic."""
    if v == 0:
        return 0.0
    p, emin = _ROUNDING[np.dtype(dt).name]
    mag = abs(v)
    e = mag.numerator.bit_length() - mag.denominator.bit_length()  # floor(log2 mag) is e or e - 1
    if Fraction(2) ** e > mag:
        e -= 1
    unit = Fraction(2) ** (max(e, emin) - p + 1)
    y = math.copysign(float(round(mag / unit) * unit), v)  # Fraction's round: half to even
    import ml_dtypes

    largest = float(ml_dtypes.finfo(dt).max)
    return math.copysign(math.inf, y) if abs(y) > largest else y


def _decide(sums: np.ndarray, bound: np.ndarray, dt: np.dtype, exact: Callable[[tuple[int, ...]], Fraction | float]):
    """The type's value of every element whose interval sums +- bound rounds to one value; the
    rest from `exact(index)` (a Fraction, or a float for inf / nan sums)."""
    low, high = (sums - bound).astype(dt), (sums + bound).astype(dt)
    y = low.astype(np.float64)
    for index in zip(*np.nonzero(~(low == high)), strict=True):
        v = exact(index)
        y[index] = _round_fraction(v, dt) if isinstance(v, Fraction) else v
    return (y + 0.0).astype(dt)  # a zero sum is +0, whatever the order of its float64 sums gave


def _exact(terms: np.ndarray, divisor: float = 1.0) -> Fraction | float:
    if not np.all(np.isfinite(terms)) or divisor == 0:  # inf or nan whatever the order
        return float(np.float64(np.sum(terms)) / divisor)
    return sum((Fraction(t) for t in terms.ravel().tolist()), Fraction(0)) / Fraction(divisor)


def products(s: np.ndarray, a: np.ndarray, n: int, dt: np.dtype, terms_at: Callable[[tuple[int, ...]], np.ndarray]):
    """Round the float64 sums s of n exact terms (a: their float64 sums of magnitudes) to dt;
    `terms_at(index)` lists an element's terms when the bound does not decide it."""
    return _decide(s, (n + 2) * 2.0**-52 * a, dt, lambda i: _exact(terms_at(i)))


def means(s: np.ndarray, a: np.ndarray, n: int, count: np.ndarray, dt: np.dtype,
          terms_at: Callable[[tuple[int, ...]], np.ndarray]):
    """Round (the exact sum of n terms) / count to dt (s, a as for `products`)."""
    q = s / count
    bound = ((n + 2) * 2.0**-52 * a / count + 2.0**-50 * np.abs(q)) * (1 + 2.0**-40)
    count = np.broadcast_to(count, s.shape)
    return _decide(q, bound, dt, lambda i: _exact(terms_at(i), float(count[i])))


def softmax(e: np.ndarray, dt: np.dtype) -> np.ndarray:
    """e / the exact sum of e along axis 1 (e >= 0), rounded to dt."""
    total = e.sum(axis=1, keepdims=True)
    q = e / total
    relative = (2 * e.shape[1] + 8) * 2.0**-52

    def exact(index):
        column = e[index[0], :, index[2], index[3]]
        if not np.all(np.isfinite(column)):
            return float(q[index])
        return Fraction(float(e[index])) / _exact(column)

    return _decide(q, q * relative, dt, exact)


def fsum_along(x: np.ndarray, axis: int) -> np.ndarray:
    """The float64 nearest the exact sum along `axis` (kept as a size-1 dim)."""
    moved = np.moveaxis(x, axis, -1)
    flat = [math.fsum(row) for row in moved.reshape(-1, moved.shape[-1]).tolist()]
    return np.moveaxis(np.array(flat, np.float64).reshape(*moved.shape[:-1], 1), -1, axis)


def normalize(x: np.ndarray, axis: int, eps: float) -> np.ndarray:
    """(x - m) / sqrt(v + eps) along `axis`, float64: m = fsum(x) / d, c = x - m,
    v = fsum(c * c) / d, eps the record's float32."""
    d = x.shape[axis]
    c = x - fsum_along(x, axis) / d
    return c / np.sqrt(fsum_along(c * c, axis) / d + float(np.float32(eps)))

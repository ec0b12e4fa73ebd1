"""The cmodel's INT8 arithmetic, written again from docs/quantization.md ("INT8 arithmetic") and the
INT8 records of isa.py, on int64 numpy. The Tpu interpreter's INT8 kernels (tpudsl/interp/requant.py)
are what the cmodel is checked against, bit for bit, so they are never imported here.

* shift_round(x, n, mode): x / 2^n rounded by a round mode (isa.ROUND_MODES code). With
  val = floor(x / 2^n), mant = x - val 2^n and half = 2^(n-1), the result is val, or val + 1
  where the mode's rule below says so; n = 0 is x, n < 0 is x 2^-n (held at +-2^62 where it would
  overflow int64: it saturates the same), n > 63 counts as 63.
* requantize: sat8(shift_round(acc * multiplier, rshift, mode)), sat8 clamping to [-128, 127].
* scale_and_shift(s): get_scale_and_shift at 32 bits: s rounded to float32; over n = -32 .. 30,
  m = round half away(s 2^n) where |m| < 2^31 - 1, the n whose float32 error |m / 2^n - s| is the
  first smallest; (m, n).
* quantize: sat(round half away from zero of x / scale + zp), the division in float64; NaN has no
  int8 value (a fault). dequantize: float32((q - zp) * scale), the product in float64.
* store: sat(y + zp) to a record's out_dtype, int8 [-128, 127] or uint8 [0, 255] (asymmetric INT8:
  the zero point is added after the rounding shift, docs/quantization.md).
* const_sum (BdcConstSumQ, INT8 AddConst / SubConst): p = (x - in_zp) m; acc = p + C, p - C or
  (reverse) C - p; sat(shift_round(acc, rshift, mode) + out_zp), one rounding of the sum.
* softmax: e = table[max - x] along C, S = sum e, sat(round half away((e / S) / scale) + zp).
"""

from __future__ import annotations

import numpy as np

from tpudsl.backend import isa
from tpudsl.backend.cmodel import arith

# round_mode code -> when val + 1 (mant, half, x < 0, val odd), as docs/quantization.md lists them
_ROUND_UP = {
    0: lambda m, h, neg, odd: np.where(neg, m > h, m >= h),  # HalfAwayFromZero
    1: lambda m, h, neg, odd: m >= h,  # HalfUp
    2: lambda m, h, neg, odd: m > h,  # HalfDown
    3: lambda m, h, neg, odd: (m > h) | ((m == h) & odd),  # HalfToEven
    4: lambda m, h, neg, odd: (m > h) | ((m == h) & ~odd),  # HalfToOdd
    5: lambda m, h, neg, odd: np.where(neg, m >= h, m > h),  # HalfTowardsZero
    6: lambda m, h, neg, odd: neg & (m != 0),  # TowardsZero
    7: lambda m, h, neg, odd: m != 0,  # Up
    8: lambda m, h, neg, odd: np.zeros(m.shape, bool),  # Down
}


class Int8Error(ValueError):
    """A value or mode the INT8 records do not define (the engine names the instruction)."""


def shift_round(x: np.ndarray, n, mode: int) -> np.ndarray:
    if mode not in _ROUND_UP:
        raise Int8Error(f"unknown round mode {mode}")
    x = np.asarray(x, np.int64)
    n = np.broadcast_to(np.minimum(np.asarray(n, np.int64), 63), x.shape)
    right = np.maximum(n, 0)
    val = x >> right  # an arithmetic shift: floor
    mant = x - (val << right)
    half = np.left_shift(np.int64(1), np.maximum(right - 1, 0))
    rounded = val + _ROUND_UP[mode](mant, half, x < 0, (val & 1) == 1)
    k = np.clip(-n, 0, 62)  # a left shift; held at +-2^62 rather than wrapped
    left = np.clip(x, -(np.int64(1) << (62 - k)), np.int64(1) << (62 - k)) << k
    return np.where(n > 0, rounded, np.where(n < 0, left, x))


# a record's integer out_dtype code -> its range and numpy type
# (i32: an INT8 Deconv's exact sums before a BdcRequantAxis, saturated as the chip's int32 would)
_STORAGE = {isa.DTYPES["i8"]: (-128, 127, np.int8), isa.DTYPES["u8"]: (0, 255, np.uint8),
            isa.DTYPES["i32"]: (-(2**31), 2**31 - 1, np.int32)}
I8 = isa.DTYPES["i8"]


def store(y: np.ndarray, zp: int = 0, out_dtype: int = I8) -> np.ndarray:
    """sat(y + zp) in the storage type out_dtype (int64 y, or float y whose +-inf saturates)."""
    if out_dtype not in _STORAGE:
        raise Int8Error(f"an integer result of dtype code {out_dtype} (only i8, u8 and i32)")
    lo, hi, dtype = _STORAGE[out_dtype]
    return np.clip(np.asarray(y) + zp, lo, hi).astype(dtype)


def sat8(y: np.ndarray) -> np.ndarray:
    return store(y)


def requantize(acc: np.ndarray, multiplier, rshift, mode: int, zp: int = 0, out_dtype: int = I8) -> np.ndarray:
    """|acc| and |multiplier| are below 2^31: their product is exact in int64."""
    return store(shift_round(np.asarray(acc, np.int64) * np.asarray(multiplier, np.int64), rshift, mode), zp,
                 out_dtype)


# BdcConstSumQ's sums by (op, reverse): p = (in - in_zp) * multiplier, c = const
_CONST_SUMS = {
    (isa.CONST_OPS["AddConst"], 0): lambda p, c: p + c,
    (isa.CONST_OPS["SubConst"], 0): lambda p, c: p - c,
    (isa.CONST_OPS["SubConst"], 1): lambda p, c: c - p,
}


def const_sum(x: np.ndarray, r: isa.BdcConstSumQ) -> np.ndarray:
    """A BdcConstSumQ's result: |p| < 2^39 and |const| < 2^53, so the sum is exact in int64 and
    rounded once."""
    if (r.op, r.reverse) not in _CONST_SUMS:
        raise Int8Error(f"a constant sum of op {r.op} (reverse {r.reverse}): only AddConst and SubConst")
    p = (np.asarray(x, np.int64) - r.in_zp) * np.int64(r.multiplier)
    return store(shift_round(_CONST_SUMS[r.op, r.reverse](p, np.int64(r.const)), r.rshift, r.round_mode), r.out_zp,
                 r.out_dtype)


def _round_half_away(v: float) -> int:
    whole = np.floor(abs(v))
    return int(np.copysign(whole + (abs(v) - whole >= 0.5), v))


def scale_and_shift(scale: float) -> tuple[int, int]:
    s = float(np.float32(scale))
    candidates = [(float(np.float32(abs(m * 2.0**-n - s))), n, m) for n in range(-32, 31)
                  if abs(m := _round_half_away(s * 2.0**n)) < 2**31 - 1]
    _, n, m = min(candidates, key=lambda t: t[:2])  # the smallest error, then the smallest n
    return m, n


def deconv_sums(x: np.ndarray, weight: np.ndarray, out_shape, r) -> np.ndarray:
    """A BdcDeconvQ's exact int64 sums: x (n, ic, ih, iw) integers with sh - 1 (sw - 1) zeros
    between rows (columns) and the record's zero borders, correlated at stride 1 with the flipped
    weight (oc, ic/group, kh, kw), in float64 (exact below 2^53)."""
    n, ic, ih, iw = x.shape
    z = np.zeros((n, ic, r.pt + (ih - 1) * r.sh + 1 + r.pb, r.pl + (iw - 1) * r.sw + 1 + r.pr), np.float64)
    z[:, :, r.pt:r.pt + (ih - 1) * r.sh + 1:r.sh, r.pl:r.pl + (iw - 1) * r.sw + 1:r.sw] = x
    return exact(arith._correlate(z, weight[:, :, ::-1, ::-1], out_shape, 1, 1, r, np.float64))


def exact(y: np.ndarray) -> np.ndarray:
    """A float64 sum of integer products (exact below 2^53) as int64."""
    return np.rint(y).astype(np.int64)


def quantize(x: np.ndarray, scale: float, zp: int = 0, out_dtype: int = I8) -> np.ndarray:
    q = np.asarray(x, np.float64) / scale
    if np.isnan(q).any():
        raise Int8Error("a NaN has no int8 value")
    a = np.abs(q)
    whole = np.floor(a)
    with np.errstate(invalid="ignore"):  # inf - inf is NaN: the comparison is False, inf saturates
        whole += (a - whole) >= 0.5
    return store(np.copysign(whole, q), zp, out_dtype)


def dequantize(q: np.ndarray, scale: float, zp: int = 0) -> np.ndarray:
    return ((np.asarray(q, np.float64) - zp) * scale).astype(np.float32)


def softmax(x: np.ndarray, tables: np.ndarray, scale: float, zp: int, out_dtype: int) -> np.ndarray:
    """x (n, c, h, w) stored integers; tables (c, 256) int32, channel k's copy in row k."""
    xi = np.asarray(x, np.int64)
    d = xi.max(axis=1, keepdims=True) - xi
    e = tables[np.arange(x.shape[1])[None, :, None, None], d].astype(np.int64)
    total = e.sum(axis=1, keepdims=True)
    if (total == 0).any():
        raise Int8Error("a softmax row whose exp table entries sum to 0")
    return quantize(e / total, scale, zp, out_dtype)


def lut(x: np.ndarray, tables: np.ndarray) -> np.ndarray:
    """x (n, c, h, w) int8 looked up as uint8 in its channel's table: tables (c, 256)."""
    n, c, h, w = x.shape
    index = x.view(np.uint8).reshape(n, c, h * w).astype(np.intp)
    return tables[np.arange(c)[None, :, None], index].reshape(n, c, h, w)

"""The cmodel's arithmetic of the records added for issue 11 (opcodes 60-66: Scale, the activations
of BdcActiveX, RMSNorm, reflect/symmetric padding), in float32, written from the records'
definitions in isa.py. Kept apart from arith.py (whose float accumulation changes independently);
like it, it never imports the interpreter, which is what the cmodel is checked against."""

from __future__ import annotations

import math

import numpy as np

from tpudsl.backend import isa
from tpudsl.backend.cmodel import arith_half
from tpudsl.backend.cmodel.arith import relu

F32 = np.float32


def scale(x: np.ndarray, s: np.ndarray, b: np.ndarray, do_relu: int, limit: float) -> np.ndarray:
    """x (n, c, h, w) * s[c] + b[c] (s, b of shape (1, c, 1, 1)), then the fused relu."""
    return relu(x.astype(F32) * s.astype(F32) + b.astype(F32), do_relu, limit)


def sigmoid(x: np.ndarray) -> np.ndarray:
    """float32 1 / (1 + exp(-x)); a very negative x: 1 / (1 + inf) = 0 (no warning: engine.execute's
    np.errstate)."""
    return F32(1) / (F32(1) + np.exp(-x))


def _softplus(x: np.ndarray) -> np.ndarray:
    """log(1 + e^x) without overflow: max(x, 0) + log1p(e^-|x|)."""
    return np.maximum(x, F32(0)) + np.log1p(np.exp(-np.abs(x)))


def _erf(x: np.ndarray) -> np.ndarray:
    """erf from math.erf in float64 (exact; slow, but the cmodel runs small tensors): the value the
    record rounds once to its type (docs/quantization.md, F16/BF16 element-wise ops)."""
    return np.vectorize(math.erf, otypes=[np.float64])(x.astype(np.float64))


# By isa.ACTIVE_EXTRA_MODES code: f(x, coeff0, coeff1) on float32 x.
ACTIVE_EXTRA = {
    "SILU": lambda x, a, b: x / (F32(1) + np.exp(-x)),
    "HSWISH": lambda x, a, b: np.clip(x * F32(1 / 6) + F32(0.5), 0, 1) * x,
    "HSIGMOID": lambda x, a, b: np.clip(F32(a) * x + F32(b), 0, 1),
    "ELU": lambda x, a, b: np.where(x > 0, x, F32(a) * np.expm1(np.minimum(x, F32(0)))),
    "SWISH": lambda x, a, b: x * sigmoid(F32(a) * x),
    "MISH": lambda x, a, b: x * np.tanh(_softplus(x)),
    "SOFT_PLUS": lambda x, a, b: _softplus(x),
    "SOFT_SIGN": lambda x, a, b: x / (F32(1) + np.abs(x)),
    "LN": lambda x, a, b: np.log(x),
    "RSQRT": lambda x, a, b: F32(1) / np.sqrt(x),
    "ERF": lambda x, a, b: _erf(x),
    "TGELU": lambda x, a, b: F32(0.5) * x * (F32(1) + np.tanh(F32(math.sqrt(2 / math.pi))
                                                               * (x + F32(0.044715) * x ** 3))),
    "QGELU": lambda x, a, b: x * sigmoid(F32(1.702) * x),
    "SIN": lambda x, a, b: np.sin(x), "COS": lambda x, a, b: np.cos(x), "TAN": lambda x, a, b: np.tan(x),
    "SINH": lambda x, a, b: np.sinh(x), "COSH": lambda x, a, b: np.cosh(x),
    "ARCCOS": lambda x, a, b: np.arccos(x), "ARCTANH": lambda x, a, b: np.arctanh(x),
    "SIGN": lambda x, a, b: np.sign(x), "CEIL": lambda x, a, b: np.ceil(x), "FLOOR": lambda x, a, b: np.floor(x),
    "ROUND": lambda x, a, b: np.round(x),  # half to even, as ONNX Round
    "ARCSIN": lambda x, a, b: np.arcsin(x), "ARCSINH": lambda x, a, b: np.arcsinh(x),
    "ARCCOSH": lambda x, a, b: np.arccosh(x),
}
assert list(ACTIVE_EXTRA) == list(isa.ACTIVE_EXTRA_MODES)  # the table is indexed by the record's code
_BY_CODE = list(ACTIVE_EXTRA.values())


def active_extra(x: np.ndarray, mode: int, coeff0: float, coeff1: float) -> np.ndarray:
    """f(x) in float32, each element alone; ERF of a 16-bit type: its float64 value, which the
    record rounds once to the type (F32: rounded here). LN/RSQRT/ARCCOS/ARCSIN/ARCCOSH outside their
    domain: nan/inf, as IEEE (no warning: engine.execute's np.errstate)."""
    y = _BY_CODE[mode](x.astype(F32), coeff0, coeff1)
    return y if y.dtype == np.float64 and x.dtype.itemsize == 2 else y.astype(F32)


def rms_norm(x: np.ndarray, gamma: np.ndarray | None, eps: float) -> np.ndarray:
    """x / sqrt(mean(x^2) + eps) along C, times gamma (1, c, 1, 1) if given. F16/BF16: float64
    steps (x^2 exact, its sum by fsum), the value rounded once to the type when written."""
    if arith_half.is_half(x.dtype):
        x64 = x.astype(np.float64)
        y = x64 / np.sqrt(arith_half.fsum_along(x64 * x64, 1) / x.shape[1] + float(F32(eps)))
        return y if gamma is None else y * gamma.astype(np.float64)
    x = x.astype(F32)
    y = x / np.sqrt((x * x).mean(axis=1, keepdims=True) + F32(eps))
    return y if gamma is None else y * gamma.astype(F32)


def _nonzero(v: np.ndarray) -> np.ndarray:
    return v != 0


# By isa.ELEMENTWISE_X_OPS code: f(a, b) on float32 operands (comparisons as 1.0 / 0.0).
ELEMENTWISE_X = {
    "Div": np.divide, "Pow": np.power, "Mod": np.fmod, "Remainder": np.mod,
    "Equal": np.equal, "Greater": np.greater, "GreaterOrEqual": np.greater_equal, "Less": np.less,
    "LessOrEqual": np.less_equal, "NotEqual": np.not_equal,
    "And": lambda a, b: _nonzero(a) & _nonzero(b), "Not": lambda a, b: a == 0,
    "Xor": lambda a, b: _nonzero(a) ^ _nonzero(b), "PRelu": lambda a, b: np.where(a >= 0, a, a * b),
}
assert list(ELEMENTWISE_X) == list(isa.ELEMENTWISE_X_OPS)[:-1]  # Clip, the last, is BdcConstX's alone
_X_BY_CODE = list(ELEMENTWISE_X.values())


def elementwise_x(a: np.ndarray, b: np.ndarray, op: int, reverse: int, do_relu: int, limit: float) -> np.ndarray:
    """a (op) b (reverse: b (op) a) in float32, broadcasting size-1 dims; then the fused relu."""
    a, b = a.astype(F32), b.astype(F32)
    y = _X_BY_CODE[op](b, a) if reverse else _X_BY_CODE[op](a, b)  # x / 0, 0 ** -1: inf/nan as IEEE
    y = np.broadcast_to(y, np.broadcast_shapes(a.shape, b.shape))  # Not reads one operand
    return relu(y.astype(F32), do_relu, limit)


def const_x(x: np.ndarray, op: int, reverse: int, value: float, value2: float, do_relu: int,
            limit: float) -> np.ndarray:
    """x (op) value (reverse: value (op) x); Clip: x clamped to [value, value2]."""
    if op == isa.ELEMENTWISE_X_OPS["Clip"]:
        return relu(np.clip(x.astype(F32), F32(value), F32(value2)), do_relu, limit)
    return elementwise_x(x, np.asarray(value, F32), op, reverse, do_relu, limit)


def select(cond: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a where cond != 0 (NaN is not 0), else b, broadcasting size-1 dims; no arithmetic, so no
    rounding: F16/BF16 values pass through unchanged."""
    return np.where(cond != 0, a, b)

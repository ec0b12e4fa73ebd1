"""Element-wise kernels: unary math, activations, n-ary broadcasting, `*Const`, compare/where, cast.

Most ops are one row of a table (op name -> numpy function) instead of a function each."""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from tpudsl.interp.kernel import Array, Inputs, Kernel, KernelAttrs, carrier, hold, relu
from tpudsl.interp.mathfn import NEG_EXP, erf, gelu

F32 = np.float32

# np.clip's ufunc without np.clip's Python wrapper (3-4 us a call: most of an activation on the 1x1
# maps of squeeze-excite). Its module is private (numpy 2: numpy._core, numpy 1: numpy.core), so a
# numpy that moves it gets the public np.clip: the same values, only the wrapper's cost.
try:
    from numpy._core.umath import clip as _clip
except ImportError:
    try:
        from numpy.core.umath import clip as _clip
    except ImportError:
        _clip = np.clip


def sigmoid(x: Array) -> Array:
    # 1 / (1 + exp(-x)) in four passes over one fresh array. exp(-x) overflows to inf below
    # x = -88.7 and the result is then 0 (the true value is below float32's normal range); no
    # cancellation on either side. 1 / e as a division: np.reciprocal has no SIMD loop (2x slower).
    e = NEG_EXP(x)
    e += 1
    return np.divide(F32(1), e, out=e)


def _silu(x: Array) -> Array:
    # x / (1 + exp(-x)): one pass fewer than x * sigmoid(x). Below x = -88.7, exp(-x) is inf and
    # the result -0 (the true value is below float32's normal range).
    e = NEG_EXP(x)
    e += 1
    return np.divide(x, e, out=e)


def _hardswish(x: Array) -> Array:
    """x * clip(x / 6 + 1/2, 0, 1) as x * ((clip(x, -3, 3) + 3) * (1/6)), in place on one fresh array:
    1.1-1.2x faster than clipping x / 6 + 1/2 in place (numpy's clip runs slower on those values),
    and more accurate: clip(x, -3, 3) + 3 is exact near -3 (Sterbenz), where x / 6 + 1/2 cancels, so
    the result is within 4 roundings (2.4e-7 relative) of the exact value everywhere; the factor
    stays <= 1, so nothing overflows."""
    y = _clip(x, F32(-3), F32(3))
    y += F32(3)
    y *= F32(1 / 6)
    y *= x
    return y


def _softplus(x: Array) -> Array:
    return (np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))).astype(x.dtype)


def _gelu(x: Array, a: KernelAttrs) -> Array:
    mode = a.get("approx_mode", "normal")
    if mode == "tanh":
        return 0.5 * x * (1 + np.tanh(F32(np.sqrt(2 / np.pi)) * (x + F32(0.044715) * x**3)))
    if mode == "sigm":
        return x * sigmoid(F32(1.702) * x)
    return gelu(x, NEG_EXP)


def _relu(x: Array, a: KernelAttrs) -> Array:
    return relu(x, a.get("relu_limit", -1.0))


def _sigmoid_op(x: Array, a: KernelAttrs) -> Array:
    scale, bias = a.get("scale", 1.0), a.get("bias", 0.0)
    y = sigmoid(x if scale == 1 and bias == 0 else F32(scale) * x + F32(bias))
    return np.log(y) if a.get("log", False) else y


def _hardsigmoid(x: Array, a: KernelAttrs) -> Array:
    y = x * F32(a.get("alpha", 0.2))
    y += F32(a.get("beta", 0.5))
    return _clip(y, F32(0), F32(1), out=y)


def _elu(x: Array, a: KernelAttrs) -> Array:
    alpha = F32(a.get("alpha", 1.0))
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


# Unary ops without attributes: op -> f(x).
UNARY: dict[str, Callable[[Array], Array]] = {
    "Exp": np.exp, "Log": np.log, "Sqrt": np.sqrt, "Abs": np.abs, "Erf": erf,
    "Rsqrt": lambda x: 1 / np.sqrt(x), "Tanh": np.tanh,
    "SiLU": _silu,
    "HardSwish": _hardswish,
    "Mish": lambda x: x * np.tanh(_softplus(x)), "Softplus": _softplus,
    "Softsign": lambda x: x / (1 + np.abs(x)), "Sign": np.sign,
    "Floor": np.floor, "Ceil": np.ceil, "Round": np.round,
    "Cos": np.cos, "Sin": np.sin, "Tan": np.tan, "Cosh": np.cosh, "Sinh": np.sinh,
    "Arccos": np.arccos, "Arctanh": np.arctanh, "Arcsin": np.arcsin, "Arcsinh": np.arcsinh,
    "Arccosh": np.arccosh,
}

# Unary ops with attributes: op -> f(x, attrs).
UNARY_ATTR: dict[str, Callable[[Array, KernelAttrs], Array]] = {
    "Relu": _relu,
    "Sigmoid": _sigmoid_op,
    "GELU": _gelu,
    "Elu": _elu,
    "HardSigmoid": _hardsigmoid,
    "LeakyRelu": lambda x, a: np.where(x >= 0, x, F32(a.get("alpha", 0.01)) * x),
    "Swish": lambda x, a: x * sigmoid(F32(a.get("beta", 1.0)) * x),
    "Pow": lambda x, a: np.power(x, F32(a["exponent"])),
    "Pow2": lambda x, a: np.power(F32(a["const_val"]), x),
    "Reciprocal": lambda x, a: F32(a.get("const_val", 1.0)) / x,
    "Clip": lambda x, a: np.clip(x, F32(a["min"]), F32(a["max"])),
    "AddConst": lambda x, a: x + F32(a["const_val"]),
    "MulConst": lambda x, a: x * F32(a["const_val"]),
    "MinConst": lambda x, a: np.minimum(x, F32(a["const_val"])),
    "MaxConst": lambda x, a: np.maximum(x, F32(a["const_val"])),
    "SubConst": lambda x, a: (F32(a["const_val"]) - x) if a.get("is_reverse", False) else (x - F32(a["const_val"])),
    "DivConst": lambda x, a: (F32(a["const_val"]) / x) if a.get("is_reverse", False) else (x / F32(a["const_val"])),
}

# n-ary broadcasting ops: op -> binary f, folded left to right over the operands.
NARY: dict[str, Callable[[Array, Array], Array]] = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Min": np.minimum, "Max": np.maximum, "Pow3": np.power,
    "Mod": np.fmod, "Remainder": np.mod,  # ONNX float Mod is fmod; torch.remainder floors
}

COMPARE: dict[str, Callable[[Array, Array], Array]] = {
    "Equal": np.equal, "NotEqual": np.not_equal, "Greater": np.greater,
    "GreaterOrEqual": np.greater_equal, "Less": np.less, "LessOrEqual": np.less_equal,
    "And": lambda x, y: np.logical_and(x != 0, y != 0),
    "Xor": lambda x, y: np.logical_xor(x != 0, y != 0),
    "Not": lambda x, y: x == 0,
}


def _float_result(x: Array, a: KernelAttrs) -> Array:
    """Element-wise results keep float32 unless the result type says otherwise (Compare -> f32 0/1)."""
    dtype = a.out_dtype() or (x.dtype if x.dtype.kind == "f" else F32)
    return np.asarray(x).astype(dtype, copy=False)


def _tensors(ins: Inputs) -> list[Array]:
    return [x for x in ins if x is not None]


def _nary(f: Callable[[Array, Array], Array]):
    """Fold `f` over the operands, each first scaled by its `coeff` (Add/Sub); `is_reverse`
    (Sub/Div) folds them in reverse order."""

    def run(ins: Inputs, a: KernelAttrs) -> Array:
        xs = _tensors(ins)
        coeff = a.get("coeff") or [1.0] * len(xs)
        terms = [x if c == 1 else x * F32(c) for x, c in zip(xs, coeff, strict=True)]
        if a.get("is_reverse", False):
            terms = terms[::-1]
        return _float_result(functools.reduce(f, terms), a)

    return run


def _compare(ins: Inputs, a: KernelAttrs) -> Array:
    lhs, rhs = ins
    return _float_result(COMPARE[a["mode"]](lhs, rhs), a)


def _compare_const(ins: Inputs, a: KernelAttrs) -> Array:
    x = ins[0]
    c = np.asarray(a["const_val"], dtype=x.dtype)
    lhs, rhs = (c, x) if a.get("inversed", False) else (x, c)
    return _float_result(COMPARE[a["mode"]](lhs, rhs), a)


def _where(ins: Inputs, a: KernelAttrs) -> Array:
    cond, x, y = (list(ins) + [None, None])[:3]
    if a.get("x_is_const", False) or x is None:
        x = F32(a.get("x_const_val", 0.0))
    if a.get("y_is_const", False) or y is None:
        y = F32(a.get("y_const_val", 0.0))
    return _float_result(np.where(cond != 0, x, y), a)


def _masked_fill(ins: Inputs, a: KernelAttrs) -> Array:
    cond, x = ins
    mask = (cond == 0) if a.get("inversed", False) else (cond != 0)
    return np.where(mask, F32(a["const_val"]), x).astype(x.dtype)


def _prelu(ins: Inputs, a: KernelAttrs) -> Array:
    x, slope = ins
    # TPU-MLIR slopes are per channel ([C] or [1,C,1,...]); put the channel on axis 1.
    if slope.ndim == 1 and x.ndim > 1 and slope.size == x.shape[1]:
        slope = slope.reshape((1, -1) + (1,) * (x.ndim - 2))
    return np.where(x >= 0, x, x * slope)


# How a float becomes an integer, by TPU-MLIR round mode (ties: the `Half*` modes).
ROUND: dict[str, Callable[[Array], Array]] = {
    "HalfAwayFromZero": lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5),
    "HalfUp": lambda x: np.floor(x + 0.5),
    "HalfDown": lambda x: np.ceil(x - 0.5),
    "HalfToEven": np.rint,
    "HalfToOdd": lambda x: np.where(np.abs(x - np.trunc(x)) == 0.5, _odd_neighbour(x), np.rint(x)),
    "HalfTowardsZero": lambda x: np.sign(x) * np.ceil(np.abs(x) - 0.5),
    "TowardsZero": np.trunc,
    "Up": np.ceil,
    "Down": np.floor,
}


def _odd_neighbour(x: Array) -> Array:
    """Of the two integers around x (a tie, k + 0.5), the odd one."""
    low = np.floor(x)
    return np.where(np.mod(low, 2) == 1, low, low + 1)


def _cast(ins: Inputs, a: KernelAttrs) -> Array:
    """Cast to the result type: to i1 `x != 0`; to an integer type a float is rounded by `round_mode`, then
    wraps like C; to a float type it rounds to nearest even (IEEE) when the result is held
    (kernel.hold). To a float8 type, ONNX's rule: with `saturate` (default) a value beyond the
    largest finite one (infinities too) becomes that value; without, a value whose rounding
    exceeds it overflows to NaN (inf for e5m2), which is what ml_dtypes does. NaN stays NaN."""
    x = ins[0]
    dtype = a.out_dtype()
    if dtype is None:
        raise ValueError("top.Cast needs a ranked result type: its element type is the target")
    if dtype.kind == "b":  # i1: nonzero is true (NaN too, as in C and ONNX)
        return x != 0
    if _is_integer(dtype):
        if x.dtype.kind == "f":  # in float64, where x + 0.5 is exact
            x = ROUND[a["round_mode"]](x.astype(np.float64))
        return hold(x, dtype)
    if a.get("saturate", True) and dtype.name.startswith("float8"):  # tpu.Cast has no saturate
        import ml_dtypes  # loaded already: dtype is one of its types

        largest = float(ml_dtypes.finfo(dtype).max)
        return np.clip(x, -largest, largest)
    return x


def _is_integer(dtype: np.dtype) -> bool:
    return dtype.kind in "iu" or (dtype.kind == "V" and carrier(dtype).kind in "iu")


_float_div = _nary(np.divide)


def _div(ins: Inputs, a: KernelAttrs) -> Array:
    """Div; with an integer result type the quotient is truncated toward zero (ONNX, C) and
    computed exactly in int64, so it never goes through a float."""
    dtype = a.out_dtype()
    if dtype is None or not _is_integer(dtype):
        return _float_div(ins, a)
    x, y = (np.asarray(v).astype(np.int64) for v in _tensors(ins))
    if a.get("is_reverse", False):
        x, y = y, x
    if np.any(y == 0):
        raise ZeroDivisionError("integer division by zero")
    q = np.abs(x) // np.abs(y)
    return hold(np.where((x < 0) != (y < 0), -q, q), dtype)


def _unary(f: Callable[[Array], Array]):
    return lambda ins, a: f(ins[0])


def _unary_attr(f: Callable[[Array, KernelAttrs], Array]):
    return lambda ins, a: f(ins[0], a)


KERNELS: dict[str, Kernel] = {
    **{f"top.{n}": Kernel(_unary(f)) for n, f in UNARY.items()},
    **{f"top.{n}": Kernel(_unary_attr(f)) for n, f in UNARY_ATTR.items()},
    **{f"top.{n}": Kernel(_nary(f)) for n, f in NARY.items()},
    "top.Compare": Kernel(_compare),
    "top.CompareConst": Kernel(_compare_const),
    "top.Where": Kernel(_where),
    "top.MaskedFill": Kernel(_masked_fill),
    "top.PRelu": Kernel(_prelu),
    "top.Cast": Kernel(_cast),
    "top.Div": Kernel(_div),
}

"""Converters of element-wise, comparison, reduction and softmax ONNX nodes."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import onnx
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float16Type,
    IntegerType,
    Signedness,
    TensorType,
    f32,
)

from tpudsl.frontend.onnx_node import Convert, Node, norm_axes, norm_axis

if TYPE_CHECKING:
    from xdsl.ir import SSAValue

    from tpudsl.frontend.onnx_import import Converter

# The largest float32: Top attributes are finite numbers, and ONNX's "no bound" is +-inf.
FLOAT_MAX = float(np.finfo(np.float32).max)


def unary(top: str, **defaults: object) -> Convert:
    """A one-to-one element-wise op; `defaults` are the ONNX defaults of its attributes, which
    have the same names in ONNX and Top (alpha, beta)."""

    def convert(n: Node, c: Converter) -> None:
        attrs = {key: n.attr(key, default) for key, default in defaults.items()}
        c.emit(f"top.{top}", [n.input(0)], n.out, attrs)

    return convert


def gelu(n: Node, c: Converter) -> None:
    mode = n.attr("approximate", "none")
    if mode not in ("none", "tanh"):
        raise n.error(f"approximate={mode!r} is not one of none, tanh")
    c.emit("top.GELU", [n.input(0)], n.out, {"approx_mode": "normal" if mode == "none" else "tanh"})


def swish(n: Node, c: Converter) -> None:
    """Swish (opset 24): x * sigmoid(alpha * x); Top calls alpha beta."""
    c.emit("top.Swish", [n.input(0)], n.out, {"beta": float(n.attr("alpha", 1.0))})


def einsum(n: Node, c: Converter) -> None:
    c.emit("top.Einsum", [i for i in n.inputs if i], n.out, {"mode": n.attr("equation").replace(" ", "")})


def neg(n: Node, c: Converter) -> None:
    c.emit("top.MulConst", [n.input(0)], n.out, {"const_val": -1.0})


def _scalar(c: Converter, name: str, other: str) -> float | None:
    """The value of `name` if it is a one-element constant that does not widen `other`'s rank."""
    value = c.const(name)
    if value is None or value.size != 1 or value.ndim > len(c.shape(other)):
        return None
    return float(value.reshape(()))


def binary(top: str, const_op: str, commutative: bool) -> Convert:
    """Add/Sub/Mul/Div: `x op scalar` becomes `<op>Const` (is_reverse for `scalar op x`).
    Integer Div keeps its integer result type, which makes top.Div truncate toward zero."""

    def convert(n: Node, c: Converter) -> None:
        a, b = n.input(0), n.input(1)
        if top == "Div" and (int_type := _integer_type(c.graph.dtypes.get(n.out))) is not None:
            c.emit("top.Div", [a, b], n.out, element_type=int_type)
        elif (value := _scalar(c, b, a)) is not None:
            c.emit(f"top.{const_op}", [a], n.out, {"const_val": value})
        elif (value := _scalar(c, a, b)) is not None:
            attrs = {} if commutative else {"is_reverse": True}
            c.emit(f"top.{const_op}", [b], n.out, {"const_val": value, **attrs})
        else:
            c.emit(f"top.{top}", [a, b], n.out)

    return convert


def variadic(top: str, const_op: str | None) -> Convert:
    """Min/Max/Sum over any number of inputs (one input: the identity)."""

    def convert(n: Node, c: Converter) -> None:
        ins = [i for i in n.inputs if i]
        if len(ins) == 1:
            c.alias(n.out, ins[0])
        elif const_op and len(ins) == 2 and (value := _scalar(c, ins[1], ins[0])) is not None:
            c.emit(f"top.{const_op}", [ins[0]], n.out, {"const_val": value})
        else:
            c.emit(f"top.{top}", ins, n.out)

    return convert


def mean(n: Node, c: Converter) -> None:
    ins = [i for i in n.inputs if i]
    if len(ins) == 1:
        c.alias(n.out, ins[0])
        return
    total = c.emit("top.Add", ins, c.derived(n.out, "sum"))
    c.emit("top.MulConst", [total], n.out, {"const_val": 1.0 / len(ins)})


def pow_(n: Node, c: Converter) -> None:
    """Pow: a constant scalar exponent is `Pow` (exponent attribute), a constant scalar base
    `Pow2` (const_val ** x), anything else `Pow3` (x ** y, broadcasting)."""
    x, y = n.input(0), n.input(1)
    if (exponent := _scalar(c, y, x)) is not None:
        c.emit("top.Pow", [x], n.out, {"exponent": exponent})
    elif (base := _scalar(c, x, y)) is not None:
        c.emit("top.Pow2", [y], n.out, {"const_val": base})
    else:
        c.emit("top.Pow3", [x, y], n.out)


def clip(n: Node, c: Converter) -> None:
    """Clip: bounds are attributes before opset 11 and optional inputs from 11 on."""
    if n.opset < 11:
        low, high = n.attr("min", -FLOAT_MAX), n.attr("max", FLOAT_MAX)
    else:
        bounds = []
        for i, default in ((1, -FLOAT_MAX), (2, FLOAT_MAX)):
            value = c.const_input(n, i, "bound")
            bounds.append(default if value is None else float(value.reshape(())))
        low, high = bounds
    c.emit("top.Clip", [n.input(0)], n.out, {"min": max(low, -FLOAT_MAX), "max": min(high, FLOAT_MAX)})


_INT_TYPES = {
    onnx.TensorProto.INT2: (2, Signedness.SIGNLESS),
    onnx.TensorProto.INT4: (4, Signedness.SIGNLESS),
    onnx.TensorProto.INT8: (8, Signedness.SIGNLESS),
    onnx.TensorProto.INT16: (16, Signedness.SIGNLESS),
    onnx.TensorProto.INT32: (32, Signedness.SIGNLESS),
    onnx.TensorProto.INT64: (64, Signedness.SIGNLESS),
    onnx.TensorProto.UINT2: (2, Signedness.UNSIGNED),
    onnx.TensorProto.UINT4: (4, Signedness.UNSIGNED),
    onnx.TensorProto.UINT8: (8, Signedness.UNSIGNED),
    onnx.TensorProto.UINT16: (16, Signedness.UNSIGNED),
    onnx.TensorProto.UINT32: (32, Signedness.UNSIGNED),
    onnx.TensorProto.UINT64: (64, Signedness.UNSIGNED),
}

# Float types narrower than float32: a top.Cast rounds to them (the interpreter holds the
# value in float32, docs/interpreter.md).
NARROW_FLOATS = {
    onnx.TensorProto.FLOAT16: Float16Type,
    onnx.TensorProto.BFLOAT16: BFloat16Type,
    onnx.TensorProto.FLOAT8E4M3FN: Float8E4M3FNType,
    onnx.TensorProto.FLOAT8E4M3FNUZ: Float8E4M3FNUZType,
    onnx.TensorProto.FLOAT8E5M2: Float8E5M2Type,
    onnx.TensorProto.FLOAT8E5M2FNUZ: Float8E5M2FNUZType,
    onnx.TensorProto.FLOAT4E2M1: Float4E2M1FNType,
}

# Top computes in float32, which float64 holds exactly: a cast to these changes nothing.
_WIDE_FLOATS = (onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE)


def _integer_type(onnx_type: int | None) -> IntegerType | None:
    if onnx_type not in _INT_TYPES:
        return None
    width, signedness = _INT_TYPES[onnx_type]
    return IntegerType(width, signedness)


def cast(n: Node, c: Converter) -> None:
    """Cast/CastLike to the ONNX target type. Top computes in float32: a cast to float/double is
    nothing (unless its input is held in another type), to bool a `!= 0` test, to an integer type a
    `top.Cast` that truncates toward zero, to a narrower float a `top.Cast` that rounds to it
    (float8: with ONNX's `saturate`). Other targets (FLOAT8E8M0, strings, complex) are an error."""
    if n.op_type == "CastLike":
        to = c.graph.dtypes.get(n.input(1), onnx.TensorProto.FLOAT)
    else:
        to = n.attr("to")
    if to == onnx.TensorProto.BOOL:
        c.emit("top.CompareConst", [n.input(0)], n.out, {"mode": "NotEqual", "const_val": 0.0})
    elif (int_type := _integer_type(to)) is not None:
        c.emit("top.Cast", [n.input(0)], n.out, {"round_mode": "TowardsZero"}, int_type)
    elif to in NARROW_FLOATS:
        attrs = {"saturate": bool(n.attr("saturate", 1))} if "FLOAT8" in onnx.TensorProto.DataType.Name(to) else {}
        c.emit("top.Cast", [n.input(0)], n.out, attrs, NARROW_FLOATS[to]())
    elif to in _WIDE_FLOATS:
        source = c.value(n.input(0))
        if isinstance(source.type, TensorType) and source.type.element_type != f32:
            c.emit("top.Cast", [source], n.out)  # from an integer or narrow float Top holds
        else:
            c.alias(n.out, source)
    elif to == onnx.TensorProto.FLOAT8E8M0:
        raise n.error("a cast to FLOAT8E8M0 is not supported: its round_mode (default 'up') is not modelled")
    else:
        raise n.error(f"a cast to {_type_name(to)} is not supported (Top models float, double, float16, "
                      "bfloat16, float8 e4m3fn/e4m3fnuz/e5m2/e5m2fnuz, float4e2m1, the integer types and bool)")


def _type_name(onnx_type: int) -> str:
    try:
        return onnx.TensorProto.DataType.Name(onnx_type)
    except ValueError:
        return f"unknown type {onnx_type}"


def compare(mode: str) -> Convert:
    """Comparisons and logical ops, with `<x> cmp scalar` as CompareConst (inversed: scalar first)."""

    def convert(n: Node, c: Converter) -> None:
        a, b = n.input(0), n.input(1)
        if (value := _scalar(c, b, a)) is not None:
            c.emit("top.CompareConst", [a], n.out, {"mode": mode, "const_val": value})
        elif (value := _scalar(c, a, b)) is not None:
            c.emit("top.CompareConst", [b], n.out, {"mode": mode, "const_val": value, "inversed": True})
        else:
            c.emit("top.Compare", [a, b], n.out, {"mode": mode})

    return convert


def mod(n: Node, c: Converter) -> None:
    """Mod: fmod=1 takes the dividend's sign (C fmod, top.Mod), fmod=0 the divisor's (top.Remainder)."""
    c.emit("top.Mod" if n.attr("fmod", 0) else "top.Remainder", [n.input(0), n.input(1)], n.out)


def cumsum(n: Node, c: Converter) -> None:
    """CumSum; `reverse` runs it from the end (Reverse around it), `exclusive` leaves each element
    out of its own sum (the inclusive sum minus the element)."""
    axis_value = c.const_input(n, 1, "axis")
    axis = norm_axis(int(axis_value.reshape(-1)[0]), len(c.shape(n.input(0))), n)
    reverse, exclusive = bool(n.attr("reverse", 0)), bool(n.attr("exclusive", 0))
    x: str | SSAValue = n.input(0)
    if reverse:
        x = c.emit("top.Reverse", [x], c.derived(n.out, "reversed"), {"axis": axis})
    last = not reverse and not exclusive
    y = c.emit("top.CumSum", [x], n.out if last else c.derived(n.out, "inclusive"), {"axis": axis})
    if exclusive:
        y = c.emit("top.Sub", [y, x], n.out if not reverse else c.derived(n.out, "exclusive"))
    if reverse:
        c.emit("top.Reverse", [y], n.out, {"axis": axis})


def not_(n: Node, c: Converter) -> None:
    c.emit("top.CompareConst", [n.input(0)], n.out, {"mode": "Not", "const_val": 0.0})


def or_(n: Node, c: Converter) -> None:
    # Booleans are 0/1 floats in Top, so `a or b` is their maximum.
    c.emit("top.Max", [n.input(0), n.input(1)], n.out)


def where(n: Node, c: Converter) -> None:
    c.emit("top.Where", [n.input(0), n.input(1), n.input(2)], n.out)


def _reduce_axes(n: Node, c: Converter, axes_input_from: int) -> list[int] | None:
    """Reduction axes, normalized: an attribute before opset `axes_input_from`, an optional input
    from then on; no axes means all of them, or nothing at all (None) with noop_with_empty_axes."""
    rank = len(c.shape(n.input(0)))
    if n.opset >= axes_input_from and n.input(1):
        axes = [int(v) for v in c.const_input(n, 1, "axes").reshape(-1)]
    else:
        axes = list(n.attr("axes", []))
    if not axes:
        return None if n.attr("noop_with_empty_axes", 0) else list(range(rank))
    return sorted(norm_axes(axes, rank, n))


def reduce(mode: str) -> Convert:
    """ReduceX: axes is an attribute before opset 18 (ReduceSum: 13) and an optional input after."""

    def convert(n: Node, c: Converter) -> None:
        axes = _reduce_axes(n, c, 13 if mode == "ReduceSum" else 18)
        if axes is None:
            c.alias(n.out, n.input(0))
            return
        c.emit("top.Reduce", [n.input(0)], n.out, {"axes": axes, "keepdims": bool(n.attr("keepdims", 1)), "mode": mode})

    return convert


def reduce_composite(n: Node, c: Converter) -> None:
    """ReduceSumSquare, ReduceLogSum, ReduceLogSumExp: element-wise ops around a ReduceSum."""
    axes = _reduce_axes(n, c, 18)
    x: str | SSAValue = n.input(0)
    if n.op_type == "ReduceSumSquare":
        x = c.emit("top.Mul", [x, x], c.derived(n.out, "square"))
    elif n.op_type == "ReduceLogSumExp":
        x = c.emit("top.Exp", [x], c.derived(n.out, "exp"))
    last = n.op_type == "ReduceSumSquare"
    if axes is not None:
        attrs = {"axes": axes, "keepdims": bool(n.attr("keepdims", 1)), "mode": "ReduceSum"}
        x = c.emit("top.Reduce", [x], n.out if last else c.derived(n.out, "sum"), attrs)
    if not last:
        c.emit("top.Log", [x], n.out)
    elif axes is None:
        c.alias(n.out, x)


def arg(mode: str) -> Convert:
    """ArgMax/ArgMin: indices only (the optional values result stays `none`)."""

    def convert(n: Node, c: Converter) -> None:
        shape = c.shape(n.input(0))
        attrs = {"axis": norm_axis(n.attr("axis", 0), len(shape), n), "keepdims": bool(n.attr("keepdims", 1)),
                 "mode": mode, "select_last_index": bool(n.attr("select_last_index", 0))}
        c.emit("top.Arg", [n.input(0)], n.out, attrs, unused_results=1)

    return convert


def selu(n: Node, c: Converter) -> None:
    """Selu = gamma * Elu(x, alpha)."""
    alpha = float(n.attr("alpha", 1.67326319217681884765625))
    gamma = float(n.attr("gamma", 1.05070102214813232421875))
    elu = c.emit("top.Elu", [n.input(0)], c.derived(n.out, "elu"), {"alpha": alpha})
    c.emit("top.MulConst", [elu], n.out, {"const_val": gamma})


def softmax(n: Node, c: Converter) -> None:
    """Softmax/LogSoftmax. Before opset 13 the input is coerced to 2-D at `axis` (default 1) and
    normalized over all dims from `axis` on; from 13 on over `axis` (default -1) alone."""
    log = n.op_type == "LogSoftmax"
    shape = c.shape(n.input(0))
    rank = len(shape)
    if n.opset >= 13:
        c.emit("top.Softmax", [n.input(0)], n.out, {"axis": norm_axis(n.attr("axis", -1), rank, n), "log": log})
        return
    axis = norm_axis(n.attr("axis", 1), rank, n) if rank else 0
    if axis >= rank - 1:  # only the last dim is normalized: same as the modern form
        c.emit("top.Softmax", [n.input(0)], n.out, {"axis": max(rank - 1, 0), "log": log})
        return
    flat = [math.prod(shape[:axis]), math.prod(shape[axis:])]
    x = c.emit("top.Reshape", [n.input(0)], c.derived(n.out, "flatten"), {"shape": flat})
    y = c.emit("top.Softmax", [x], c.derived(n.out, "softmax"), {"axis": 1, "log": log})
    c.emit("top.Reshape", [y], n.out, {"shape": list(shape)})

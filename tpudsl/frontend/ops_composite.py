"""Converters of ONNX ops that Top has no op for, written as chains of existing Top ops (so that
every later level, the lowering and the backend, handles them through those ops). Each follows
the ONNX spec's definition (the function body where ONNX gives one)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import onnx
from xdsl.dialects.builtin import IntegerType

from tpudsl.dialects.geometry.window import ceil_overhangs, grown_end_pads
from tpudsl.frontend.ops_math import FLOAT_MAX, NARROW_FLOATS
from tpudsl.frontend.ops_nn import pool_attrs
from tpudsl.frontend.onnx_node import Node, norm_axes, norm_axis

if TYPE_CHECKING:
    from xdsl.ir import SSAValue

    from tpudsl.frontend.onnx_import import Converter


def celu(n: Node, c: Converter) -> None:
    """Celu = alpha * Elu(x / alpha) (ONNX's function body)."""
    alpha = float(n.attr("alpha", 1.0))
    scaled = c.emit("top.DivConst", [n.input(0)], c.derived(n.out, "scaled"), {"const_val": alpha})
    elu = c.emit("top.Elu", [scaled], c.derived(n.out, "elu"), {"alpha": 1.0})
    narrow = NARROW_FLOATS.get(c.graph.dtypes.get(n.out))
    if narrow is None:
        c.emit("top.MulConst", [elu], n.out, {"const_val": alpha})
        return
    # A float16/bfloat16 Celu is rounded once, at the end (ONNX's reference: float32 inside).
    y = c.emit("top.MulConst", [elu], c.derived(n.out, "float"), {"const_val": alpha})
    c.emit("top.Cast", [y], n.out, {}, narrow())


def thresholded_relu(n: Node, c: Converter) -> None:
    """x where x > alpha, else 0."""
    above = c.emit("top.CompareConst", [n.input(0)], c.derived(n.out, "above"),
                   {"mode": "Greater", "const_val": float(n.attr("alpha", 1.0))})
    c.emit("top.Where", [above, n.input(0), c.none()], n.out, {"y_is_const": True, "y_const_val": 0.0})


def shrink(n: Node, c: Converter) -> None:
    """x + bias where x < -lambd, x - bias where x > lambd, else 0."""
    x, bias, lambd = n.input(0), float(n.attr("bias", 0.0)), float(n.attr("lambd", 0.5))
    below = c.emit("top.CompareConst", [x], c.derived(n.out, "below"), {"mode": "Less", "const_val": -lambd})
    above = c.emit("top.CompareConst", [x], c.derived(n.out, "above"), {"mode": "Greater", "const_val": lambd})
    raised = c.emit("top.AddConst", [x], c.derived(n.out, "raised"), {"const_val": bias})
    lowered = c.emit("top.SubConst", [x], c.derived(n.out, "lowered"), {"const_val": bias})
    upper = c.emit("top.Where", [above, lowered, c.none()], c.derived(n.out, "upper"), {"y_is_const": True, "y_const_val": 0.0})
    c.emit("top.Where", [below, raised, upper], n.out)


def is_inf(n: Node, c: Converter) -> None:
    """Beyond float32's largest finite value: +inf, -inf or either (detect_positive/negative)."""
    x = n.input(0)
    positive, negative = bool(n.attr("detect_positive", 1)), bool(n.attr("detect_negative", 1))
    if positive and negative:
        x = c.emit("top.Abs", [x], c.derived(n.out, "abs"))
    if positive:
        c.emit("top.CompareConst", [x], n.out, {"mode": "Greater", "const_val": FLOAT_MAX})
    elif negative:
        c.emit("top.CompareConst", [x], n.out, {"mode": "Less", "const_val": -FLOAT_MAX})
    else:  # nothing detected: false everywhere (|x| < 0 never holds, nor does any test of NaN)
        magnitude = c.emit("top.Abs", [x], c.derived(n.out, "abs"))
        c.emit("top.CompareConst", [magnitude], n.out, {"mode": "Less", "const_val": 0.0})


def is_nan(n: Node, c: Converter) -> None:
    """NaN is the one value not equal to itself."""
    c.emit("top.Compare", [n.input(0), n.input(0)], n.out, {"mode": "NotEqual"})


def atan(n: Node, c: Converter) -> None:
    """atan(x) = asin(x / sqrt(1 + x^2)) where |x| < 1, sign(x) * acos(1 / sqrt(1 + x^2)) elsewhere.
    TPU-MLIR has no arctangent (no top op, no active mode); each branch keeps asin's or acos's
    argument within [-1/sqrt(2), 1/sqrt(2)], where neither amplifies float32's rounding."""
    x = n.input(0)
    square = c.emit("top.Mul", [x, x], c.derived(n.out, "square"))
    hypot_sq = c.emit("top.AddConst", [square], c.derived(n.out, "hypot_sq"), {"const_val": 1.0})
    cosine = c.emit("top.Rsqrt", [hypot_sq], c.derived(n.out, "cos"))
    sine = c.emit("top.Mul", [x, cosine], c.derived(n.out, "sin"))
    small = c.emit("top.Arcsin", [sine], c.derived(n.out, "from_sin"))
    magnitude = c.emit("top.Arccos", [cosine], c.derived(n.out, "from_cos"))
    sign = c.emit("top.Sign", [x], c.derived(n.out, "sign"))
    large = c.emit("top.Mul", [sign, magnitude], c.derived(n.out, "large"))
    inside = c.emit("top.CompareConst", [c.emit("top.Abs", [x], c.derived(n.out, "abs"))], c.derived(n.out, "inside"),
                    {"mode": "Less", "const_val": 1.0})
    c.emit("top.Where", [inside, small, large], n.out)


def _iota(c: Converter, name: str, depth: int, axis: int, rank: int) -> SSAValue:
    """0..depth-1 along `axis` of a rank-`rank` weight of ones elsewhere."""
    shape = [1] * rank
    shape[axis] = depth
    return c.weight(name, np.arange(depth, dtype=np.float32).reshape(shape))


def hardmax(n: Node, c: Converter) -> None:
    """1 at the first maximum along `axis`, 0 elsewhere: ArgMax compared with 0..d-1. Before
    opset 13 the input is coerced to 2-D at `axis` (default 1), as Softmax."""
    shape = c.shape(n.input(0))
    rank = len(shape)
    x, out = n.input(0), n.out
    if n.opset >= 13:
        axis = norm_axis(n.attr("axis", -1), rank, n)
    else:
        axis = norm_axis(n.attr("axis", 1), rank, n)
        if axis < rank - 1:
            x = c.emit("top.Reshape", [x], c.derived(n.out, "flatten"),
                       {"shape": [math.prod(shape[:axis]), math.prod(shape[axis:])]})
            out, axis = c.derived(n.out, "hardmax"), 1
    work_shape = c.shape(x) if isinstance(x, str) else tuple(x.type.get_shape())
    first = c.emit("top.Arg", [x], c.derived(n.out, "argmax"),
                   {"axis": axis, "keepdims": True, "mode": "ArgMax", "select_last_index": False}, unused_results=1)
    iota = _iota(c, c.derived(n.out, "positions"), work_shape[axis], axis, len(work_shape))
    y = c.emit("top.Compare", [first, iota], out, {"mode": "Equal"})
    if out != n.out:
        c.emit("top.Reshape", [y], n.out, {"shape": list(shape)})


def lp_normalization(n: Node, c: Converter) -> None:
    """x divided by its L1 or L2 norm along `axis`."""
    p = n.attr("p", 2)
    if p not in (1, 2):
        raise n.error(f"p={p} is not supported (1 or 2, as ONNX)")
    axis = norm_axis(n.attr("axis", -1), len(c.shape(n.input(0))), n)
    norm = c.emit("top.Reduce", [n.input(0)], c.derived(n.out, "norm"),
                  {"axes": [axis], "keepdims": True, "mode": f"ReduceL{p}"})
    # A zero norm means a zero slice, which stays zero (ONNX's reference divides by 1 there).
    zero = c.emit("top.CompareConst", [norm], c.derived(n.out, "zero_norm"), {"mode": "Equal", "const_val": 0.0})
    divisor = c.emit("top.Where", [zero, c.none(), norm], c.derived(n.out, "divisor"),
                     {"x_is_const": True, "x_const_val": 1.0})
    c.emit("top.Div", [n.input(0), divisor], n.out)


def mean_variance_normalization(n: Node, c: Converter) -> None:
    """ONNX's function body: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9) over `axes`."""
    x = n.input(0)
    axes = norm_axes(list(n.attr("axes", [0, 2, 3])), len(c.shape(x)), n)
    reduce = {"axes": axes, "keepdims": True, "mode": "ReduceMean"}
    mean = c.emit("top.Reduce", [x], c.derived(n.out, "mean"), reduce)
    mean_squared = c.emit("top.Mul", [mean, mean], c.derived(n.out, "mean_squared"))
    square = c.emit("top.Mul", [x, x], c.derived(n.out, "square"))
    mean_of_square = c.emit("top.Reduce", [square], c.derived(n.out, "mean_of_square"), reduce)
    variance = c.emit("top.Sub", [mean_of_square, mean_squared], c.derived(n.out, "variance"))
    std = c.emit("top.Sqrt", [variance], c.derived(n.out, "std"))
    std_eps = c.emit("top.AddConst", [std], c.derived(n.out, "std_eps"), {"const_val": 1e-9})
    centred = c.emit("top.Sub", [x, mean], c.derived(n.out, "centred"))
    c.emit("top.Div", [centred, std_eps], n.out)


def one_hot(n: Node, c: Converter) -> None:
    """on_value where the index (negative: counted from depth) equals the position along the new
    axis, off_value elsewhere. Float indices are truncated to integers first (as onnxruntime);
    an index outside [-depth, depth) gives a row of off_value."""
    depth = int(c.const_input(n, 1, "depth").reshape(()))
    off, on = (float(v) for v in c.const_input(n, 2, "values").reshape(2))
    rank = len(c.shape(n.input(0))) + 1
    axis = norm_axis(n.attr("axis", -1), rank, n)
    index: str | SSAValue = n.input(0)
    if c.graph.dtypes.get(index) not in _INTEGER_ONNX_TYPES:
        index = c.emit("top.Cast", [index], c.derived(n.out, "index_int"), {"round_mode": "TowardsZero"},
                       IntegerType(64))
    negative = c.emit("top.CompareConst", [index], c.derived(n.out, "negative"), {"mode": "Less", "const_val": 0.0})
    shift = c.emit("top.MulConst", [negative], c.derived(n.out, "shift"), {"const_val": float(depth)})
    wrapped = c.emit("top.Add", [index, shift], c.derived(n.out, "wrapped"))
    expanded = c.emit("top.Unsqueeze", [wrapped], c.derived(n.out, "expanded"), {"axes": [axis]})
    hot = c.emit("top.Compare", [expanded, _iota(c, c.derived(n.out, "positions"), depth, axis, rank)],
                 c.derived(n.out, "hot"), {"mode": "Equal"})
    c.emit("top.Where", [hot, c.none(), c.none()], n.out, {"x_is_const": True, "x_const_val": on, "y_is_const": True, "y_const_val": off})


_INTEGER_ONNX_TYPES = {getattr(onnx.TensorProto, t) for t in (
    "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "UINT32", "UINT64")}


def lp_pool(n: Node, c: Converter) -> None:
    """(sum over the window of |x|^p)^(1/p): the window sum is AvgPool (pads counted) times the
    window's size; padding adds zeros, as in ONNX."""
    p = float(n.attr("p", 2))
    attrs = {**pool_attrs(n, c), "count_include_pad": True, "ceil_mode": False}
    # ceil_mode's last window may pass the padded end, where AvgPool divides by fewer elements:
    # the end pads grow to cover every window instead (zeros add nothing to the sum).
    in_sizes = c.shape(n.input(0))[2:]
    dilations = attrs.get("dilations", [1] * len(in_sizes))
    overhang = ceil_overhangs(in_sizes, attrs["kernel_shape"], attrs["strides"], dilations, attrs["pads"],
                              c.shape(n.out)[2:])
    attrs["pads"] = grown_end_pads(attrs["pads"], overhang)
    magnitude = c.emit("top.Abs", [n.input(0)], c.derived(n.out, "abs"))
    powered = c.emit("top.Pow", [magnitude], c.derived(n.out, "pow"), {"exponent": p})
    mean = c.emit("top.AvgPool", [powered], c.derived(n.out, "window_mean"), attrs)
    total = c.emit("top.MulConst", [mean], c.derived(n.out, "window_sum"),
                   {"const_val": float(math.prod(attrs["kernel_shape"]))})
    c.emit("top.Pow", [total], n.out, {"exponent": 1.0 / p})

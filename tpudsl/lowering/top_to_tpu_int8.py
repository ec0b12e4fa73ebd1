"""`--convert-top-to-tpu` in INT8: calibrated Top ops become int8 (asymmetric: int8/uint8) Tpu ops.

One table, `INT8_LOWERINGS`, keyed by Top op: a function that replaces the op by its int8 Tpu op
and returns True, or returns False when this op has no INT8 form (then it is lowered in F32 by
the float lowering, with Casts at its boundaries: the fallback, docs/lowering.md). The arithmetic
(multiplier/rshift, requantization, quantization) is `tpudsl/interp/requant.py`, shared with the
Tpu interpreter's INT8 kernels.

* an activation with calibrated range [lo, hi] gets a QType (int8_types.py): symmetric
  `tensor<...x!quant.uniform<i8:f32, th/127>>` with th = max(|lo|, |hi|); asymmetric uint8 or
  int8 with a zero point;
* inputs stay f32 `top.Input`s, followed by a `tpu.Cast` to int8 named `<input>_int8` (a raw uint8
  input of --fuse-preprocess keeps its type, and the moves of it theirs: `QUANTIZED_MOVES`); a float
  value (an input, a fallback op's result) feeding an int8 op is cast the same way, and an int8
  value feeding a float op is cast to f32 as `<producer>_f32`;
* a returned int8 value is cast back to f32 by a `tpu.Cast` carrying the Top output name; the op
  that computed it gets `<name>_int8`;
* weights (always symmetric): Conv2D and Deconv filters per output channel (scale max|w_c|/127,
  `!quant.uniform<i8<-127:127>:f32:axis, {...}>`; a Scale's or BatchNorm's per-channel factor as
  the filter of a depthwise 1x1 Conv2D), MatMul weights per tensor or, with
  matmul_perchannel, per column; biases int32 at scale s_w * s_in.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import Float32Type, IntegerType, StringAttr, TensorType
from xdsl.dialects.func import ReturnOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from tpudsl.dialects.opdef import SPECS, AttrView, create, is_none, loc_name, result_names
from tpudsl.dialects.quant import CalibratedQuantizedType, UniformQuantizedType
from tpudsl.interp.kernel import KernelAttrs, run_kernel
from tpudsl.interp.module_interpreter import op_attrs
from tpudsl.interp.requant import INT8_MAX, dequantize, quantize, round_half_away, scale_and_shift
from tpudsl.interp.table import KERNELS
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import TopModule
from tpudsl.lowering.int8_types import QType, qtype_of, scale_of
from tpudsl.lowering.top_to_tpu import (
    KEPT,
    LOWERINGS,
    _cast,
    _error,
    _is_float,
    _lower_op,
    _Lowering,
    _shape,
    batch_norm_scale_shift,
    cast_outputs_to_f32,
    complete_operands,
    float_suffix,
    tpu_attrs,
)

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


@dataclass
class _Int8Lowering(_Lowering):
    """The float lowering's state plus what INT8 needs: the QType of every calibrated tensor
    (`scales` holds their scales)."""

    qtypes: dict[str, QType] = field(default_factory=dict)
    scales: dict[str, float] = field(default_factory=dict)
    int8_casts: dict[tuple[SSAValue, QType], SSAValue] = field(default_factory=dict)
    quantized: dict[str, SSAValue] = field(default_factory=dict)
    matmul_perchannel: bool = False

    def value_in(self, value: SSAValue, mode: str) -> SSAValue:
        """A float op's operand: an int8 value is first cast to f32 (`<producer>_f32`)."""
        if scale_of(value) is not None:
            key = (value, "F32")
            if key not in self.casts:
                producer = value.owner
                cast = _cast(value, Float32Type(), f"{_name(value)}_f32")
                Rewriter.insert_op(cast, InsertPoint.after(producer))  # type: ignore[arg-type]
                self.casts[key] = cast.results[0]
            value = self.casts[key]
        return super().value_in(value, mode)

    def int8_in(self, value: SSAValue, target: QType | None = None) -> SSAValue:
        """An int8 op's operand in `target` (default: its own type): itself, a Cast of a float
        value (`<name>_int8`), a RequantInt of an int8 value in another type (`<name>_requant`),
        or a weight quantized per tensor (`<weight>_int8`)."""
        owner = value.owner
        if isinstance(owner, Operation) and owner.name == "top.Weight":
            return self.weight_int8(value, target)
        own = qtype_of(value)
        if own is None:
            own = self.qtypes[_name(value)]
            key = (value, own)
            if key not in self.int8_casts:
                cast = _cast(value, own.element_type(), f"{_name(value)}_int8")
                Rewriter.insert_op(cast, InsertPoint.after(owner))  # type: ignore[arg-type]
                self.int8_casts[key] = cast.results[0]
            value = self.int8_casts[key]
        if target is None or target == own:
            return value
        key = (value, target)
        if key not in self.int8_casts:
            multiplier, rshift = scale_and_shift(own.scale / target.scale)
            rq = create("tpu.RequantInt", [value], [target.tensor(_shape(value))],
                        attrs={"multiplier": [multiplier], "rshift": [rshift], "quant_mode": "MultiplierShift"},
                        loc=f"{_name(value)}_requant")
            Rewriter.insert_op(rq, InsertPoint.after(value.owner))  # type: ignore[arg-type]
            self.int8_casts[key] = rq.results[0]
        return self.int8_casts[key]

    def weight_int8(self, value: SSAValue, target: QType | None = None) -> SSAValue:
        """A weight quantized per tensor: in `target`, or symmetric at max|w|/127 in [-127, 127]."""
        owner = value.owner
        data = np.asarray(self.top.weight_of(owner), dtype=np.float32)  # type: ignore[arg-type]
        q = target or QType(_weight_scale(data))
        lo, hi = (-INT8_MAX, INT8_MAX) if target is None else q.storage_range
        name = f"{loc_name(owner)}_int8"  # type: ignore[arg-type]
        key = f"{name}@{q!r}"
        if key not in self.quantized:
            stored = quantize(data, q.scale, lo, hi, q.dtype, q.zero_point)
            op = self.top.add_weight(name, stored, before=owner)  # type: ignore[arg-type]
            self.quantized[key] = Rewriter.replace_value_with_new_type(op.results[0], q.tensor(data.shape))
        return self.quantized[key]

    def new_weight(self, name: str, data: np.ndarray, before: Operation, type_: Attribute | None = None) -> SSAValue:
        op = self.top.add_weight(name, data, before=before)
        return Rewriter.replace_value_with_new_type(op.results[0], type_) if type_ is not None else op.results[0]


def int8_params(top: TopModule) -> dict[str, tuple[float, int]]:
    """(scale, zero point) of every quantized activation of a lowered module, by tensor name (to
    compare it with its float counterpart: value = (stored - zero point) * scale)."""
    return {_name(r): (q.scale, q.zero_point) for op in top.main_func().walk() for r in op.results
            if (q := qtype_of(r)) is not None}


def _name(value: SSAValue) -> str:
    return result_names(value.owner)[value.index]  # type: ignore[arg-type]


def _float_attrs(op: Operation) -> dict:
    """The Tpu attributes the float lowering gives this op (geometry, fused relu, ...)."""
    return tpu_attrs(op, LOWERINGS[op.name])


def _weight_scale(data: np.ndarray) -> float:
    m = float(np.abs(data).max()) if data.size else 0.0
    return m / INT8_MAX if m > 0 else 1.0 / INT8_MAX


def _replace(op: Operation, s: _Int8Lowering, name: str, operands: list[SSAValue], attrs: dict) -> bool:
    """Replace `op` by Tpu op `name` with a quantized result in its calibrated QType. A fused
    relu's limit is in the result's stored units: round(limit / scale) + zero point, at most the
    storage maximum."""
    q = s.qtypes[_name(op.results[0])]
    result = q.tensor(_shape(op.results[0]))
    if "relu_limit" in attrs and _top(op).get("do_relu", False) and _top(op).get("relu_limit", -1.0) > 0:
        limit = round_half_away(_top(op)["relu_limit"] / q.scale) + q.zero_point
        attrs["relu_limit"] = float(min(limit, q.storage_range[1]))
    Rewriter.replace_op(op, create(name, complete_operands(name, operands, s, op), [result], attrs=attrs,
                                   loc=op.location))
    return True


def _top(op: Operation) -> AttrView:
    return AttrView(op.attributes, SPECS[op.name])


def _is_weight(value: SSAValue) -> bool:
    return isinstance(value.owner, Operation) and value.owner.name == "top.Weight"


@dataclass(frozen=True)
class _Named:
    """Float weight data and the name its quantized form is derived from (`<name>_int8`, `<name>_int32`)."""

    data: np.ndarray
    name: str


def _named(s: _Int8Lowering, weight: SSAValue) -> _Named:
    owner: Operation = weight.owner  # type: ignore[assignment]
    return _Named(np.asarray(s.top.weight_of(owner), dtype=np.float32), loc_name(owner))


def _bias(s: _Int8Lowering, op: Operation, bias: _Named, scales: np.ndarray) -> SSAValue:
    """An f32 bias as int32 at per-channel `scales` (s_w * s_in): round half away, saturated."""
    data = bias.data.astype(np.float64).ravel()
    q = [round_half_away(b / sc) for b, sc in zip(data, np.broadcast_to(scales, data.shape), strict=True)]
    array = np.clip(q, INT32_MIN, INT32_MAX).astype(np.int32).reshape(bias.data.shape)
    return s.new_weight(f"{bias.name}_int32", array, op)


def _per_channel_weight(s: _Int8Lowering, op: Operation, w: _Named, axis: int) -> tuple[SSAValue, np.ndarray]:
    """A weight quantized per channel along `axis`: s_w[c] = max|w_c| / 127, the filter typed
    `!quant.uniform<i8<-127:127>:f32:axis, {...}>`; returns the int8 weight and s_w."""
    data = w.data
    sw = np.array([_weight_scale(np.take(data, c, axis)) for c in range(data.shape[axis])])
    shape = [1] * data.ndim
    shape[axis] = -1
    qw = quantize(data, sw.reshape(shape), -INT8_MAX)
    wtype = TensorType(UniformQuantizedType.make("i8", Float32Type(), list(sw), [0] * len(sw), axis=axis,
                                                 storage_range=(-INT8_MAX, INT8_MAX)), data.shape)
    return s.new_weight(f"{w.name}_int8", qw, op, wtype), sw


def _filter_op(op: Operation, s: _Int8Lowering, tpu: str, axis: int) -> bool:
    """Conv2D / Deconv of the op's own filter (and bias, when a weight)."""
    has_bias = len(op.operands) > 2 and _is_weight(op.operands[2])
    return _requantized_filter(op, s, tpu, _float_attrs(op), _named(s, op.operands[1]),
                               _named(s, op.operands[2]) if has_bias else None, axis)


def _requantized_filter(op: Operation, s: _Int8Lowering, tpu: str, attrs: dict, weight: _Named,
                        bias: _Named | None, axis: int) -> bool:
    """Per output channel c (filter axis `axis`) s_w[c], int32 bias b / (s_w[c] s_in), and
    (multiplier[c], rshift[c]) = scale_and_shift(s_w[c] s_in / s_out)."""
    x = op.operands[0]
    s_in, s_out = s.scales[_name(x)], s.scales[_name(op.results[0])]
    filter_, sw = _per_channel_weight(s, op, weight, axis)
    operands = [s.int8_in(x), filter_, _bias(s, op, bias, sw * s_in) if bias is not None else s.none_value(op)]
    pairs = [scale_and_shift(float(c) * s_in / s_out) for c in sw]
    attrs = {**attrs, "multiplier": [m for m, _ in pairs], "rshift": [r for _, r in pairs],
             "quant_mode": "MultiplierShift"}
    return _replace(op, s, tpu, operands, attrs)


def _conv(op: Operation, s: _Int8Lowering) -> bool:
    """A static filter [oc, ic/g, kh, kw], per output channel (axis 0)."""
    return _is_weight(op.operands[1]) and _filter_op(op, s, "tpu.Conv2D", 0)


def _channel_affine(op: Operation, s: _Int8Lowering) -> bool:
    """Scale, and BatchNorm with constant statistics, on an NCHW input: y = x a[c] + b[c] is a
    depthwise 1x1 convolution (group C, filter a as [C, 1, 1, 1]: cv18xx's ScaleToDwConv), lowered
    as Conv's INT8 form: s_w[c] = |a[c]| / 127 (the filter is +-127, or 0 where a[c] = 0), bias
    int32 round(b[c] / (s_w[c] s_in)), (multiplier[c], rshift[c]) of s_w[c] s_in / s_out, a fused
    relu as Conv's. So it needs no new arithmetic: the Conv2D kernel, records and layer groups.
    Weights: Scale's `<a>_int8`, `<b>_int32`; BatchNorm's `<bn>_scale_int8`, `<bn>_bias_int32`
    (the float lowering's `<bn>_scale`/`<bn>_bias`, quantized). Another rank, or parameters
    computed by other ops: F32."""
    shape = _shape(op.operands[0])
    if len(shape) != 4 or not all(_is_weight(v) or is_none(v) for v in op.operands[1:]):
        return False
    channels = shape[1]
    if op.name == "top.BatchNorm":
        params = list(batch_norm_scale_shift(op, s.top).items())
    else:  # Scale's own weights (its bias may be `none`)
        values = op.operands[1:2] if is_none(op.operands[2]) else op.operands[1:3]
        params = [(loc_name(v.owner), s.top.weight_of(v.owner)) for v in values]  # type: ignore[arg-type]
    # the factor as the depthwise filter [C, 1, 1, 1], the shift as the bias [C]
    weight, *bias = (_Named(np.asarray(data, np.float32).reshape(dims), name)
                     for (name, data), dims in zip(params, [(channels, 1, 1, 1), (channels,)], strict=False))
    attrs = {**_float_attrs(op), "kernel_shape": [1, 1], "strides": [1, 1], "pads": [0, 0, 0, 0],
             "group": channels, "with_bias": bool(bias)}
    return _requantized_filter(op, s, "tpu.Conv2D", attrs, weight, bias[0] if bias else None, 0)


def _deconv(op: Operation, s: _Int8Lowering) -> bool:
    """A static filter in ONNX layout [ic, oc/g, kh, kw]: group 1 per output channel (axis 1) as
    Conv; with groups, `_grouped_deconv`."""
    top = _top(op)
    if not _is_weight(op.operands[1]) or top.get("dynweight_reorderd", False):
        return False
    if top.get("group", 1) != 1:
        return _grouped_deconv(op, s)
    return _filter_op(op, s, "tpu.Deconv", 1)


def _grouped_deconv(op: Operation, s: _Int8Lowering) -> bool:
    """With groups an output channel c = g oc/g + j is a (group, column) pair that no per-axis type
    names, so the scales go where TPU-MLIR puts per-channel ones: the filter is plain i8, each
    channel's slice w[g ic/g:(g+1) ic/g, j] at s_w[c] = its max|w| / 127; the Deconv sums exactly
    into int32 (`<name>_int32`: multipliers 1, shifts 0, the bias at s_w[c] s_in, a fused relu
    clamps the sum at 0); a tpu.RequantIntAxis carrying the Top name requantizes along C with quant
    rows (m[c], -rshift[c], zp_out), (m, rshift) = scale_and_shift(s_w[c] s_in / s_out), HalfUp
    (the group-1 Deconv's rounding). A relu_limit has no int32 form: F32."""
    top = _top(op)
    if top.get("do_relu", False) and top.get("relu_limit", -1.0) > 0:
        return False
    x, name = op.operands[0], _name(op.results[0])
    s_in, q_out = s.scales[_name(x)], s.qtypes[name]
    weight = _named(s, op.operands[1])
    data, group = weight.data, top["group"]
    ic, ocg = data.shape[:2]
    per_group = data.reshape(group, ic // group, ocg, -1)
    sw = np.array([[_weight_scale(per_group[g, :, j]) for j in range(ocg)] for g in range(group)])
    qw = quantize(per_group, sw.reshape(group, 1, ocg, 1), -INT8_MAX).reshape(data.shape)
    operands = [s.int8_in(x), s.new_weight(f"{weight.name}_int8", qw, op)]
    sw = sw.ravel()
    has_bias = len(op.operands) > 2 and _is_weight(op.operands[2])
    operands.append(_bias(s, op, _named(s, op.operands[2]), sw * s_in) if has_bias else s.none_value(op))
    attrs = {**_float_attrs(op), "multiplier": [1] * len(sw), "rshift": [0] * len(sw),
             "quant_mode": "MultiplierShift"}
    attrs.pop("relu_limit", None)
    shape = _shape(op.results[0])
    acc = create("tpu.Deconv", complete_operands("tpu.Deconv", operands, s, op), [TensorType(IntegerType(32), shape)],
                 attrs=attrs, loc=f"{name}_int32")
    Rewriter.insert_op(acc, InsertPoint.before(op))
    pairs = [scale_and_shift(float(c) * s_in / q_out.scale) for c in sw]
    rows = np.array([[m, -r, q_out.zero_point] for m, r in pairs], np.int32).reshape(1, len(sw), 1, 3)
    quant = s.new_weight(f"{name}_quant", rows, op)
    Rewriter.replace_op(op, create("tpu.RequantIntAxis", [acc.results[0], quant], [q_out.tensor(shape)],
                                   attrs={"quant_mode": "MultiplierShift", "round_mode": "HalfUp", "rq_axis": 1},
                                   loc=op.location))
    return True


def _matmul(op: Operation, s: _Int8Lowering) -> bool:
    """The right operand (a weight at max|w|/127, or an int8 activation) at s_r, int32 bias
    b / (s_r s_in), one (multiplier, rshift) of s_r s_in / s_out. With matmul_perchannel a 2-D
    weight is quantized per output column (as Conv's filter per output channel): s_r, the bias
    scale and (multiplier, rshift) per column."""
    x, right = op.operands[0], op.operands[1]
    has_bias = len(op.operands) > 2 and not is_none(op.operands[2])
    if (has_bias and not _is_weight(op.operands[2])):
        return False
    s_in, s_out = s.scales[_name(x)], s.scales[_name(op.results[0])]
    top = _top(op)
    if s.matmul_perchannel and _is_weight(right) and len(_shape(right)) == 2 and not top.get("hdim_is_batch", False):
        weight, s_right = _per_channel_weight(s, op, _named(s, right), 0 if top.get("right_transpose", False) else 1)
        operands = [s.int8_in(x), weight]
    else:
        operands = [s.int8_in(x), s.int8_in(right)]
        s_right = np.array([scale_of(operands[1])])
    operands.append(_bias(s, op, _named(s, op.operands[2]), s_right * s_in) if has_bias else s.none_value(op))
    pairs = [scale_and_shift(float(c) * s_in / s_out) for c in s_right]
    attrs = {**_float_attrs(op), "multipliers": [m for m, _ in pairs], "rshifts": [r for _, r in pairs],
             "quant_mode": "MultiplierShift"}
    return _replace(op, s, "tpu.MatMul", operands, attrs)


def _add(op: Operation, s: _Int8Lowering) -> bool:
    """sum_i x_i m_i >> n: each input's ratio r_i = float32(s_i / s_out) as m_i / 2^n with one
    shift n, the largest in get_scale_and_shift's range [-32, 30] at which every
    m_i = round(r_i 2^n) fits an int32 (one input's own best shift would round the others away:
    r = 1 alone gives n = 0, and 0.82 would become 1)."""
    return _weighted_sum(op, s, "tpu.Add")


def _sub(op: Operation, s: _Int8Lowering) -> bool:
    """Add's constants for two inputs; the kernel subtracts: x_0 m_0 - x_1 m_1 >> n."""
    return len(op.operands) == 2 and _weighted_sum(op, s, "tpu.Sub")


def _weighted_sum(op: Operation, s: _Int8Lowering, tpu: str) -> bool:
    coeff = _top(op).get("coeff")
    if coeff is not None and any(c != 1.0 for c in coeff):
        return False
    s_out = s.scales[_name(op.results[0])]
    operands = [s.int8_in(v) for v in op.operands]
    ratios = [float(np.float32(scale_of(v) / s_out)) for v in operands]  # type: ignore[operator]
    rshift = next(n for n in range(30, -33, -1) if all(abs(round_half_away(r * 2.0**n)) < INT32_MAX for r in ratios))
    attrs = {**_float_attrs(op), "multipliers": [round_half_away(r * 2.0**rshift) for r in ratios],
             "rshifts": [rshift] * len(ratios)}
    attrs.pop("coeff", None)
    return _replace(op, s, tpu, operands, attrs)


def _mul(op: Operation, s: _Int8Lowering) -> bool:
    """x0 x1 (int) with one (multiplier, rshift) of s_0 s_1 / s_out."""
    if len(op.operands) != 2:
        return False
    s_out = s.scales[_name(op.results[0])]
    operands = [s.int8_in(v) for v in op.operands]
    multiplier, rshift = scale_and_shift(scale_of(operands[0]) * scale_of(operands[1]) / s_out)  # type: ignore[operator]
    attrs = {**_float_attrs(op), "multiplier": multiplier, "rshift": rshift, "quant_mode": "MultiplierShift"}
    return _replace(op, s, "tpu.Mul", operands, attrs)


def _mul_const(op: Operation, s: _Int8Lowering) -> bool:
    """x c: one (multiplier, rshift) of s_in c / s_out (a negative c gives a negative multiplier;
    const_val stays for the reader, the kernel uses the multiplier)."""
    s_in, s_out = s.scales[_name(op.operands[0])], s.scales[_name(op.results[0])]
    multiplier, rshift = scale_and_shift(s_in * _top(op)["const_val"] / s_out)
    attrs = {**_float_attrs(op), "multiplier": multiplier, "rshift": rshift}
    return _replace(op, s, "tpu.MulConst", [s.int8_in(op.operands[0])], attrs)


def _add_const(op: Operation, s: _Int8Lowering) -> bool:
    """x + c: (multiplier, rshift) of s_in / s_out (rshift >= 0), and the constant in the
    result's units shifted left by rshift, C = round_half_away(c / s_out 2^rshift), in const_val
    (as TPU-MLIR's INT8 AddConst holds it): y = (x m + C) >> rshift, one rounding."""
    return _const_sum(op, s, "tpu.AddConst")


def _sub_const(op: Operation, s: _Int8Lowering) -> bool:
    """x - c (is_reverse: c - x): AddConst's constants for c; the kernel subtracts."""
    return _const_sum(op, s, "tpu.SubConst")


def _const_sum(op: Operation, s: _Int8Lowering, tpu: str) -> bool:
    s_in, s_out = s.scales[_name(op.operands[0])], s.scales[_name(op.results[0])]
    multiplier, rshift = scale_and_shift(s_in / s_out)
    const = round_half_away(_top(op)["const_val"] / s_out * 2.0**rshift) if rshift >= 0 else None
    if const is None or abs(const) >= 2**53:  # a left shift, or a constant no f64 holds exactly: F32
        return False
    attrs = {**_float_attrs(op), "multiplier": multiplier, "rshift": rshift, "const_val": float(const)}
    return _replace(op, s, tpu, [s.int8_in(op.operands[0])], attrs)


def _gather(op: Operation, s: _Int8Lowering) -> bool:
    """Constant indices (a weight): the int8 values picked keep the input's QType, requantized to
    the output's first when they differ (as the moves); the indices stay as they are."""
    if not _is_weight(op.operands[1]):
        return False
    q_out = s.qtypes[_name(op.results[0])]
    return _replace(op, s, "tpu.Gather", [s.int8_in(op.operands[0], q_out), op.operands[1]], _float_attrs(op))


def _same_scale(op: Operation, s: _Int8Lowering) -> bool:
    """Ops that move or pick int8 values (MaxPool, Reshape, Permute, Concat, ...): no arithmetic;
    an input whose QType (scale, zero point, storage) differs from the output's is requantized to
    it first (RequantInt)."""
    q_out = s.qtypes[_name(op.results[0])]
    operands = [v if is_none(v) else s.int8_in(v, q_out) for v in op.operands]
    return _replace(op, s, LOWERINGS[op.name].tpu, operands, _float_attrs(op))


def _avg_pool(op: Operation, s: _Int8Lowering) -> bool:
    """The window sum times s_in / (s_out kh kw), one (multiplier, rshift). With pads and
    count_include_pad false the divisor is the window's element count inside the input, per
    position: the op also carries scale = float32(s_in / s_out) and the kernel requantizes each
    position by scale_and_shift(scale / count). A ceil-mode pool is the float rule's: its end pads
    grown by the overhang, which the divisor never counts (count_include_pad false); one whose
    divisor counts explicit pads but not the overhang (ceil_overhang) falls back to F32."""
    attrs = _float_attrs(op)
    pool = AttrView(attrs, SPECS["tpu.Pool2D"])
    if pool.get("ceil_overhang"):
        return False
    s_in, s_out = s.scales[_name(op.operands[0])], s.scales[_name(op.results[0])]
    multiplier, rshift = scale_and_shift(s_in / (s_out * int(np.prod(pool["kernel_shape"]))))
    attrs.update(multiplier=multiplier, rshift=rshift)
    if any(pool["pads"]) and not pool["count_include_pad"]:
        attrs["scale"] = float(np.float32(s_in / s_out))
    return _replace(op, s, "tpu.Pool2D", [s.int8_in(op.operands[0])], attrs)


def _softmax(op: Operation, s: _Int8Lowering) -> bool:
    """An exp table on int8 differences from the max: entry d = round(exp(-d s_in beta) 2^16)
    (int32, `<name>_table`), then the kernel's float tail (kernels_tpu_int8.softmax). Not log."""
    if _top(op).get("log", False):
        return False
    x = op.operands[0]
    s_in, s_out = s.scales[_name(x)], s.scales[_name(op.results[0])]
    beta = _top(op).get("beta", 1.0)
    table = np.array([round_half_away(math.exp(-d * s_in * beta) * 2**16) for d in range(256)], np.int32)
    return _replace(op, s, "tpu.Softmax", [s.int8_in(x), s.new_weight(f"{loc_name(op)}_table", table, op)],
                    _float_attrs(op))


def _lut(op: Operation, s: _Int8Lowering) -> bool:
    """y = table[x]: entry i (the input's byte) is the op's Top kernel at the stored value i
    (int8: i < 128 ? i : i - 256; uint8: i) dequantized with the input's scale and zero point,
    quantized in the output's QType (the table has its storage type). A function undefined on some
    byte the input's type can hold (Sqrt or Log of a symmetric range's negative half) has no table
    (a NaN has no int8): the op stays in F32 with casts around it, as an op without an INT8 form."""
    x = op.operands[0]
    if len(op.operands) != 1 or _shape(x) != _shape(op.results[0]):
        return False
    q_in, q_out = s.qtypes[_name(x)], s.qtypes[_name(op.results[0])]
    stored = np.arange(256, dtype=np.uint8).view(q_in.dtype)
    attrs = KernelAttrs(dict(op_attrs(op)), [(256,)], [np.dtype(np.float32)])
    (y,) = run_kernel(KERNELS[op.name], [dequantize(stored, q_in.scale, q_in.zero_point)], attrs)  # NaN: no warning
    if np.isnan(y).any():
        return False
    lo, hi = q_out.storage_range
    table = s.new_weight(f"{loc_name(op)}_table", quantize(y, q_out.scale, lo, hi, q_out.dtype, q_out.zero_point), op)
    return _replace(op, s, "tpu.Lut", [s.int8_in(x), table], {})


# The Top ops that clamp, and their real bounds.
CLAMP_BOUNDS: dict[str, Callable[[AttrView], tuple[float, float]]] = {
    "top.Clip": lambda a: (a["min"], a["max"]),
    "top.Relu": lambda a: (0.0, a["relu_limit"] if a["relu_limit"] > 0 else math.inf),
}


def _clamp(op: Operation, s: _Int8Lowering) -> bool:
    """A clamp (Clip, Relu) whose input and result share one QType (a QDQ model's pair,
    docs/quantization.md) is a clamp of stored integers to its bounds quantized as the Lut's
    entries are (round half away from zero, + zero point, saturated). Where they cover the whole
    storage range it is the identity, and the op goes, its name moved onto the op giving its int8
    input (the tensor keeps the name its users read, as --fuse-relu moves a Relu's): the int8
    producer, or the Cast of a float one, when that has one result and only this clamp reads it.
    Otherwise a tpu.Clip on int8, the bounds in stored units. Two QTypes: a Lut."""
    x, q = op.operands[0], s.qtypes[_name(op.results[0])]
    if s.qtypes[_name(x)] != q:
        return _lut(op, s)
    lo, hi = q.storage_range
    bounds = [int(quantize(np.float32(b), q.scale, lo, hi, q.dtype, q.zero_point))
              for b in CLAMP_BOUNDS[op.name](_top(op))]
    only_reader = x.has_one_use()  # before int8_in, whose Cast of a float x reads x too
    value = s.int8_in(x)
    producer = value.owner
    if bounds == [lo, hi] and only_reader and all(use.operation is op for use in value.uses) \
            and isinstance(producer, Operation) and len(producer.results) == 1:
        producer.location = op.location
        Rewriter.replace_op(op, [], [value])
        return True
    return _replace(op, s, "tpu.Clip", [value], {"min": float(bounds[0]), "max": float(bounds[1])})


# The element-wise functions of one tensor that become a 256-entry Lut (Clip, Relu: `_clamp` first).
LUT_OPS = ("top.Relu", "top.LeakyRelu", "top.Clip", "top.Sigmoid", "top.SiLU", "top.GELU", "top.Tanh",
           "top.Exp", "top.HardSwish", "top.HardSigmoid", "top.Mish", "top.Softplus", "top.Abs", "top.Elu",
           "top.Erf", "top.Log", "top.Sqrt", "top.Reciprocal")

# Ops that move or pick values without arithmetic (_same_scale).
MOVES = ("top.MaxPool", "top.Reshape", "top.Flatten", "top.Permute", "top.Transpose", "top.Squeeze",
         "top.Unsqueeze", "top.Concat")

# The per-channel affine ops whose INT8 form is a depthwise 1x1 tpu.Conv2D (_channel_affine), not
# their float rule's tpu.Scale.
CHANNEL_AFFINE_OPS = ("top.Scale", "top.BatchNorm")

# The Tpu ops only the INT8 lowering creates (no float rule does): tables and scale changes.
INT8_ONLY_OPS = ("tpu.Lut", "tpu.RequantInt", "tpu.RequantIntAxis")

INT8_LOWERINGS: dict[str, Callable[[Operation, _Int8Lowering], bool]] = {
    "top.Conv": _conv,
    "top.MatMul": _matmul,
    "top.Add": _add,
    "top.Sub": _sub,
    "top.Deconv": _deconv,
    **{name: _channel_affine for name in CHANNEL_AFFINE_OPS},
    "top.Softmax": _softmax,
    "top.Mul": _mul,
    "top.MulConst": _mul_const,
    "top.AddConst": _add_const,
    "top.SubConst": _sub_const,
    "top.Gather": _gather,
    "top.AvgPool": _avg_pool,
    **{name: _same_scale for name in MOVES},
    **{name: _lut for name in LUT_OPS},
    **{name: _clamp for name in CLAMP_BOUNDS},
}

# The Tpu op each INT8 rule makes (the backend's coverage of INT8 is checked on it): its float
# rule's, but a 256-entry table for LUT_OPS and a depthwise Conv2D for CHANNEL_AFFINE_OPS.
INT8_TPU_OP = {name: "tpu.Lut" if name in LUT_OPS else "tpu.Conv2D" if name in CHANNEL_AFFINE_OPS
               else LOWERINGS[name].tpu for name in INT8_LOWERINGS}


# Operands that hold indices, not real numbers, by op: they may be integer tensors.
INDEX_OPERANDS = {"top.Gather": (1,)}


def _all_float(op: Operation) -> bool:
    """Every result and tensor operand holds real numbers (calibrated, float or int8 by now), index
    operands aside: an op on integer tensors (indices, shapes) has no INT8 form."""
    skip = INDEX_OPERANDS.get(op.name, ())
    return all(_is_float(r) for r in op.results) and all(
        _is_float(v) or scale_of(v) is not None or is_none(v)
        for i, v in enumerate(op.operands) if i not in skip)


# Ops that only move values: on tensors that are quantized already (a raw uint8 input's, from
# --fuse-preprocess) they move the stored values and keep the type. Yuv2rgbFormula is defined on
# stored pixel bytes (uint8 frames to uint8 pixels): it too keeps its types, in every mode.
QUANTIZED_MOVES = (*MOVES, "top.Slice", "top.Yuv2rgbFormula")


def _moves_quantized(op: Operation) -> bool:
    """A move whose tensors all have their quantized type already (no calibrated range to give them one)."""
    tensors = [v for v in (*op.operands, *op.results) if isinstance(v.type, TensorType)]
    return op.name in QUANTIZED_MOVES and all(scale_of(v) is not None for v in tensors)


def _keep_types(op: Operation, s: _Int8Lowering) -> None:
    name = LOWERINGS[op.name].tpu
    Rewriter.replace_op(op, create(name, complete_operands(name, list(op.operands), s, op),
                                   [r.type for r in op.results], attrs=_float_attrs(op), loc=op.location))


def _calibrated_qtypes(top: TopModule, asymmetric: bool) -> dict[str, QType]:
    """The QType of every calibrated tensor (int8_types.py), by name; the calibrated types of
    inputs and weights become f32 again."""
    qtypes = {}
    for op in top.main_func().walk():
        for result, name in zip(op.results, result_names(op), strict=True):
            t = result.type
            if isinstance(t, TensorType) and isinstance(t.element_type, CalibratedQuantizedType):
                qtypes[name] = QType.of_range(t.element_type.min, t.element_type.max, asymmetric)
                if op.name in KEPT:
                    Rewriter.replace_value_with_new_type(result, TensorType(t.element_type.expressed_type,
                                                                            t.get_shape()))
    return qtypes


def _relu_needs_zero_point(op: Operation, s: _Int8Lowering) -> bool:
    """A fused relu clamps stored values at 0: right only where 0.0 is stored as 0. An asymmetric
    result with another zero point (a range the table gave below 0) falls back to F32."""
    return _top(op).get("do_relu", False) and any(
        s.qtypes[_name(r)].zero_point != 0 for r in op.results if _name(r) in s.qtypes)


def lower_int8(top: TopModule, qtable: Mapping[str, str], matmul_perchannel: bool = False,
               asymmetric: bool = False) -> None:
    """Lower @main in INT8 (asymmetric: uint8/int8 with zero points); ops the qtable names in a
    float mode, and ops without an INT8 form, in that float mode (F32 for the latter). Outputs
    come back as f32."""
    if top.module.attributes.get("module.state") != StringAttr("TOP_CALIBRATED"):
        raise TpudslError("convert-top-to-tpu: INT8 needs a calibrated module: run --import-calibration-table first")
    state = _Int8Lowering(top, "F32", {})
    state.qtypes = _calibrated_qtypes(top, asymmetric)
    state.scales = {name: q.scale for name, q in state.qtypes.items()}
    state.matmul_perchannel = matmul_perchannel
    main = top.main_func()
    for op in list(main.body.block.ops):
        if op.name in KEPT or isinstance(op, ReturnOp):
            continue
        mode = qtable.get(loc_name(op), "INT8")
        if any(_name(r) not in state.scales for r in op.results if _is_float(r)):
            raise _error(op, "has no calibrated range: run --import-calibration-table first")
        if _moves_quantized(op):
            _keep_types(op, state)
            continue
        rule = INT8_LOWERINGS.get(op.name)
        if mode == "INT8" and rule is not None and _all_float(op) and not _relu_needs_zero_point(op, state) \
                and rule(op, state):
            continue
        state.mode = "F32" if mode == "INT8" else mode
        _lower_op(op, state)
    cast_outputs_to_f32(main, lambda v: "int8" if scale_of(v) is not None else float_suffix(v))
    for op in list(main.body.block.ops):  # the float weights that int8/int32 ones replaced
        if op.name == "top.Weight" and not op.results[0].uses:
            Rewriter.erase_op(op)
    main.update_function_type()
    if any(isinstance(getattr(r.type, "element_type", None), CalibratedQuantizedType) for op in main.walk()
           for r in op.results):
        raise TpudslError("convert-top-to-tpu: a calibrated type was left after INT8 lowering")

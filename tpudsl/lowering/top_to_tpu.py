"""`--convert-top-to-tpu`: Top ops become Tpu ops in the precision `--processor-assign` chose.

One table, keyed by Top op name: `LOWERINGS["top.Conv"]` says which Tpu op it becomes and which
attributes change on the way. Attributes the rule does not name are copied when the Tpu op
declares them (converted to the Tpu kind: Top's `round_mode = "HalfUp"` becomes
`#tpu<round_mode HalfUp>`); an attribute the Tpu op does not declare and the rule does not consume
is an error naming it — an attribute is never dropped silently.

Float modes (F32, F16, BF16; docs/lowering.md):
* every tensor a Tpu op produces has the mode's element type and keeps its Top name;
* the model's inputs stay f32 (`top.Input`), followed by a `tpu.Cast` named `<input>_<mode>` (a raw
  uint8 input of --fuse-preprocess keeps its type, as every tensor that is not float);
* a returned value is cast back to f32 by a `tpu.Cast` that carries the Top output name, and the op
  that computed it in the mode's type gets the derived name `<name>_<mode>`;
* weights are converted to the mode's type under the derived name `<weight>_<mode>` (F16: float16
  data; BF16: its bit patterns as uint16, as TPU-MLIR stores them), except the bias of Conv2D and
  MatMul, which stays f32 (accumulation is in f32 on the chip).
INT8 (module mode INT8, after --import-calibration-table) is `top_to_tpu_int8.py`, which falls
back to this float lowering for ops without an INT8 form (docs/lowering.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    FusedLoc,
    ModuleOp,
    NameLoc,
    NoneAttr,
    NoneType,
    StringAttr,
    TensorType,
    UnknownLoc,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tpudsl.dialects.attrs import from_attr, to_attr
from tpudsl.dialects.geometry.batch_norm import batch_norm_affine
from tpudsl.dialects.geometry.ssd import BOX
from tpudsl.dialects.geometry.window import auto_pads, ceil_overhangs, grown_end_pads
from tpudsl.dialects.opdef import REQUIRED, SPECS, AttrView, create, describe, loc_name, result_names
from tpudsl.dialects.quant import CalibratedQuantizedType
from tpudsl.dialects.tpu import ACTIVE_COEFFS, ACTIVE_MODES, AS_TOP, GELU_MODES
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import TopModule, top_module_of
from tpudsl.lowering.overflow import mask_ops_kept_f32
from tpudsl.lowering.qtable import read_qtable
from tpudsl.lowering.weight_only import A16_LOWERINGS, WEIGHT_BITS, WEIGHT_ONLY_MODES, A16Lowering

FLOAT_MODES: dict[str, Callable[[], Attribute]] = {"F32": Float32Type, "F16": Float16Type, "BF16": BFloat16Type}
FLOAT_TYPES = (Float32Type, Float16Type, BFloat16Type)
# Ops that are the same op in a Tpu module (TPU-MLIR keeps them from the Top dialect).
KEPT = ("top.Input", "top.Weight", "top.None")
# Operands that stay f32 in every float mode: (Tpu op, operand index). Conv2D and MatMul biases
# (the chip accumulates in f32), and indices held in float tensors: f16 is exact to 2048, bf16 to
# 256 only, so an index in the mode's type would silently pick another element.
# YoloDetection and DetectionOutput are F32 in every mode, as TPU-MLIR lowers them (their heads, or loc, conf
# and priorbox: --add-postprocess's);
# so are LSTM and GRU (their record computes in f32: docs/lowering.md), every operand and result.
# GridSampler is F32 in every mode: its record (BdcGridSample) models f32 only (TPU-MLIR also has
# an F16 form; its grid coordinates in f16 would move points by up to 1/2048 of the input).
RECURRENT = {"tpu.LSTM": (8, 3), "tpu.GRU": (5, 2)}  # operand (LSTM: with its peephole) and result counts
F32_OPERANDS = {("tpu.Conv2D", 2), ("tpu.MatMul", 2), ("tpu.Gather", 1), ("tpu.GatherElements", 1),
                ("tpu.GatherND", 1), ("tpu.ScatterElements", 1),
                ("tpu.ScatterND", 1), *(("tpu.YoloDetection", i) for i in range(3)),
                *(("tpu.DetectionOutput", i) for i in range(3)),
                ("tpu.GridSampler", 0), ("tpu.GridSampler", 1),
                *((op, i) for op, (operands, _) in RECURRENT.items() for i in range(operands))}
# Results that stay f32 in every float mode, for the same reason: (Tpu op, result index).
F32_RESULTS = {("tpu.TopK", 1), ("tpu.Arg", 0), ("tpu.MaxPoolWithMask", 1), ("tpu.YoloDetection", 0),
               ("tpu.DetectionOutput", 0), ("tpu.GridSampler", 0),
               *((op, i) for op, (_, results) in RECURRENT.items() for i in range(results))}


@dataclass(frozen=True)
class Rule:
    """How one Top op lowers: the Tpu op, attributes it sets or removes, a check of the Top op."""

    tpu: str
    attrs: Callable[[Operation, AttrView], Mapping[str, Any]] = lambda op, a: {}
    consumes: tuple[str, ...] = ()  # Top attributes the rule has turned into something else
    # The Tpu op's operands, when they are not the Top op's (computed weights)
    operands: Callable[[Operation, TopModule], list[SSAValue]] | None = None


def _error(op: Operation, message: str) -> TpudslError:
    return TpudslError(f"convert-top-to-tpu: {describe(op)}: {message}")


def _shape(value: SSAValue) -> tuple[int, ...]:
    return tuple(value.type.get_shape())  # type: ignore[attr-defined]


def _window(op: Operation, a: AttrView) -> dict[str, Any]:
    """2-D kernel geometry with auto_pad resolved to explicit pads (Tpu ops have no auto_pad)."""
    kernel = list(a["kernel_shape"])
    if len(kernel) != 2:
        raise _error(op, f"only 2-D windows are lowered yet, kernel_shape is {kernel}")
    x = _shape(op.operands[0])
    strides = list(a.get("strides") or [1, 1])
    dilations = list(a.get("dilations") or [1, 1])
    pads = auto_pads(x[2:], kernel, strides, dilations, a.get("auto_pad", "")) or list(a.get("pads") or [0] * 4)
    return {"kernel_shape": kernel, "strides": strides, "pads": pads}


def _conv(op: Operation, a: AttrView) -> dict[str, Any]:
    with_bias = op.operands[2].owner.name != "top.None" if len(op.operands) > 2 else False  # type: ignore[union-attr]
    return {**_window(op, a), "with_bias": with_bias}


def _pool(mode: str) -> Callable[[Operation, AttrView], dict[str, Any]]:
    def attrs(op: Operation, a: AttrView) -> dict[str, Any]:
        if not a.get("keepdims", True):
            raise _error(op, "keepdims=false is not lowered yet")
        if a.get("is_adaptive", False):
            raise _error(op, "is_adaptive=true is not lowered yet")
        if any(d != 1 for d in a.get("dilations") or []):
            raise _error(op, f"dilations {list(a['dilations'])} are not lowered yet (tpu.Pool2D has none)")
        window = {**_window(op, a), "pool_mode": mode}
        if not a.get("ceil_mode", False):
            return window
        overhang = _ceil_overhangs(op, window)
        grown = grown_end_pads(window["pads"], overhang)
        if mode == "Max" or not any(overhang) or not a.get("count_include_pad", False):
            return {**window, "pads": grown}
        if not any(window["pads"]):  # the overhang is the only padding: the pads it counts are none
            return {**window, "pads": grown, "count_include_pad": False}
        return {**window, "pads": grown, "ceil_overhang": overhang}

    return attrs


def _ceil_overhangs(op: Operation, window: dict[str, Any]) -> list[int]:
    """How far a ceil-mode pool's last window reaches past each end pad: the end pads grown by it
    make the floor rule count the same windows (TPU-MLIR's MaxPool and AvgPool shape inference do
    the same). Exact for a MaxPool: its last window starts inside the input or the begin pad, so it
    holds an input element, and pads never win. Exact for an AvgPool whose divisor counts the input
    elements only (count_include_pad false, or no explicit pads); one that counts explicit pads and
    has an overhang also carries it as ceil_overhang, the part of its end pads the divisor never
    counts."""
    return ceil_overhangs(_shape(op.operands[0])[2:], window["kernel_shape"], window["strides"], [1, 1],
                          window["pads"], _shape(op.results[0])[2:])


def _active(mode: str) -> Rule:
    return Rule("tpu.Active", lambda op, a: {"mode": mode})


def _sigmoid(op: Operation, a: AttrView) -> dict[str, Any]:
    if (a.get("scale", 1.0), a.get("bias", 0.0), a.get("log", False)) != (1.0, 0.0, False):
        raise _error(op, "only scale=1, bias=0, log=false is lowered yet")
    return {"mode": "SIGMOID"}


def _no_tensor_operands(*names: str) -> Callable[[Operation, AttrView], dict[str, Any]]:
    """Operands that must be `none` (their values folded into attributes before lowering)."""

    def attrs(op: Operation, a: AttrView) -> dict[str, Any]:
        for i, name in enumerate(SPECS[op.name].operands):
            if name.strip("?[]") in names and i < len(op.operands) and op.operands[i].owner.name != "top.None":  # type: ignore[union-attr]
                raise _error(op, f"operand '{name.strip('?[]')}' given as a tensor is not lowered (fold it first)")
        return {}

    return attrs


def _deconv(op: Operation, a: AttrView) -> dict[str, Any]:
    if len(a["kernel_shape"]) != 2:
        raise _error(op, f"only 2-D windows are lowered yet, kernel_shape is {list(a['kernel_shape'])}")
    with_bias = op.operands[2].owner.name != "top.None" if len(op.operands) > 2 else False  # type: ignore[union-attr]
    return {"with_bias": with_bias, "strides": list(a.get("strides") or [1, 1]), "pads": list(a.get("pads") or [0] * 4)}


def _layer_norm(op: Operation, a: AttrView) -> dict[str, Any]:
    x = _shape(op.operands[0])
    axis = a["axis"] % len(x)
    return {"normalized_shape": list(a.get("normalized_shape") or x[axis:])}


def _active_coeffs(mode: str, names: tuple[str, ...]) -> Rule:
    return Rule("tpu.Active", lambda op, a: {"mode": mode, "coeffs": [a[n] for n in names]},
                consumes=(*names, "round_mode"))


def batch_norm_scale_shift(op: Operation, top: TopModule) -> dict[str, np.ndarray]:
    """A BatchNorm's constant statistics folded to its per-channel scale and shift
    (geometry/batch_norm.py), float32, keyed by the names of the weights that hold them, in that
    order (`<bn>_scale`, `<bn>_bias`: the float lowering's tpu.Scale operands, and the INT8
    lowering's depthwise filter and bias before they are quantized)."""
    params = []
    for value in op.operands[1:]:
        kind = value.owner.name  # type: ignore[union-attr]
        if kind not in ("top.Weight", "top.None"):
            raise _error(op, "statistics or affine computed by other ops are not lowered (tpu.Scale takes weights)")
        params.append(top.weight_of(value.owner) if kind == "top.Weight" else None)  # type: ignore[arg-type]
    mean, var, gamma, beta = (params + [None, None])[:4]
    scale, shift = batch_norm_affine(mean, var, gamma, beta, AttrView(op.attributes, SPECS[op.name])["epsilon"])
    name = loc_name(op)
    return {f"{name}_scale": scale.astype(np.float32), f"{name}_bias": shift.astype(np.float32)}


def _batch_norm_operands(op: Operation, top: TopModule) -> list[SSAValue]:
    """tpu.Scale's operands for a BatchNorm with constant statistics: the input and the folded
    per-channel scale and shift, new weights `<bn>_scale` and `<bn>_bias`."""
    weights = [top.add_weight(name, data, before=op) for name, data in batch_norm_scale_shift(op, top).items()]
    return [op.operands[0], *(w.results[0] for w in weights)]


def _checked_priors(op: Operation, top: TopModule) -> list[SSAValue]:
    """DetectionOutput's operands as they are, once constant priors are checked: TPU-MLIR's decode
    asserts each prior's width and height (xmax - xmin, ymax - ymin, float) are positive, so a
    `top.Weight` priorbox with one that is not is refused, naming the prior. Priors computed at run
    time decode as given (docs/tpuc-opt.md, "--add-postprocess=type=ssd")."""
    priorbox = op.operands[2].owner
    if isinstance(priorbox, Operation) and priorbox.name == "top.Weight":
        corners = np.asarray(top.weight_of(priorbox), np.float32).reshape(2, -1, BOX)[0]
        width, height = corners[:, 2] - corners[:, 0], corners[:, 3] - corners[:, 1]
        bad = np.nonzero(~((width > 0) & (height > 0)))[0]  # NaN is not positive either
        if len(bad):
            k = int(bad[0])
            raise _error(op, f"prior {k} of '{loc_name(priorbox)}' has width {width[k]:g} and height "
                             f"{height[k]:g}: TPU-MLIR's decode asserts both are positive")
    return list(op.operands)


def _transpose(op: Operation, a: AttrView) -> dict[str, Any]:
    order = list(range(len(_shape(op.operands[0]))))
    d0, d1 = a["dim0"] % len(order), a["dim1"] % len(order)
    order[d0], order[d1] = order[d1], order[d0]
    return {"order": order}


def _reshape(op: Operation, a: AttrView) -> dict[str, Any]:
    if len(op.operands) > 1:
        raise _error(op, "a shape given by a tensor operand is not lowered (fold it first)")
    return {"shape": list(_shape(op.results[0]))}


LOWERINGS: dict[str, Rule] = {
    "top.Conv": Rule("tpu.Conv2D", _conv, consumes=("auto_pad", "do_winograd")),
    "top.MaxPool": Rule("tpu.Pool2D", _pool("Max"),
                        consumes=("auto_pad", "keepdims", "is_adaptive", "dilations", "ceil_mode")),
    "top.AvgPool": Rule("tpu.Pool2D", _pool("Avg"),
                        consumes=("auto_pad", "keepdims", "is_adaptive", "dilations", "ceil_mode")),
    "top.MatMul": Rule("tpu.MatMul"),
    **{name: Rule(f"tpu.{name[4:]}", consumes=("is_scalar",))
       for name in ("top.Add", "top.Sub", "top.Mul", "top.Div", "top.Max", "top.Min")},
    **{name: Rule(f"tpu.{name[4:]}", consumes=("is_scalar",))
       for name in ("top.AddConst", "top.SubConst", "top.MulConst", "top.MaxConst", "top.MinConst")},
    **{name: _active(mode) for name, mode in ACTIVE_MODES.items() if name != "top.Sigmoid"},
    "top.Sigmoid": Rule("tpu.Active", _sigmoid, consumes=("scale", "bias", "log", "round_mode")),
    "top.GELU": Rule("tpu.Active", lambda op, a: {"mode": GELU_MODES[a["approx_mode"]]},
                     consumes=("approx_mode", "round_mode")),
    "top.Tanh": Rule("tpu.Active", lambda op, a: {"mode": "TANH"}, consumes=("round_mode",)),
    **{name: _active_coeffs(mode, names) for name, (mode, names) in ACTIVE_COEFFS.items()},
    "top.Relu": Rule("tpu.Relu"),
    "top.LeakyRelu": Rule("tpu.LeakyRelu"),
    "top.Clip": Rule("tpu.Clip"),
    "top.Reciprocal": Rule("tpu.Reciprocal"),
    "top.Permute": Rule("tpu.Permute"),
    "top.Reshape": Rule("tpu.Reshape", _reshape, consumes=("shape", "flatten_start_dim")),
    "top.Flatten": Rule("tpu.Reshape", _reshape, consumes=("start_dim", "end_dim")),
    "top.Squeeze": Rule("tpu.Squeeze", consumes=("is_scalar",)),
    "top.Unsqueeze": Rule("tpu.Unsqueeze"),
    "top.Concat": Rule("tpu.Concat", lambda op, a: {"axis": a["axis"]}, consumes=("round_mode",)),
    "top.Softmax": Rule("tpu.Softmax"),
    "top.Upsample": Rule("tpu.Upsample"),
    "top.Depth2Space": Rule("tpu.Depth2Space"),
    "top.Transpose": Rule("tpu.Permute", _transpose, consumes=("dim0", "dim1")),
    "top.Cast": Rule("tpu.Cast"),
    "top.Pow": Rule("tpu.Pow"),
    "top.DivConst": Rule("tpu.DivConst", consumes=("is_scalar",)),
    "top.Deconv": Rule("tpu.Deconv", _deconv),
    "top.Scale": Rule("tpu.Scale"),
    "top.BatchNorm": Rule("tpu.Scale", consumes=("epsilon",), operands=_batch_norm_operands),
    "top.PRelu": Rule("tpu.PReluOp"),
    "top.LRN": Rule("tpu.LRN"),
    "top.Tile": Rule("tpu.Tile", _no_tensor_operands("tileT")),
    "top.Gather": Rule("tpu.Gather", consumes=("is_scalar",)),
    "top.GatherElements": Rule("tpu.GatherElements"),
    # uint8 pixels in and out: no float type to take the mode's, in every mode (INT8 too: no calibrated range)
    "top.Yuv2rgbFormula": Rule("tpu.Yuv2rgbFormula"),
    "top.Interp": Rule("tpu.Interp", _no_tensor_operands("target_shape")),
    "top.Reduce": Rule("tpu.Reduce", consumes=("is_scalar",)),
    "top.Arg": Rule("tpu.Arg"),
    "top.Where": Rule("tpu.Where"),
    "top.MaskedFill": Rule("tpu.MaskedFill"),
    "top.Compare": Rule("tpu.Compare"),
    "top.CompareConst": Rule("tpu.CompareConst", consumes=("is_scalar",)),
    "top.LayerNorm": Rule("tpu.LayerNorm", _layer_norm),
    "top.InstanceNorm": Rule("tpu.InstanceNorm"),
    "top.GroupNorm": Rule("tpu.GroupNorm"),
    "top.Pad": Rule("tpu.Pad", _no_tensor_operands("paddingsT")),
    "top.Slice": Rule("tpu.Slice", _no_tensor_operands("offsetT", "endsT", "stepsT")),
    **{f"top.{name}": Rule(f"tpu.{name}") for name in AS_TOP},
    # One of AS_TOP's, overriding its plain rule: constant priors are checked on the way.
    "top.DetectionOutput": Rule("tpu.DetectionOutput", operands=_checked_priors),
    "top.TopK": Rule("tpu.TopK", _no_tensor_operands("kT")),
    "top.CumSum": Rule("tpu.CumSum", _no_tensor_operands("dim")),
    "top.Expand": Rule("tpu.Expand", _no_tensor_operands("shapeT")),
}


@dataclass
class _Lowering:
    """State of one run: the module, its weights, the module's mode and the per-op modes."""

    top: TopModule
    mode: str
    qtable: Mapping[str, str]
    none: SSAValue | None = None
    converted: dict[tuple[str, str], SSAValue] = field(default_factory=dict)
    casts: dict[tuple[SSAValue, str], SSAValue] = field(default_factory=dict)
    # W8F16/W8BF16: the rule that lowers a constant-weight MatMul to tpu.A16MatMul (weight_only.py)
    a16: A16Lowering | None = None

    def mode_of(self, op: Operation) -> str:
        return self.qtable.get(loc_name(op), self.mode)

    def none_value(self, before: Operation) -> SSAValue:
        if self.none is None:
            op = create("top.None", [], [NoneType()], loc=UnknownLoc())
            Rewriter.insert_op(op, InsertPoint.before(before))
            self.none = op.results[0]
        return self.none

    def weight_in(self, value: SSAValue, mode: str, before: Operation) -> SSAValue:
        """The float weight `value` in `mode`'s type (converted once per weight and mode)."""
        owner = value.owner
        name = loc_name(owner)  # type: ignore[arg-type]
        if mode == "F32" or not _is_float(value):
            return value
        key = (name, mode)
        if key not in self.converted:
            data = np.asarray(self.top.weight_of(owner), dtype=np.float32)  # type: ignore[arg-type]
            self.converted[key] = self.new_weight_in(f"{name}_{mode.lower()}", data, mode, before)
        return self.converted[key]

    def new_weight_in(self, name: str, data: np.ndarray, mode: str, before: Operation) -> SSAValue:
        """A new weight `name` holding float32 `data` rounded to F16/BF16 `mode`'s type."""
        if mode == "F16":
            with np.errstate(over="ignore"):  # beyond f16 (a mask's finfo.min): inf, the modelled overflow
                stored = data.astype(np.float16)
        else:  # imported here, only for BF16: ml_dtypes 0.7 takes 0.5 s to import
            import ml_dtypes

            stored = data.astype(ml_dtypes.bfloat16).view(np.uint16)
        op = self.top.add_weight(name, stored, before=before)
        # BF16 bits are stored as uint16; the value's type says what they are.
        return Rewriter.replace_value_with_new_type(op.results[0], TensorType(FLOAT_MODES[mode](), data.shape))

    def value_in(self, value: SSAValue, mode: str) -> SSAValue:
        """The activation `value` in `mode`'s type: itself, or one tpu.Cast shared by every
        consumer in that mode, named `<producer>_<mode>` and placed right after the producer."""
        if not _is_float(value) or value.type.element_type == FLOAT_MODES[mode]():  # type: ignore[attr-defined]
            return value
        key = (value, mode)
        if key not in self.casts:
            producer = value.owner
            name = result_names(producer)[value.index]  # type: ignore[arg-type, attr-defined]
            cast = _cast(value, FLOAT_MODES[mode](), f"{name}_{mode.lower()}")
            Rewriter.insert_op(cast, InsertPoint.after(producer))  # type: ignore[arg-type]
            self.casts[key] = cast.results[0]
        return self.casts[key]


def _is_float(value: SSAValue) -> bool:
    """A float tensor; a calibrated one (--import-calibration-table) counts: its values are f32."""
    t = value.type
    return isinstance(t, TensorType) and isinstance(t.element_type, (*FLOAT_TYPES, CalibratedQuantizedType))


def _retyped(value: SSAValue, mode: str) -> Attribute:
    """The type of result `value` in `mode`: float tensors take the mode's type, others keep theirs."""
    return TensorType(FLOAT_MODES[mode](), _shape(value)) if _is_float(value) else value.type


def _lower_op(op: Operation, state: _Lowering) -> None:
    if state.a16 is not None and op.name in A16_LOWERINGS and loc_name(op) not in state.qtable and state.a16(op, state):
        return
    rule = LOWERINGS.get(op.name)
    if rule is None:
        raise _error(op, f"no Tpu lowering for {op.name} yet (docs/lowering.md lists what lowers)")
    mode = state.mode_of(op)
    attrs = tpu_attrs(op, rule)
    operands = []
    for i, value in enumerate(rule.operands(op, state.top) if rule.operands else op.operands):
        kind = value.owner.name  # type: ignore[union-attr]
        if kind == "top.None":
            operands.append(value)
        elif kind == "top.Weight":
            operands.append(state.weight_in(value, "F32" if (rule.tpu, i) in F32_OPERANDS else mode, op))
        else:
            operands.append(state.value_in(value, "F32" if (rule.tpu, i) in F32_OPERANDS else mode))
    results = [_retyped(r, "F32" if (rule.tpu, i) in F32_RESULTS else mode) for i, r in enumerate(op.results)]
    Rewriter.replace_op(op, create(rule.tpu, complete_operands(rule.tpu, operands, state, op), results,
                                   attrs=attrs, loc=op.location))


def complete_operands(tpu: str, operands: list[SSAValue], state: _Lowering, before: Operation) -> list[SSAValue]:
    """`operands` with `none` for the optional operands the Tpu op adds (buffer, table, ...)."""
    spec = SPECS[tpu]
    if not any(o.endswith("*") for o in spec.operands):
        required = [o for o in spec.operands if not o.startswith("[")]
        while len(operands) < len(required):
            operands.append(state.none_value(before))
    return operands


def tpu_attrs(op: Operation, rule: Rule) -> dict[str, Attribute]:
    """The attributes of the Tpu op `rule` makes of `op` (the rule's, then the Top op's that the
    Tpu op declares), as attributes; an attribute with no counterpart is an error naming it."""
    tpu_spec = SPECS[rule.tpu]
    top_spec = SPECS[op.name]
    attrs: dict[str, Any] = dict(rule.attrs(op, AttrView(op.attributes, top_spec)))
    for key, attr in op.attributes.items():
        if key in attrs or key in rule.consumes:
            continue
        if key not in tpu_spec.attrs:
            raise _error(op, f"attribute '{key}' has no counterpart on {rule.tpu}")
        attrs[key] = from_attr(attr)
    # Where TPU-MLIR's Tpu default differs from the Top default (Arg's select_last_index), the Top
    # meaning is written out: an absent attribute must mean the same at both levels.
    for key, spec in tpu_spec.attrs.items():
        top_default = top_spec.attrs[key].default if key in top_spec.attrs else None
        if key not in attrs and top_default not in (None, REQUIRED) and top_default != spec.default:
            attrs[key] = top_default
    for key, value in list(attrs.items()):
        try:
            attrs[key] = to_attr(tpu_spec.attrs[key].kind, value)
        except (ValueError, TypeError) as e:
            raise _error(op, f"attribute '{key}' = {value!r} cannot be lowered: {e}") from None
    return attrs


def _cast(value: SSAValue, element_type: Attribute, name: str) -> Operation:
    return create("tpu.Cast", [value], [TensorType(element_type, _shape(value))], loc=name)


def lower_float(top: TopModule, mode: str, qtable: Mapping[str, str], a16: A16Lowering | None = None) -> None:
    """Lower @main in `mode`, ops named in `qtable` in theirs; outputs come back as f32.
    `a16` (W8F16/W8BF16): the rule by which the MatMuls of a constant weight not named in the
    qtable become tpu.A16MatMul (weight_only.py)."""
    main = top.main_func()
    state = _Lowering(top, mode, qtable, a16=a16)
    for op in list(main.body.block.ops):
        if op.name not in KEPT and not isinstance(op, ReturnOp):
            _lower_op(op, state)
    cast_outputs_to_f32(main, float_suffix)
    main.update_function_type()


_SUFFIX = {Float16Type: "f16", BFloat16Type: "bf16"}


# The Top ops an F16 model (F16, W8F16, W4F16: TPU-MLIR's isF16Modes) runs in F32 unless
# ignore_f16_overflow, as TPU-MLIR's ConvertTopToTpu::init_qtable does: the chip's average pool
# sums its window in f16 before dividing, a sum that can pass 65504 while the inputs and the mean
# are in range. (tpudsl's F16 pool rounds the exact mean once and cannot overflow that way; the
# default is TPU-MLIR's so that its command lines give its op types.) BF16 has float32's exponent
# range: TPU-MLIR keeps these ops in BF16.
F16_OVERFLOW_OPS = ("top.AvgPool",)


def f16_overflow_f32(top: TopModule) -> dict[str, str]:
    """The qtable lines `NAME F32` of the ops F16 keeps in F32 (F16_OVERFLOW_OPS)."""
    return {loc_name(o): "F32" for o in top.main_func().walk() if o.name in F16_OVERFLOW_OPS}


def float_suffix(value: SSAValue) -> str | None:
    """"f16"/"bf16" for an f16/bf16 tensor, None for any other."""
    return _SUFFIX.get(type(value.type.element_type)) if _is_float(value) else None  # type: ignore[attr-defined]


def cast_outputs_to_f32(main: FuncOp, suffix_of: Callable[[SSAValue], str | None]) -> None:
    """Cast every returned value with a suffix back to f32: the Cast carries the Top output name,
    the op that computed the value gets the derived name `<name>_<suffix>`."""
    ret = main.body.block.last_op
    assert isinstance(ret, ReturnOp)
    for i, value in enumerate(ret.operands):
        suffix = suffix_of(value)
        if suffix is None:
            continue
        producer = value.owner
        name = result_names(producer)[value.index]  # type: ignore[arg-type, attr-defined]
        cast = _cast(value, Float32Type(), name)
        Rewriter.insert_op(cast, InsertPoint.before(ret))
        producer.location = _renamed(producer, value.index, f"{name}_{suffix}")  # type: ignore[arg-type, attr-defined]
        ret.operands[i] = cast.results[0]


def _renamed(op: Operation, index: int, name: str) -> Attribute:
    """`op`'s location with result `index` named `name`; an op with several results gets a fused
    loc naming each, so the others keep their names (TopK's indices, MaxPoolWithMask's mask)."""
    names = result_names(op)
    names[index] = name
    if len(names) == 1:
        return NameLoc(StringAttr(name), NoneAttr())
    return FusedLoc(ArrayAttr([NameLoc(StringAttr(n), NoneAttr()) for n in names]), NoneAttr())


@dataclass(frozen=True)
class ConvertTopToTpuPass(ModulePass):
    """Lower every Top op to the Tpu dialect in module.mode (set by --processor-assign)."""

    name = "convert-top-to-tpu"

    qtable: str = ""
    asymmetric: bool = False
    doWinograd: bool = False  # noqa: N815 (TPU-MLIR's option names)
    ignore_f16_overflow: bool = False  # true: the ops of F16_OVERFLOW_OPS run in F16 too
    weightFileName: str = ""  # noqa: N815
    q_group_size: int = 0
    q_symmetric: bool = False  # weight-only quantization's symmetric weights (with q_group_size)
    matmul_perchannel: bool = False
    gelu_mode: str = "normal"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # Without a weight file only weight-free modules lower: a weight's data is read when converted.
        top = top_module_of(op) or TopModule(op)
        mode_attr = op.attributes.get("module.mode")
        if not isinstance(mode_attr, StringAttr):
            raise TpudslError("convert-top-to-tpu: module.mode is not set; run --processor-assign first")
        mode = mode_attr.data
        for option, value, default in (("doWinograd", self.doWinograd, False), ("gelu_mode", self.gelu_mode, "normal")):
            if value != default:
                raise TpudslError(f"convert-top-to-tpu: {option}={value} is not supported yet")
        if (self.q_group_size or self.q_symmetric) and mode not in WEIGHT_ONLY_MODES:
            raise TpudslError(f"convert-top-to-tpu: q_group_size={self.q_group_size} q_symmetric="
                              f"{str(self.q_symmetric).lower()} need a weight-only mode ({', '.join(WEIGHT_ONLY_MODES)}), not {mode}")
        if self.q_group_size < 0 or (self.q_symmetric and not self.q_group_size):
            raise TpudslError(f"convert-top-to-tpu: q_group_size={self.q_group_size} q_symmetric="
                              f"{str(self.q_symmetric).lower()}: the group size must be >= 0, and q_symmetric "
                              "needs groups (q_group_size > 0; per-channel weights are symmetric already)")
        names = {loc_name(o) for o in top.main_func().walk() if o.name not in KEPT}
        qtable = read_qtable(self.qtable, names) if self.qtable else {}
        if not self.ignore_f16_overflow and WEIGHT_ONLY_MODES.get(mode, mode) == "F16":
            qtable = {**f16_overflow_f32(top), **qtable}  # the qtable's own lines win, as in TPU-MLIR
        # attention-mask fills (finfo.min) stay F32 in every mode that cannot hold them; the qtable's lines win
        qtable = {**{name: "F32" for name in mask_ops_kept_f32(top, WEIGHT_ONLY_MODES.get(mode, mode))}, **qtable}
        for name, op_mode in {"the module": mode, **qtable}.items():
            if op_mode not in FLOAT_MODES and not (op_mode == "INT8" and mode == "INT8") and \
                    not (op_mode in WEIGHT_ONLY_MODES and name == "the module"):
                raise TpudslError(f"convert-top-to-tpu: mode {op_mode} of {name} is not lowered (F32, F16 and "
                                  "BF16 are; INT8 when the module's mode is INT8; W8F16 and W8BF16 as the "
                                  "module's mode)")
        for option, value in (("matmul_perchannel", self.matmul_perchannel), ("asymmetric", self.asymmetric)):
            if value and mode != "INT8":
                raise TpudslError(f"convert-top-to-tpu: {option}=true needs mode INT8")
        if mode == "INT8":
            # Imported here: the INT8 lowering builds on this module's float lowering (its fallback).
            from tpudsl.lowering.top_to_tpu_int8 import lower_int8

            lower_int8(top, qtable, self.matmul_perchannel, self.asymmetric)
            if self.asymmetric:
                op.attributes["module.asymmetric"] = to_attr("bool", True)
        elif mode in WEIGHT_ONLY_MODES:
            a16 = A16Lowering(self.q_group_size, self.q_symmetric, WEIGHT_BITS[mode])
            lower_float(top, WEIGHT_ONLY_MODES[mode], qtable, a16)
        else:
            lower_float(top, mode, qtable)
        op.attributes["module.state"] = StringAttr("TPU_LOWERED")
        if self.weightFileName:
            op.attributes["module.weight_file"] = StringAttr(self.weightFileName)

"""Attribute kinds of the Top/Tpu dialects and their conversion to and from Python values.

TPU-MLIR stores every op attribute in the discardable attribute dictionary (`{...}` in generic
form) with a small set of builtin attribute shapes. We name those shapes once here so that op
tables, the frontend, rewrites and the interpreter all speak the same language:

  kind     builtin attribute                     printed as
  "i64"    IntegerAttr(v, i64)                   group = 1 : i64
  "f64"    FloatAttr(v, f64)                     relu_limit = -1.000000e+00 : f64
  "bool"   IntegerAttr(v, i1)                    do_relu = false
  "str"    StringAttr                            mode = "nearest"
  "i64[]"  ArrayAttr of IntegerAttr(i64)         kernel_shape = [3, 3]
  "f64[]"  ArrayAttr of FloatAttr(f64)           mean = [0.000000e+00, ...]
  "tpu.lg" LayerGroupAttr (lg.py)                ginfo = #tpu.lg<out_addr = 0, ...>
  "any"    anything (checked by the op's own verifier, if at all)
  enum     `#tpu<round_mode HalfUp>`: a kind named after the enum ("tpu.round_mode"), one of
           ENUMS; Python value "HalfUp". TPU-MLIR prints its enums in MLIR's opaque dialect
           form, so they stay opaque attributes here (see `enum_class`).
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntAttr,
    IntegerType,
    StringAttr,
    UnregisteredAttr,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute

from tpudsl.dialects.lg import LayerGroupAttr

KINDS = ("i64", "f64", "bool", "str", "i64[]", "f64[]", "tpu.lg", "any")

# TPU-MLIR's Tpu enums (TpuOps.td), by the name they print under: `#tpu<rq_mode X>` is "tpu.rq_mode".
ROUND_MODES = ("HalfAwayFromZero", "HalfUp", "HalfDown", "HalfToEven", "HalfToOdd", "HalfTowardsZero",
               "TowardsZero", "Up", "Down")
ENUMS: dict[str, tuple[str, ...]] = {
    "tpu.rq_mode": ("TFLite_LShift", "TFLite", "MultiplierShift", "OnlyShift", "QDM", "OnlyScale"),
    "tpu.dq_mode": ("Normal", "TFLite"),
    "tpu.round_mode": ROUND_MODES,
    "tpu.pool_mode": ("Avg", "Max"),
    "tpu.Pad_Mode": ("constant", "reflect", "symmetric", "edge", "wrap"),  # wrap: ours (ONNX opset 19), not TpuOps.td's
    "tpu.run_mode": ("TPU_STATIC", "TPU_DYNAMIC", "CPU", "SWITCH", "MERGE", "LOOP", "UNKNOW"),
    "tpu.active_mode": (
        "TANH", "SIGMOID", "RELU", "EXP", "ELU", "SQRT", "SQUARE", "RSQRT", "ABSVAL", "LN", "ROUND", "CEIL",
        "FLOOR", "SIN", "COS", "IS_FINITE", "MISH", "SWISH", "HSWISH", "SILU", "ARCSIN", "ARCCOS", "ARCSINH",
        "ARCCOSH", "ARCTANH", "SINH", "COSH", "TAN", "SIGN", "GELU", "ERF", "HSIGMOID", "LOG_SIGMOID",
        "SOFT_PLUS", "SOFT_SIGN", "LOG2", "TGELU", "QGELU",
    ),
    "tpu.mode": ("nearest", "linear"),
    "tpu.coord_mode": ("align_corners", "half_pixel", "pytorch_half_pixel", "asymmetric"),
}
_ENUM_CLASSES: dict[str, type[UnregisteredAttr]] = {}


def enum_class(kind: str) -> type[UnregisteredAttr]:
    """The one attribute class of enum `kind`: make_context registers it under its name, so the
    parser builds the same class that `to_attr` builds, and parsed and built values compare equal."""
    cls = _ENUM_CLASSES.get(kind)
    if cls is None:
        cls = _ENUM_CLASSES[kind] = UnregisteredAttr.with_name_and_type(kind, False)
    return cls


def _enum_value(attr: Attribute) -> str | None:
    if isinstance(attr, UnregisteredAttr) and attr.attr_name.data in ENUMS and attr.is_opaque.data:
        return attr.value.data.strip()
    return None


def to_attr(kind: str, value: Any) -> Attribute:
    """Build the builtin attribute of `kind` holding the Python `value`."""
    if kind == "i64":
        return IntegerAttr(int(value), i64)
    if kind == "f64":
        return FloatAttr(float(value), f64)
    if kind == "bool":
        return IntegerAttr(int(bool(value)), i1)
    if kind == "str":
        return StringAttr(str(value))
    if kind == "i64[]":
        return ArrayAttr([IntegerAttr(int(v), i64) for v in value])
    if kind == "f64[]":
        return ArrayAttr([FloatAttr(float(v), f64) for v in value])
    if kind in ENUMS:
        if value not in ENUMS[kind]:
            raise ValueError(f"{kind} has no case {value!r}; cases: {', '.join(ENUMS[kind])}")
        return enum_class(kind)(StringAttr(kind), IntAttr(0), IntAttr(1), StringAttr(f" {value}"))
    if kind == "tpu.lg":
        return value if isinstance(value, LayerGroupAttr) else LayerGroupAttr.make(**value)
    if kind == "any":
        if isinstance(value, Attribute):
            return value
        raise TypeError(f"attribute of kind 'any' needs an Attribute, got {value!r}")
    raise ValueError(f"unknown attribute kind {kind!r}")


def from_attr(attr: Attribute) -> Any:
    """The Python value of a builtin attribute (bool for i1, int, float, str, list)."""
    if isinstance(attr, IntegerAttr):
        if isinstance(attr.type, IntegerType) and attr.type.width.data == 1:
            return bool(attr.value.data)
        return attr.value.data
    if isinstance(attr, FloatAttr):
        return attr.value.data
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, ArrayAttr):
        return [from_attr(a) for a in attr.data]
    if isinstance(attr, DenseArrayBase):
        return list(attr.get_values())
    enum = _enum_value(attr)
    return attr if enum is None else enum


def _is_int(attr: Attribute, width: int | None = None) -> bool:
    if not isinstance(attr, IntegerAttr) or not isinstance(attr.type, IntegerType):
        return False
    return width is None or attr.type.width.data == width


def matches(kind: str, attr: Attribute) -> bool:
    """True when `attr` has the builtin shape that `kind` names."""
    if kind == "i64":
        return _is_int(attr) and not _is_int(attr, 1)
    if kind == "f64":
        return isinstance(attr, FloatAttr)
    if kind == "bool":
        return _is_int(attr, 1)
    if kind == "str":
        return isinstance(attr, StringAttr)
    if kind == "i64[]":
        return isinstance(attr, ArrayAttr) and all(_is_int(a) for a in attr.data)
    if kind == "f64[]":
        return isinstance(attr, ArrayAttr) and all(
            isinstance(a, FloatAttr | IntegerAttr) for a in attr.data
        )
    if kind in ENUMS:
        return _enum_value(attr) in ENUMS[kind] and attr.attr_name.data == kind  # type: ignore[attr-defined]
    if kind == "tpu.lg":
        return isinstance(attr, LayerGroupAttr)
    return kind == "any"

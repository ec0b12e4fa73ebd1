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
  "any"    anything (checked by the op's own verifier, if at all)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    f64,
    i1,
    i64,
)
from xdsl.ir import Attribute

KINDS = ("i64", "f64", "bool", "str", "i64[]", "f64[]", "any")


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
    return attr


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
    return kind == "any"


def i64_list(values: Sequence[int]) -> ArrayAttr:
    return to_attr("i64[]", values)  # type: ignore[return-value]

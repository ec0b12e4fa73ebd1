"""Builtin attributes and types as upstream MLIR prints them (AsmPrinter), cached.

Differences from xDSL's printer that matter for TPU-MLIR files: i64 integers and f64 floats
inside arrays elide their type (`[3, 3]`), floats use MLIR's float rule (floats.py), strings
escape non-printable bytes as `\\XX`, unregistered dialect attributes print their raw body.
Anything without a rule here falls back to xDSL's printer.

Texts are cached by object identity (parsed modules share attribute objects), with a value-keyed
second level for equal attributes built separately.
"""

from __future__ import annotations

import io
import re
import struct

from xdsl.dialects.builtin import (
    ArrayAttr,
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    NoneAttr,
    NoneType,
    Signedness,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    UnrankedTensorType,
    UnregisteredAttr,
)
from xdsl.ir import Attribute
from xdsl.printer import Printer

from tpudsl.dialects.lg import LayerGroupAttr
from tpudsl.dialects.quant import QUANT_TYPES
from tpudsl.ir.floats import format_float

_BARE_ID = re.compile(r"[A-Za-z_][\w$.]*")
_PLAIN = re.compile(r"[ !#-\[\]-~]*")  # printable ASCII except '"' and '\\'
_PRINTABLE = {c: chr(c) for c in range(0x20, 0x7F)}
_FLOAT_KINDS = {Float64Type: "f64", Float32Type: "f32", Float16Type: "f16", BFloat16Type: "bf16"}
_CACHE_LIMIT = 200_000
_HEX_ELEMENTS = 100  # above this many (non-splat) elements, MLIR prints dense<"0x...">

# id(attr) -> (attr, text); the attr is kept so its id cannot be reused while cached.
_by_id: dict[int, tuple[Attribute, str]] = {}
_by_value: dict[Attribute, str] = {}


def escape_string(s: str) -> str:
    """A string literal as MLIR's printEscapedString writes it: `"x\\22y\\0A"`."""
    if _PLAIN.fullmatch(s):
        return f'"{s}"'
    out = []
    for byte in s.encode("utf-8"):
        if byte == 0x5C:
            out.append("\\\\")
        elif byte != 0x22 and byte in _PRINTABLE:
            out.append(_PRINTABLE[byte])
        else:
            out.append(f"\\{byte:02X}")
    return '"' + "".join(out) + '"'


def key_text(name: str) -> str:
    """An attribute-dictionary key: bare when it is an identifier, else quoted."""
    return name if _BARE_ID.fullmatch(name) else escape_string(name)


def attr_text(attr: Attribute) -> str:
    """The attribute (or type) as MLIR prints it where its type may not be elided."""
    hit = _by_id.get(id(attr))
    if hit is not None and hit[0] is attr:
        return hit[1]
    text = _by_value.get(attr)
    if text is None:
        text = _render(attr)
        if len(_by_value) > _CACHE_LIMIT:
            _by_value.clear()
        _by_value[attr] = text
    if len(_by_id) > _CACHE_LIMIT:
        _by_id.clear()
    _by_id[id(attr)] = (attr, text)
    return text


def elided_text(attr: Attribute) -> str:
    """The attribute inside an array: i64 integers and f64 floats drop their type."""
    text = attr_text(attr)
    if isinstance(attr, IntegerAttr | FloatAttr) and text.endswith((" : i64", " : f64")):
        return text[:-6]
    return text


def dict_body(items) -> str:
    """`a = 1 : i64, b` for (name, attr) pairs, sorted by name as MLIR's DictionaryAttr is."""
    parts = []
    for name, value in sorted(items, key=lambda kv: kv[0].encode()):
        if isinstance(value, UnitAttr):
            parts.append(key_text(name))
        else:
            parts.append(f"{key_text(name)} = {attr_text(value)}")
    return ", ".join(parts)


def type_list(types) -> str:
    return ", ".join([attr_text(t) for t in types])


def result_types_text(types) -> str:
    """Results of a function type: one type bare, otherwise parenthesised."""
    if len(types) == 1 and not isinstance(types[0], FunctionType):
        return attr_text(types[0])
    return f"({type_list(types)})"


def _render(attr: Attribute) -> str:
    if isinstance(attr, IntegerAttr):
        return _integer(attr)
    if isinstance(attr, FloatAttr):
        kind = _FLOAT_KINDS.get(type(attr.type))
        if kind is None:
            return _fallback(attr)
        return f"{format_float(attr.value.data, kind)} : {attr_text(attr.type)}"
    if isinstance(attr, StringAttr):
        return escape_string(attr.data)
    if isinstance(attr, ArrayAttr):
        return "[" + ", ".join([elided_text(a) for a in attr.data]) + "]"
    if isinstance(attr, DictionaryAttr):
        return "{" + dict_body(attr.data.items()) + "}"
    if isinstance(attr, UnitAttr):
        return "unit"
    if isinstance(attr, TensorType):
        return _tensor(attr)
    if isinstance(attr, UnrankedTensorType):
        return f"tensor<*x{attr_text(attr.element_type)}>"
    if isinstance(attr, IntegerType):
        prefix = {Signedness.SIGNLESS: "i", Signedness.SIGNED: "si", Signedness.UNSIGNED: "ui"}
        return f"{prefix[attr.signedness.data]}{attr.width.data}"
    if isinstance(attr, IndexType):
        return "index"
    if isinstance(attr, NoneType):
        return "none"
    if isinstance(attr, FunctionType):
        return f"({type_list(attr.inputs.data)}) -> {result_types_text(attr.outputs.data)}"
    if isinstance(attr, DenseArrayBase):
        return _dense_array(attr)
    if isinstance(attr, DenseIntOrFPElementsAttr):
        return _dense_elements(attr)
    if isinstance(attr, SymbolRefAttr):
        names = [attr.root_reference, *attr.nested_references.data]
        return "::".join("@" + key_text(n.data) for n in names)
    if isinstance(attr, QUANT_TYPES):  # the quant dialect prints its doubles like FloatAttr's f64
        return f"!{attr.name}<{attr.body(_f64)}>"
    if isinstance(attr, LayerGroupAttr):
        return f"#tpu.lg<{attr.body()}>"
    if isinstance(attr, UnregisteredAttr):
        return _unregistered(attr)
    return _fallback(attr)


def _integer(attr: IntegerAttr) -> str:
    value = attr.value.data
    t = attr.type
    if isinstance(t, IntegerType) and t.width.data == 1 and t.signedness.data == Signedness.SIGNLESS:
        return "true" if value else "false"
    return f"{value} : {attr_text(t)}"


def _tensor(t: TensorType) -> str:
    dims = "".join(("?" if d < 0 else str(d)) + "x" for d in t.get_shape())
    encoding = "" if isinstance(t.encoding, NoneAttr) else ", " + attr_text(t.encoding)
    return f"tensor<{dims}{attr_text(t.element_type)}{encoding}>"


def _element(value, element_type: Attribute) -> str:
    kind = _FLOAT_KINDS.get(type(element_type))
    if kind is not None:
        return format_float(value, kind)
    if isinstance(element_type, IntegerType) and element_type.width.data == 1:
        return "true" if value else "false"
    return str(value)


def _dense_array(attr: DenseArrayBase) -> str:
    elem = attr.elt_type
    values = attr.get_values()
    body = ", ".join(_element(v, elem) for v in values)
    return f"array<{attr_text(elem)}{': ' + body if values else ''}>"


def _dense_elements(attr: DenseIntOrFPElementsAttr) -> str:
    elem = attr.get_element_type()
    if not isinstance(elem, IntegerType | IndexType) and type(elem) not in _FLOAT_KINDS:
        return _fallback(attr)
    values = attr.get_values()
    shape = attr.get_shape()
    bits = [struct.pack("<d", v) for v in values] if type(elem) in _FLOAT_KINDS else list(values)
    if values and all(b == bits[0] for b in bits):  # MLIR stores bitwise-equal elements as a splat
        body = _element(values[0], elem)
    elif not values:
        body = ""
    elif len(values) > _HEX_ELEMENTS and not _is_bool(elem):
        body = f'"0x{attr.data.data.hex().upper()}"'  # MLIR writes large constants as raw bytes
    else:
        body = _nested(list(values), list(shape), elem)
    return f"dense<{body}> : {attr_text(attr.type)}"


def _is_bool(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 1


def _nested(values: list, shape: list[int], elem: Attribute) -> str:
    if not shape:
        return _element(values[0], elem)
    if len(shape) == 1:
        return "[" + ", ".join(_element(v, elem) for v in values) + "]"
    step = len(values) // shape[0] if shape[0] else 0
    return "[" + ", ".join(_nested(values[i * step:(i + 1) * step], shape[1:], elem) for i in range(shape[0])) + "]"


def _unregistered(attr: UnregisteredAttr) -> str:
    sigil = "!" if attr.is_type.data else "#"
    name, body = attr.attr_name.data, attr.value.data
    if attr.is_opaque.data:  # `#tpu<rq_mode X>`: dialect, then the body in angle brackets
        dialect, _, rest = name.partition(".")
        return f"{sigil}{dialect}<{rest}{body}>"
    return f"{sigil}{name}<{body}>" if body else f"{sigil}{name}"


def _f64(value: float) -> str:
    return format_float(value, "f64")


def _fallback(attr: Attribute) -> str:
    out = io.StringIO()
    Printer(stream=out).print_attribute(attr)
    return out.getvalue()

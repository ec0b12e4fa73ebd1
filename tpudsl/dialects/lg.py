"""`#tpu.lg<...>`: the layer-group info of an op inside a `tpu.Group` (TpuOps.td's Tpu_LayerGroupAttr).

TPU-MLIR declares it with `struct(params)` and every parameter required, so it prints every field,
in this order, `name = value`: integers bare (`out_addr = 0`), booleans `true`/`false`, lists of
integers in brackets (`n_idx = [0, 2]`):

    #tpu.lg<out_addr = 0, out_size = 144, buffer_addr = 0, buffer_size = 0, eu_align = true,
            can_merge = false, in_hslice_offset = [], n_idx = [0], n_slice = [1], c_idx = [0],
            c_slice = [4], d_idx = [0], d_slice = [1], h_idx = [0, 4], h_slice = [4, 4],
            w_idx = [0], w_slice = [8], id = 1, stage = 0, slice_idx = 0, group_type = 0>

We print exactly that (one line). Reading, fields may come in any order (as MLIR's struct directive
accepts them) and a field left out takes its default (FIELDS): an older TPU-MLIR's files lack
can_merge, in_hslice_offset and slice_idx; those files print back with them. An unknown field, a
field given twice or a value of the wrong type is an error naming the field; `verify` checks that
each *_idx list has its *_slice list's length, slices are at least 1, addresses and sizes are not
negative. What --layer-group writes (backend/layer_group/region.py): out_addr/out_size the tile
(a Load's first buffer), buffer_addr/buffer_size a Load's second buffer (size 0: none), the tile's
N/C/D/H/W parts over the slices, id its place in the region; codegen rebuilds every field from the
plan and any difference is an error, so a field we do not use must hold the value we write.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

from xdsl.dialects.builtin import ArrayAttr, IntAttr
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

INT, BOOL, INTS = "an integer", "a boolean", "a list of integers"
# (name, type, default) in TpuOps.td's order. The lists' default [] means "not given".
FIELDS: tuple[tuple[str, str, Any], ...] = (
    ("out_addr", INT, 0), ("out_size", INT, 0), ("buffer_addr", INT, 0), ("buffer_size", INT, 0),
    ("eu_align", BOOL, True), ("can_merge", BOOL, False), ("in_hslice_offset", INTS, []),
    ("n_idx", INTS, []), ("n_slice", INTS, []), ("c_idx", INTS, []), ("c_slice", INTS, []),
    ("d_idx", INTS, []), ("d_slice", INTS, []), ("h_idx", INTS, []), ("h_slice", INTS, []),
    ("w_idx", INTS, []), ("w_slice", INTS, []),
    ("id", INT, 0), ("stage", INT, 0), ("slice_idx", INT, 0), ("group_type", INT, 0),
)
_TYPE = {name: kind for name, kind, _ in FIELDS}
_NOT_NEGATIVE = ("out_addr", "out_size", "buffer_addr", "buffer_size", "id", "stage", "slice_idx", "group_type")
_I64 = (-(2**63), 2**63 - 1)


def _param(kind: str, value: Any) -> Attribute:
    if kind == INTS:
        return ArrayAttr([IntAttr(int(v)) for v in value])
    return IntAttr(int(value))


@irdl_attr_definition
class LayerGroupAttr(ParametrizedAttribute):
    """One op's (or Load's, Store's) place in its group's local memory and slices."""

    name = "tpu.lg"

    out_addr: IntAttr
    out_size: IntAttr
    buffer_addr: IntAttr
    buffer_size: IntAttr
    eu_align: IntAttr
    can_merge: IntAttr
    in_hslice_offset: ArrayAttr[IntAttr]
    n_idx: ArrayAttr[IntAttr]
    n_slice: ArrayAttr[IntAttr]
    c_idx: ArrayAttr[IntAttr]
    c_slice: ArrayAttr[IntAttr]
    d_idx: ArrayAttr[IntAttr]
    d_slice: ArrayAttr[IntAttr]
    h_idx: ArrayAttr[IntAttr]
    h_slice: ArrayAttr[IntAttr]
    w_idx: ArrayAttr[IntAttr]
    w_slice: ArrayAttr[IntAttr]
    id: IntAttr
    stage: IntAttr
    slice_idx: IntAttr
    group_type: IntAttr

    @staticmethod
    def make(**values: Any) -> LayerGroupAttr:
        """`make(out_addr=0, n_idx=[0], ...)`; fields not given take their defaults."""
        unknown = [k for k in values if k not in _TYPE]
        if unknown:
            raise VerifyException(f"#tpu.lg has no field '{unknown[0]}' (fields: {', '.join(_TYPE)})")
        return LayerGroupAttr(*(_param(kind, values.get(name, default)) for name, kind, default in FIELDS))

    def values(self) -> dict[str, Any]:
        """Every field's Python value (int, bool, list of int), in TpuOps.td's order."""
        return {name: self.get(name) for name, _, _ in FIELDS}

    def get(self, name: str) -> Any:
        param, kind = getattr(self, name), _TYPE[name]
        if kind == INTS:
            return [v.data for v in param.data]
        return bool(param.data) if kind == BOOL else param.data

    def verify(self) -> None:
        for name, kind, _ in FIELDS:
            value = self.get(name)
            for v in value if kind == INTS else [getattr(self, name).data]:
                if not _I64[0] <= v <= _I64[1] or (kind == BOOL and v not in (0, 1)):
                    raise VerifyException(f"#tpu.lg field '{name}' = {v} is not {kind}")
            if name in _NOT_NEGATIVE and value < 0:
                raise VerifyException(f"#tpu.lg field '{name}' = {value} must not be negative")
        for axis in "ncdhw":
            idx, size = self.get(f"{axis}_idx"), self.get(f"{axis}_slice")
            if len(idx) != len(size):
                raise VerifyException(f"#tpu.lg {axis}_idx has {len(idx)} entries, {axis}_slice {len(size)}")
            if any(i < 0 for i in idx) or any(s < 1 for s in size):
                raise VerifyException(f"#tpu.lg {axis}_idx must not be negative and {axis}_slice at least 1")

    def body(self) -> str:
        """The text between the angle brackets, as TPU-MLIR prints it."""
        return ", ".join(f"{name} = {_text(self.get(name))}" for name, _, _ in FIELDS)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.body()}>")

    @classmethod
    def parse_canonical(cls, text: str, pos: int) -> tuple[LayerGroupAttr, int] | None:
        """The attribute whose `<...>` starts at `text[pos]`, read without xDSL's parser, and where it
        ends: only for `body()`'s exact text (the MLIR parser's fast path, docs/tpuc-opt.md); None for
        any other text, which `parse_parameters` reads (and reports errors in)."""
        fast = _CANONICAL.match(text, pos)
        if fast is None:
            return None
        return cls.new(_canonical_params(fast)), fast.end()

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        fast = _CANONICAL.match(parser.lexer.input.content, parser.pos)
        if fast is not None:  # what we print: read in one match, not token by token (docs/testing.md)
            parser._resume_from(fast.end())  # noqa: SLF001 - xDSL's parser has no public seek
            return _canonical_params(fast)
        parser.parse_punctuation("<")
        got: dict[str, Any] = {}
        if parser.parse_optional_punctuation(">") is None:
            while True:
                at = parser.pos
                name = parser.parse_identifier(" (a #tpu.lg field name)")
                if name not in _TYPE:
                    parser.raise_error(f"#tpu.lg has no field '{name}' (fields: {', '.join(_TYPE)})", at)
                if name in got:
                    parser.raise_error(f"#tpu.lg field '{name}' is given twice", at)
                parser.parse_punctuation("=")
                got[name] = _read(parser, name)
                if parser.parse_optional_punctuation(">") is not None:
                    break
                parser.parse_punctuation(",", " or '>' in #tpu.lg")
        return [_param(kind, got.get(name, default)) for name, kind, default in FIELDS]


def _read(parser: AttrParser, name: str) -> Any:
    """The value of field `name`, or an error naming the field and the type it wants."""
    at, kind = parser.pos, _TYPE[name]
    if kind == BOOL:
        value = parser.parse_optional_boolean()
    elif kind == INT:
        value = parser.parse_optional_integer(allow_boolean=False)
    elif parser.parse_optional_punctuation("[") is None:
        value = None
    else:
        value = [] if parser.parse_optional_punctuation("]") is not None else None
        if value is None:
            value = [parser.parse_integer(allow_boolean=False, context_msg=f" in #tpu.lg field '{name}'")]
            while parser.parse_optional_punctuation(",") is not None:
                value.append(parser.parse_integer(allow_boolean=False, context_msg=f" in #tpu.lg field '{name}'"))
            parser.parse_punctuation("]", f" to end #tpu.lg field '{name}'")
    if value is None:
        parser.raise_error(f"#tpu.lg field '{name}' must be {kind}", at)
    return value


_CANONICAL_VALUE = {INT: r"(-?[0-9]+)", BOOL: r"(true|false)", INTS: r"\[((?:-?[0-9]+(?:, -?[0-9]+)*)?)\]"}
# `body()`'s text exactly: every field, in order, one space around `=` and after each comma
_CANONICAL = re.compile("<" + ", ".join(f"{name} = {_CANONICAL_VALUE[kind]}" for name, kind, _ in FIELDS) + ">")


def _canonical_params(fast: re.Match[str]) -> list[Attribute]:
    return [_canonical_param(kind, text) for (_, kind, _), text in zip(FIELDS, fast.groups(), strict=True)]


@functools.lru_cache(maxsize=4096)
def _canonical_param(kind: str, text: str) -> Attribute:
    """One field's parameter from its text; remembered, as a group's ops repeat the same few
    values (parameters are immutable, so sharing one is what building it again would give)."""
    return _param(kind, _canonical_value(kind, text))


def _canonical_value(kind: str, text: str) -> Any:
    if kind == INTS:
        return [int(v) for v in text.split(", ")] if text else []
    return text == "true" if kind == BOOL else int(text)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)

"""Pass pipelines and pass options as written on the command line, and their conversion to passes.

Three spellings reach the same `PassSpec` list:

    --deinit="no_save_weight=true"                             (MLIR flag: options only)
    -p 'shape-infer,deinit{no_save_weight=true}'               (xDSL pipeline)
    --pass-pipeline='builtin.module(shape-infer,deinit{no_save_weight=true})'   (MLIR pipeline)

Options are space-separated `key=value`; a value is a bare word, a quoted string or a comma list
of them, and `key=` (empty) is allowed because TPU-MLIR's scripts write `quant_input_list= `.
The grammar keeps values as text: what `1` means (int, float, str) depends on the type of the
pass field it sets, so `instantiate` converts it against the field's annotation.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from dataclasses import dataclass

from lark import Lark, Token, Transformer, UnexpectedInput, UnexpectedToken
from lark.exceptions import VisitError
from xdsl.passes import ModulePass

from tpudsl.ir.diagnostics import TpudslError

_GRAMMAR = r"""
pipeline: [item ("," item)*]
?item: NAME braces?              -> pass_spec
     | NAME "(" pipeline ")"     -> nested
braces: "{" options "}"

options: option*
option: KEY "=" value
      | KEY EMPTY_VALUE          -> empty_option
      | KEY                      -> flag_option
value: atom ("," atom)*
?atom: WORD | DQ_STRING | SQ_STRING

NAME: /[A-Za-z_][\w.-]*/
KEY: /[A-Za-z_][\w-]*/
WORD: /[^\s,"'{}()=]+/
DQ_STRING: /"(\\.|[^"\\])*"/
SQ_STRING: /'(\\.|[^'\\])*'/
// `key=` followed by a space or the end: an empty value, not `=` before the next key.
EMPTY_VALUE.2: /=(?=[\s}]|$)/
%import common.WS
%ignore WS
"""


@functools.cache
def _parser() -> Lark:
    # Built on first use: most command lines (`--shape-infer --canonicalize`) need no grammar.
    return Lark(_GRAMMAR, start=["pipeline", "options"], parser="lalr")


@dataclass(frozen=True)
class OptionValue:
    """The text of one option value: its comma-separated items, quotes removed (None: `key` alone)."""

    items: tuple[str, ...] | None

    @property
    def text(self) -> str:
        return ",".join(self.items or ())


@dataclass(frozen=True)
class PassSpec:
    name: str
    options: dict[str, OptionValue]


class _ToSpecs(Transformer):
    def pipeline(self, items: list) -> list[PassSpec]:
        specs: list[PassSpec] = []
        for item in items:
            if item is not None:
                specs.extend(item if isinstance(item, list) else [item])
        return specs

    def pass_spec(self, children: list) -> PassSpec:
        name, *rest = children
        return PassSpec(str(name), rest[0] if rest else {})

    def nested(self, children: list) -> list[PassSpec]:
        anchor, specs = children
        # Everything tpudsl runs is a module pass; MLIR's op-anchored nesting is not supported.
        if str(anchor) != "builtin.module":
            raise TpudslError(f"pass pipeline anchor '{anchor}' is not supported; use builtin.module(...)")
        return specs

    def braces(self, children: list) -> dict[str, OptionValue]:
        return children[0]

    def options(self, children: list) -> dict[str, OptionValue]:
        result: dict[str, OptionValue] = {}
        for key, value in children:
            if key in result:
                raise TpudslError(f"option '{key}' is given twice")
            result[key] = value
        return result

    def option(self, children: list) -> tuple[str, OptionValue]:
        key, value = children
        return str(key), value

    def empty_option(self, children: list) -> tuple[str, OptionValue]:
        return str(children[0]), OptionValue(())

    def flag_option(self, children: list) -> tuple[str, OptionValue]:
        return str(children[0]), OptionValue(None)

    def value(self, atoms: list[Token]) -> OptionValue:
        return OptionValue(tuple(_unquote(a) for a in atoms))


def _unquote(token: Token) -> str:
    if token.type in ("DQ_STRING", "SQ_STRING"):
        return token[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    return str(token)


def _parse(text: str, start: str, what: str):
    try:
        return _ToSpecs().transform(_parser().parse(text, start=start))
    except VisitError as e:  # a TpudslError raised by a transformer method
        raise e.orig_exc from None
    except UnexpectedToken as e:
        if e.token.type == "$END":
            raise TpudslError(f"cannot parse {what} '{text}': unexpected end of text") from None
        raise TpudslError(f"cannot parse {what} '{text}': unexpected '{e.token}' at column {e.column}") from None
    except UnexpectedInput as e:
        raise TpudslError(f"cannot parse {what} '{text}': unexpected character at column {e.column}") from None


def parse_pipeline(text: str) -> list[PassSpec]:
    """`a,b{x=1}` or `builtin.module(a,b{x=1})` -> pass specs in order."""
    return _parse(text, "pipeline", "pass pipeline")


def parse_options(text: str) -> dict[str, OptionValue]:
    """`x=1 name="a b" list=1,2` -> {key: value}."""
    return _parse(text, "options", "pass options")


def option_fields(cls: type[ModulePass]) -> dict[str, type]:
    """The options of a pass class: dataclass field name -> annotated type."""
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls) if f.init}


def instantiate(cls: type[ModulePass], spec: PassSpec) -> ModulePass:
    """The pass object with `spec.options` converted to its fields' types (keys may use - or _)."""
    fields = option_fields(cls)
    kwargs: dict[str, object] = {}
    for key, value in spec.options.items():
        field_name = key.replace("-", "_")
        if field_name not in fields:
            known = ", ".join(fields) if fields else "none"
            raise TpudslError(f"pass '{spec.name}' has no option '{key}'; its options: {known}")
        try:
            kwargs[field_name] = _convert(value, fields[field_name])
        except ValueError as e:
            raise TpudslError(f"option '{key}' of pass '{spec.name}': {e}") from None
    try:
        return cls(**kwargs)
    except TypeError as e:  # a field without a default was not given
        raise TpudslError(f"pass '{spec.name}': {e}") from None
    except ValueError as e:  # the pass's __post_init__ rejected a value
        raise TpudslError(f"pass '{spec.name}': {e}") from None


_TRUE = ("true", "True", "TRUE", "1")
_FALSE = ("false", "False", "FALSE", "0")


def _convert(value: OptionValue, ty: object) -> object:
    """Convert as llvm::cl would: bools accept true/false/1/0, a bare `key` means true."""
    origin, args = typing.get_origin(ty), typing.get_args(ty)
    if origin in (typing.Union, types.UnionType) and type(None) in args:
        if value.items == ():
            return None
        (ty,) = [a for a in args if a is not type(None)]
        origin, args = typing.get_origin(ty), typing.get_args(ty)
    if value.items is None:
        if ty is bool:
            return True
        raise ValueError("needs a value (key=value)")
    if origin is tuple:
        return tuple(_scalar(item, args[0]) for item in value.items)
    if origin is typing.Literal:
        if value.text not in args:
            raise ValueError(f"expects one of {', '.join(map(str, args))}, got '{value.text}'")
        return value.text
    return _scalar(value.text, ty)


def _scalar(text: str, ty: object) -> object:
    if ty is str:
        return text
    if ty is bool:
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise ValueError(f"expects true or false, got '{text}'")
    if ty is int:
        try:
            return int(text, 0)
        except ValueError:
            raise ValueError(f"expects an integer, got '{text}'") from None
    if ty is float:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"expects a number, got '{text}'") from None
    raise ValueError(f"has type {ty}, which cannot be set from the command line")

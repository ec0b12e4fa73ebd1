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
import types
import typing
from dataclasses import dataclass

from xdsl.passes import ModulePass

from tpudsl.ir.diagnostics import TpudslError


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


def parse_pipeline(text: str) -> list[PassSpec]:
    """`a,b{x=1}` or `builtin.module(a,b{x=1})` -> pass specs in order."""
    from tpudsl.cli.pass_grammar import parse  # lark: only for a command line with options

    return parse(text, "pipeline", "pass pipeline")


def parse_options(text: str) -> dict[str, OptionValue]:
    """`x=1 name="a b" list=1,2` -> {key: value}."""
    from tpudsl.cli.pass_grammar import parse

    return parse(text, "options", "pass options")


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

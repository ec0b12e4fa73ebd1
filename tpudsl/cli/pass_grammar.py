"""The grammar of pass pipelines and pass options (pass_options.py's docstring) and its
transformer to `PassSpec`s. Its own module so that lark is imported only by a command line that
has options or a pipeline (about 0.05 s of every tpuc-opt start otherwise)."""

from __future__ import annotations

import functools

from lark import Lark, Token, Transformer, UnexpectedInput, UnexpectedToken
from lark.exceptions import VisitError

from tpudsl.cli.pass_options import OptionValue, PassSpec
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


def parse(text: str, start: str, what: str):
    """`text` from the grammar's rule `start` (pipeline or options) to PassSpecs or options; a
    syntax error is one TpudslError naming `what`."""
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

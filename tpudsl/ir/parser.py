"""MLIR text -> xDSL module. (Interim: delegates to xDSL's parser; to be replaced by the fast parser.)"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.utils.exceptions import ParseError

from tpudsl.ir.diagnostics import TpudslError


def parse_module(text: str, filename: str, ctx: Context) -> ModuleOp:
    """Parse `text` (the contents of `filename`) into a module; raises TpudslError with a position."""
    try:
        return Parser(ctx, text, filename).parse_module()
    except ParseError as e:
        loc = e.span.get_location()
        raise TpudslError(e.msg, filename, loc.line, loc.col) from None


def position_of(op: Operation) -> tuple[str, int, int] | None:
    """Where `op` was parsed from (file, line, col), when known."""
    return None

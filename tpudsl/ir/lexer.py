"""Token patterns and small scanners for the fast MLIR parser (parser.py).

The parser works on the whole text with compiled regexes anchored at a position, so a
generic-form op costs a handful of regex matches instead of one Python call per character.
"""

from __future__ import annotations

import bisect
import re
from string import hexdigits

WS = re.compile(r"(?:\s+|//[^\n]*)*")
RESULTS = re.compile(r"(%[\w$.-]+(?::\d+)?(?:\s*,\s*%[\w$.-]+(?::\d+)?)*)\s*=")
RESULT_ITEM = re.compile(r"%([\w$.-]+)(?::(\d+))?")
OP_NAME = re.compile(r'"([^"\\\n]*)"')
BARE_ID = re.compile(r"[A-Za-z_][\w$.]*")
OPERAND_LIST = re.compile(r"\(\s*((?:%[\w$.-]+(?:#\d+)?(?:\s*,\s*%[\w$.-]+(?:#\d+)?)*)?)\s*\)")
OPERAND_ITEM = re.compile(r"%([\w$.-]+)(?:#(\d+))?")
VALUE_ID = re.compile(r"%([\w$.-]+)")
SYMBOL = re.compile(r'@(?:([\w$.-]+)|("(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"))')
BLOCK_ID = re.compile(r"\^([\w$.-]+)")
REGIONS_START = re.compile(r"\(\s*\{")
PAREN_LIST = re.compile(r"\(([^()]*)\)")
ARROW = re.compile(r"\s*->\s*")
# Types worth memoising by their text: plain tensors (also with an integer encoding) and keywords.
SIMPLE_TYPE = re.compile(r"(?:tensor<[^<>(){}\"]*>|[a-z][\w]*)(?![\w<.])")
# One character per step (no nested `+`): an unterminated string must fail in linear time.
STRING = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')
ALIAS_DEF = re.compile(r"^([#!][\w$.-]+)[ \t]*=[ \t]*", re.M)
ALIAS_REF = re.compile(r"#[\w$.-]+")
LOC_ALIAS = re.compile(r"loc\(\s*(#[\w$.-]+)\s*\)")
LOC_NAME = re.compile(r'loc\(\s*"([^"\\\n]*)"\s*\)')
LINE_COL = re.compile(r":(\d+):(\d+)")
# One generic op as MLIR prints it, on one line: `%5 = "top.Conv"(%4, %w, %b) {...} : (T, T, T) -> T loc(#loc5)`.
# Groups: result, op name, operands, attribute dict (flat), input types, result types, location.
FAST_OP = re.compile(
    r'(?:%([\w$.-]+) = )?"([^"\\\n]+)"\(((?:%[\w$.-]+(?:#\d+)?(?:, %[\w$.-]+(?:#\d+)?)*)?)\)'
    r'(?: (\{(?:[^{}"\n]|"(?:[^"\\\n]|\\.)*")*\}))?'
    r' : \(([^()\n]*)\) -> (\([^()\n]*\)|[^()\s][^\n]*?)'
    r'(?: loc\((#[\w$.-]+|"[^"\\\n]*")\))?[ \t]*$',
    re.M,
)
# `name = #dialect.attr<` in a dictionary: a dialect attribute that may read its own text.
DIALECT_ATTR_ENTRY = re.compile(r"([A-Za-z_][\w$.]*) = #([A-Za-z_][\w$]*\.[\w$.]+)(?=<)")
_BRACE_CHUNK = re.compile(r'(?:[^{}"]+|"(?:[^"\\\n]|\\.)*")*')
_VALUE_NAME = re.compile(r"[A-Za-z_$.-][\w$.-]*")
_ESCAPES = {"n": b"\n", "t": b"\t", "\\": b"\\", '"': b'"'}


_QUOTE_OR_COMMENT = re.compile(r'//[^\n]*|"')


def first_bad_string(text: str) -> int:
    """Offset of the first unterminated or badly escaped string literal, or -1.

    Checked once up front because xDSL's lexer (our fallback) backtracks exponentially on such
    strings; MLIR strings never span lines, so this is a purely lexical scan."""
    pos = 0
    while (m := _QUOTE_OR_COMMENT.search(text, pos)) is not None:
        if m.group() == '"':
            string = STRING.match(text, m.start())
            if string is None:
                return m.start()
            pos = string.end()
        else:
            pos = m.end()
    return -1


def is_value_name_hint(name: str) -> bool:
    """Whether xDSL keeps `name` as the value's name hint (it drops numeric names like `0`)."""
    return _VALUE_NAME.fullmatch(name) is not None


def unescape(literal: str) -> str:
    """The contents of a string literal (with quotes), decoding MLIR escapes like xDSL does."""
    body = literal[1:-1]
    if "\\" not in body:
        return body
    out = bytearray()
    i = 0
    while (j := body.find("\\", i)) >= 0:
        out += body[i:j].encode()
        nxt = body[j + 1 : j + 2]
        if nxt in _ESCAPES:
            out += _ESCAPES[nxt]
            i = j + 2
        elif len(body) > j + 2 and all(c in hexdigits for c in body[j + 1 : j + 3]):
            out.append(int(body[j + 1 : j + 3], 16))
            i = j + 3
        else:
            raise ValueError(f"invalid escape sequence '\\{nxt}'")
    out += body[i:].encode()
    return out.decode()


def match_braces(text: str, pos: int) -> int:
    """The end of the `{...}` starting at `pos` (strings may hold braces); -1 when unbalanced."""
    depth = 0
    i = pos
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        else:
            return -1
        i = _BRACE_CHUNK.match(text, i + 1).end()
    return -1


class LineIndex:
    """Offset -> (line, column), 1-based, for one source text."""

    def __init__(self, text: str):
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_col(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1

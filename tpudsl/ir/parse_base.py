"""The parser's state and its leaves: positions and errors, types, attribute dictionaries,
strings, locations and `#alias` definitions, and the fallback to xDSL's parser.

parser.py builds operations, regions and values on top of this (see its docstring)."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    IntAttr,
    NameLoc,
    NoneAttr,
    StringAttr,
    UnitAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.parser import Parser
from xdsl.parser.core import ForwardDeclaredValue
from xdsl.utils.exceptions import ParseError, VerifyException

from tpudsl.ir import lexer as L
from tpudsl.ir.diagnostics import TpudslError, last_line


_NO_CHILD = NoneAttr()


def _name_loc(name: str) -> NameLoc:
    """`NameLoc(StringAttr(name), NoneAttr())`, skipping the re-verification of its two fixed-kind
    parameters: a TPU-MLIR file has one such location per op and verifying them costs a third
    of the time spent on locations."""
    loc = NameLoc.__new__(NameLoc)
    object.__setattr__(loc, "desc", StringAttr(name))
    object.__setattr__(loc, "location", _NO_CHILD)
    return loc


class _HexBitsElement(Parser._TensorLiteralElement):
    """A hex literal inside `dense<...>`: for a float element type MLIR reads its bits (what our
    printer writes for a float no decimal form round-trips, `dense<0x497FFFF0>`), xDSL its integer
    value converted (1.233e9): bits here, as xDSL already does for a scalar `0x... : f32`."""

    def to_type(self, parser, type):  # noqa: ANN001 - xDSL's signature
        if isinstance(type, AnyFloat) and not self.is_negative:
            return next(type.iter_unpack(int(self.value).to_bytes(type.compile_time_size, "little")))
        return super().to_type(parser, type)


class _XdslParser(Parser):
    """xDSL's parser with MLIR's limit on tensor dimensions: a dimension must fit in int64
    (xDSL takes any integer; the printer and every numpy shape would then fail far away), and
    MLIR's reading of hex floats inside `dense<...>` (_HexBitsElement)."""

    def _parse_tensor_literal_element(self) -> Parser._TensorLiteralElement:
        hexadecimal = self._current_token.text[:2] in ("0x", "0X")
        element = super()._parse_tensor_literal_element()
        if hexadecimal and type(element.value) is int:
            return _HexBitsElement(element.is_negative, element.value, element.span)
        return element

    def parse_shape_dimension(self, allow_dynamic: bool = True) -> int:
        start = self._current_token.span.start
        dim = super().parse_shape_dimension(allow_dynamic)
        if dim >= 2**63:
            self.raise_error("invalid dimension", start, start + 1)  # MLIR's message, at the same column
        return dim


class ParserBase:
    """Parser state shared by all parts; `self.pos` is the offset of the next character to read."""

    def __init__(self, text: str, filename: str, ctx: Context, split_line: int | None = None):
        self.text = text
        self.filename = filename
        self.ctx = ctx
        self.lines = L.LineIndex(text)
        # What MLIR's parser gives an op or argument written without `loc(...)`: "FILE":line:col
        # of its name. With --split-input-file MLIR names each chunk's buffer
        # `within split at FILE:N offset ` (N: the line of the `// -----` before it, 1 for the
        # first chunk) and counts lines from that line; `text` keeps the whole file's numbering.
        if split_line is None:
            self.loc_file, self.loc_line_shift = StringAttr(filename), 0
        else:
            self.loc_file = StringAttr(f"within split at {filename}:{split_line} offset ")
            self.loc_line_shift = split_line - 1
        self.pos = 0
        self.values: dict[str, tuple[SSAValue, ...]] = {}
        self.forward: dict[str, dict[int, ForwardDeclaredValue]] = {}  # xDSL's layout, shared with it
        self.first_use: dict[str, int] = {}
        self.scopes: list[list[str]] = [[]]
        self.dialects: list[str] = ["builtin"]
        self.blocks: dict[str, tuple[Block, bool]] = {}
        self.aliases: dict[str, Attribute] = {}
        self.alias_starts: dict[str, int] = {}
        self.alias_ends: dict[int, int] = {}
        self.op_classes: dict[str, type[Operation] | None] = {}
        self.prop_names: dict[type[Operation], frozenset[str]] = {}
        self.dict_memo: dict[str, dict[str, Attribute]] = {}
        self.types_memo: dict[str, tuple[Attribute, ...]] = {}
        self.type_memo: dict[str, Attribute] = {}
        self.name_locs: dict[str, NameLoc] = {}
        self.attr_classes: dict[str, type | None] = {}
        self._xdsl: Parser | None = None

    def source_loc(self, offset: int) -> FileLineColLoc:
        line, col = self.lines.line_col(offset)
        return FileLineColLoc(self.loc_file, IntAttr(line - self.loc_line_shift), IntAttr(col))

    def file_loc(self) -> FileLineColLoc:
        """The location MLIR gives the module it wraps around top-level ops: "FILE":0:0."""
        return FileLineColLoc(self.loc_file, IntAttr(0), IntAttr(0))

    # ---- alias definitions ---------------------------------------------------------------

    def collect_aliases(self) -> None:
        for m in L.ALIAS_DEF.finditer(self.text):
            name = m.group(1)
            if name in self.alias_starts:
                self.error(f"redefinition of alias '{name}'", m.start())
            self.alias_starts[name] = m.end()
        for m in L.ALIAS_DEF.finditer(self.text):
            self.alias(m.group(1), m.start())
            self.alias_ends[m.start()] = self.alias_ends[m.end()]

    def alias(self, name: str, use: int) -> Attribute:
        value = self.aliases.get(name)
        if value is not None:
            return value
        start = self.alias_starts.get(name)
        if start is None:
            self.error(f"undefined alias '{name}'", use)
        # alias_ends holds the end of each resolved definition; an entry without a value in
        # self.aliases means the definition is being resolved right now, i.e. it refers to itself.
        if start in self.alias_ends:
            self.error(f"alias '{name}' refers to itself", use)
        self.alias_ends[start] = start
        if self.text.startswith("loc(", start):
            self.pos = start
            value = self.location()
            end = self.pos
        else:
            value, end = self.xdsl_call(start, lambda p: p.parse_attribute())
        self.aliases[name] = value
        self.alias_ends[start] = end
        return value

    # ---- errors and positions ------------------------------------------------------------

    def error_at(self, message: str, offset: int) -> TpudslError:
        line, col = self.lines.line_col(offset)
        return TpudslError(message, self.filename, line, col)

    def error(self, message: str, offset: int):
        raise self.error_at(message, offset)

    def expected(self, what: str) -> None:
        self.skip_ws()
        token = self.text[self.pos : self.pos + 12].split("\n")[0] or "end of file"
        self.error(f"expected {what}, found '{token}'", self.pos)

    def skip_ws(self) -> None:
        self.pos = L.WS.match(self.text, self.pos).end()

    def expect(self, punct: str, what: str) -> None:
        self.skip_ws()
        if not self.text.startswith(punct, self.pos):
            self.expected(what)
        self.pos += len(punct)

    def accept(self, punct: str) -> bool:
        self.skip_ws()
        if self.text.startswith(punct, self.pos):
            self.pos += len(punct)
            return True
        return False

    # ---- xDSL fallback ----------------------------------------------------------------------

    def _new_xdsl(self, text: str) -> _XdslParser:
        """An xDSL parser of `text` (the file, or a piece of it) that knows the file's aliases."""
        p = _XdslParser(self.ctx, text, self.filename)
        p.attribute_aliases = self.aliases
        return p

    def xdsl(self) -> Parser:
        if self._xdsl is None:
            p = self._new_xdsl(self.text)
            p.ssa_values = self.values
            p.forward_ssa_references = self.forward
            self._xdsl = p
        return self._xdsl

    def xdsl_call(self, pos: int, fn):
        """Run `fn(xdsl_parser)` at `pos`; returns (result, position after it)."""
        p = self.xdsl()
        p._resume_from(pos)  # noqa: SLF001 - xDSL's parser has no public seek
        p._parser_state.dialect_stack = list(self.dialects)  # noqa: SLF001
        try:
            result = fn(p)
        except ParseError:
            raise
        except Exception as e:  # e.g. an attribute whose parameters do not verify
            raise self.error_at(last_line(str(e)) or f"cannot parse this ({type(e).__name__})", pos) from None
        if p.ssa_values is not self.values:
            # xDSL swaps in a saved copy of its value table when it leaves a region.
            self.values.clear()
            self.values.update(p.ssa_values)
            p.ssa_values = self.values
        return result, p.pos

    # ---- types, attributes, locations ---------------------------------------------------------

    def type(self) -> Attribute:
        self.skip_ws()
        m = L.SIMPLE_TYPE.match(self.text, self.pos)
        if m is not None:
            t = self.type_memo.get(m.group())
            if t is not None:
                self.pos = m.end()
                return t
        t, end = self.xdsl_call(self.pos, lambda p: p.parse_type())
        if m is not None and L.WS.match(self.text, m.end()).end() == end:
            self.type_memo[m.group()] = t
        self.pos = end
        return t

    def type_list(self) -> tuple[Attribute, ...]:
        """`(T, T, ...)`, memoised by its text."""
        self.skip_ws()
        m = L.PAREN_LIST.match(self.text, self.pos)
        if m is not None:
            types = self.types_memo.get(m.group(1))
            if types is not None:
                self.pos = m.end()
                return types
        self.expect("(", "'(' to start a type list")
        types = []
        if not self.accept(")"):
            types.append(self.type())
            while self.accept(","):
                types.append(self.type())
            self.expect(")", "',' or ')' in a type list")
        if m is not None and self.pos == m.end():
            self.types_memo[m.group(1)] = tuple(types)
        return tuple(types)

    def function_type(self) -> tuple[tuple[Attribute, ...], tuple[Attribute, ...]]:
        inputs = self.type_list()
        m = L.ARROW.match(self.text, self.pos)
        if m is None:
            self.expected("'->' in the function type")
        self.pos = m.end()
        if self.text.startswith("(", self.pos):
            return inputs, self.type_list()
        return inputs, (self.type(),)

    def attr_dict(self) -> dict[str, Attribute]:
        """`{name = attr, ...}` at the current position, memoised by its text."""
        start = self.pos
        end = L.match_braces(self.text, start)
        if end < 0:
            self.error("unterminated attribute dictionary", start)
        key = self.text[start:end]
        attrs = self.dict_memo.get(key)
        if attrs is None:
            attrs = self.dict_with_canonical_attrs(key)
            if attrs is None:
                attrs, _ = self.xdsl_call(start, lambda p: p.parse_optional_dictionary_attr_dict())
            self.dict_memo[key] = attrs
        self.pos = end
        return attrs

    def dict_with_canonical_attrs(self, key: str) -> dict[str, Attribute] | None:
        """A dictionary holding dialect attributes whose class reads their printed text itself
        (`parse_canonical`, e.g. `#tpu.lg<...>`, different in every op of a group), or None.

        Each such entry's value becomes `unit`, the rest is read (and memoised) as one dictionary
        text, shared by every op with the same other attributes, and the entry is set to the
        attribute its class read. Only flat dictionaries without strings, each entry at the top
        level; anything else, or text the class does not read, is None: the caller's xDSL path
        then reads the original text (and reports its errors at their positions)."""
        if '"' in key or key.count("{") != 1:
            return None
        read: dict[str, Attribute] = {}
        parts, last = [], 0
        for m in L.DIALECT_ATTR_ENTRY.finditer(key):
            before = key[last : m.start()].replace("->", "")
            if sum(map(before.count, "[<(")) != sum(map(before.count, "]>)")):
                return None  # inside a list or another attribute's parameters
            cls = self.canonical_attr_class(m.group(2))
            try:
                got = cls.parse_canonical(key, m.end()) if cls is not None else None
            except VerifyException:  # reported, at its position, by the caller's xDSL path
                return None
            if got is None or m.group(1) in read:
                return None
            read[m.group(1)], end = got
            parts += [key[last : m.start(2) - 1], "unit"]
            last = end
        if not read:
            return None
        parts.append(key[last:])
        rest = "".join(parts)
        attrs = self.dict_memo.get(rest)
        if attrs is None:
            p = self._new_xdsl(rest)
            try:
                attrs = p.parse_optional_dictionary_attr_dict()
            except Exception:  # noqa: BLE001 - the caller reads the original text and reports it
                return None
            if p.pos != len(rest):
                return None
            self.dict_memo[rest] = attrs
        attrs = dict(attrs)
        for name, attr in read.items():
            if attrs.get(name) != UnitAttr():
                return None
            attrs[name] = attr
        return attrs

    def canonical_attr_class(self, name: str) -> type | None:
        """The class of dialect attribute `name` when it has a `parse_canonical` reader."""
        cls = self.attr_classes.get(name, False)
        if cls is False:
            found = self.ctx.get_optional_attr(name)
            cls = self.attr_classes[name] = found if hasattr(found, "parse_canonical") else None
        return cls

    def string(self) -> str:
        self.skip_ws()
        m = L.STRING.match(self.text, self.pos)
        if m is None:
            self.expected("a string literal")
        self.pos = m.end()
        try:
            return L.unescape(m.group())
        except (ValueError, UnicodeDecodeError) as e:
            self.error(str(e), m.start())

    def optional_location(self) -> Attribute | None:
        self.skip_ws()
        if not self.text.startswith("loc(", self.pos):
            return None
        return self.location()

    def location(self) -> Attribute:
        """`loc(...)` at the current position."""
        text, pos = self.text, self.pos
        m = L.LOC_ALIAS.match(text, pos)
        if m is not None:
            loc = self.loc_alias(m.group(1), m.start(1))
            self.pos = m.end()  # resolving the alias may have parsed elsewhere
            return loc
        m = L.LOC_NAME.match(text, pos)
        if m is not None:
            self.pos = m.end()
            return self.name_locs.get(m.group(1)) or self.location_named(m.group(1))
        self.pos += len("loc(")
        loc = self.location_body()
        self.expect(")", "')' to end the location")
        return loc

    def loc_alias(self, name: str, use: int) -> Attribute:
        loc = self.alias(name, use)
        if not isinstance(loc, UnknownLoc | NameLoc | FileLineColLoc | FusedLoc | CallSiteLoc):
            self.error(f"alias '{name}' is not a location", use)
        return loc

    def location_body(self) -> Attribute:
        self.skip_ws()
        text, start = self.text, self.pos
        if text.startswith("#", start):
            m = L.ALIAS_REF.match(text, start)
            if m is None:
                self.expected("a location alias like '#loc1'")
            saved = m.end()
            loc = self.loc_alias(m.group(), start)
            self.pos = saved
            return loc
        if text.startswith('"', start):
            name = self.string()
            m = L.LINE_COL.match(text, self.pos)
            if m is not None:
                self.pos = m.end()
                return FileLineColLoc(StringAttr(name), IntAttr(int(m.group(1))), IntAttr(int(m.group(2))))
            if self.accept("("):
                child = self.location_body()
                self.expect(")", "')' after the child location")
                return NameLoc(StringAttr(name), child)
            return NameLoc(StringAttr(name), NoneAttr())
        m = L.BARE_ID.match(text, start)
        word = m.group() if m else ""
        if word == "unknown":
            self.pos = m.end()
            return UnknownLoc()
        if word == "fused":
            self.pos = m.end()
            metadata: Attribute = NoneAttr()
            if self.accept("<"):
                metadata, self.pos = self.xdsl_call(self.pos, lambda p: p.parse_attribute())
                self.expect(">", "'>' after the fused location metadata")
            self.expect("[", "'[' to start the fused locations")
            locs = [self.location_body()]
            while self.accept(","):
                locs.append(self.location_body())
            self.expect("]", "',' or ']' in fused locations")
            return FusedLoc(ArrayAttr(locs), metadata)
        if word == "callsite":
            self.pos = m.end()
            self.expect("(", "'(' after callsite")
            callee = self.location_body()
            if not self.accept("at"):
                self.expected("'at' in a callsite location")
            caller = self.location_body()
            self.expect(")", "')' to end the callsite location")
            return CallSiteLoc(callee, caller)
        self.expected("a location (unknown, \"name\", \"file\":line:col, fused, callsite or #alias)")

    def location_named(self, name: str) -> NameLoc:
        loc = self.name_locs[name] = _name_loc(name)
        return loc

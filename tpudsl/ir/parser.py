"""MLIR text -> xDSL module, fast, building the same IR as xDSL's own parser.

TPU-MLIR files are long runs of generic-form ops with repeated types and attribute
dictionaries, `loc(#locN)` references and the `#locN = loc(...)` aliases at the end of the file
(which xDSL's parser rejects). This parser scans generic ops with regexes anchored at the
current position and memoises attribute dictionaries, type lists and types by their text, so
`tensor<1x64x56x56xf32>` is parsed once per file. Text it has no fast rule for (uncommon
attributes and types, custom-form ops other than module/func/return) is handed to xDSL's parser
at the same position, so the result is what xDSL would build.

Alias definitions (`#x = ...`, `!x = ...`) are collected before the ops, so they may appear
anywhere in the file. Errors are TpudslError with the file, line and column of the token.
"""

from __future__ import annotations

import gc
import weakref

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    CallSiteLoc,
    DictionaryAttr,
    FileLineColLoc,
    FusedLoc,
    IntAttr,
    ModuleOp,
    NameLoc,
    NoneAttr,
    StringAttr,
    UnknownLoc,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.parser import Parser
from xdsl.parser.core import ForwardDeclaredValue
from xdsl.utils.exceptions import ParseError

from tpudsl.ir import lexer as L
from tpudsl.ir.attr_text import attr_text
from tpudsl.ir.diagnostics import TpudslError

# Where each parsed op came from, for diagnostics after parsing (verifier errors).
_POSITIONS: weakref.WeakKeyDictionary[Operation, tuple[str, L.LineIndex, int]] = weakref.WeakKeyDictionary()


def parse_module(text: str, filename: str, ctx: Context) -> ModuleOp:
    """Parse `text` (the contents of `filename`) into a module; raises TpudslError with a position."""
    # Building the IR allocates millions of small objects and no garbage cycles; the cyclic
    # collector would rescan the growing heap again and again (a third of the parse time).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _Parser(text, filename, ctx).parse()
    finally:
        if was_enabled:
            gc.enable()


def position_of(op: Operation) -> tuple[str, int, int] | None:
    """Where `op` was parsed from (file, line, col), when known."""
    where = _POSITIONS.get(op)
    if where is None:
        return None
    filename, index, offset = where
    return (filename, *index.line_col(offset))


def _one_line(message: str) -> str:
    """The last non-empty line of an xDSL message (which may carry source context above it)."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


_NO_CHILD = NoneAttr()


def _name_loc(name: str) -> NameLoc:
    """`NameLoc(StringAttr(name), NoneAttr())`, skipping the re-verification of its two fixed-kind
    parameters: a TPU-MLIR file has one such location per op and verifying them costs a third
    of the time spent on locations."""
    loc = NameLoc.__new__(NameLoc)
    object.__setattr__(loc, "desc", StringAttr(name))
    object.__setattr__(loc, "location", _NO_CHILD)
    return loc


class _Parser:
    def __init__(self, text: str, filename: str, ctx: Context):
        self.text = text
        self.filename = filename
        self.ctx = ctx
        self.lines = L.LineIndex(text)
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
        self._xdsl: Parser | None = None

    # ---- entry ----------------------------------------------------------------------------

    def parse(self) -> ModuleOp:
        try:
            bad = L.first_bad_string(self.text)
            if bad >= 0:
                self.error("unterminated string or invalid escape (use \\n, \\t, \\\\, \\\" or \\XX)", bad)
            self.collect_aliases()
            self.pos = 0
            ops = []
            while True:
                self.skip_ws()
                if self.pos >= len(self.text):
                    break
                m = L.ALIAS_DEF.match(self.text, self.pos)
                if m is not None:
                    self.pos = self.alias_ends[m.start()]
                    continue
                ops.append(self.operation())
            if not ops:
                self.error("expected an operation", self.pos)
            self.check_forward_refs()
        except ParseError as e:  # raised by the xDSL fallback
            raise self.error_at(_one_line(e.msg) or "syntax error", e.span.start) from None
        if len(ops) == 1 and isinstance(ops[0], ModuleOp):
            return ops[0]
        return ModuleOp(ops)

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

    def xdsl(self) -> Parser:
        if self._xdsl is None:
            p = Parser(self.ctx, self.text, self.filename)
            p.attribute_aliases = self.aliases
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
            raise self.error_at(_one_line(str(e)) or f"cannot parse this ({type(e).__name__})", pos) from None
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
            attrs, _ = self.xdsl_call(start, lambda p: p.parse_optional_dictionary_attr_dict())
            self.dict_memo[key] = attrs
        self.pos = end
        return attrs

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

    # ---- SSA values ------------------------------------------------------------------------

    def define(self, name: str, values: tuple[SSAValue, ...], offset: int) -> None:
        if name in self.values:
            self.error(f"redefinition of SSA value '%{name}'", offset)
        self.values[name] = values
        self.scopes[-1].append(name)
        refs = self.forward.pop(name, None)
        if refs is not None:
            self.first_use.pop(name, None)
            for index, placeholder in refs.items():
                if index >= len(values):
                    self.error(f"'%{name}' has {len(values)} results, but #{index} is used", offset)
                if placeholder.type != values[index].type:
                    self.error(
                        f"'%{name}' is defined with type {attr_text(values[index].type)}, "
                        f"but used with type {attr_text(placeholder.type)}",
                        offset,
                    )
                placeholder.replace_all_uses_with(values[index])
        if L.is_value_name_hint(name):
            for v in values:
                v.name_hint = name

    def use(self, name: str, index: int, type_: Attribute, offset: int) -> SSAValue:
        values = self.values.get(name)
        if values is None:
            refs = self.forward.setdefault(name, {})
            self.first_use.setdefault(name, offset)
            value = refs.get(index)
            if value is None:
                value = refs[index] = ForwardDeclaredValue(type_)
        elif index >= len(values):
            self.error(f"'%{name}' has {len(values)} results, but #{index} is used", offset)
        else:
            value = values[index]
        if value.type is not type_ and value.type != type_:
            shown = f"%{name}" + (f"#{index}" if index else "")
            self.error(
                f"use of value '{shown}' expects different type than prior uses: "
                f"'{attr_text(type_)}' vs '{attr_text(value.type)}'",
                offset,
            )
        return value

    def check_forward_refs(self) -> None:
        if self.forward:
            end = len(self.text)
            name = min(self.forward, key=lambda n: self.first_use.get(n, end))
            self.error(f"use of undeclared SSA value name '%{name}'", self.first_use.get(name, end))

    # ---- operations --------------------------------------------------------------------------

    def operation(self) -> Operation:
        text = self.text
        start = self.pos
        m = L.FAST_OP.match(text, start)
        if m is not None:
            op = self.fast_generic_operation(m)
            if op is not None:
                return op
        results: list[tuple[str, int, int]] = []
        m = L.RESULTS.match(text, start)
        if m is not None:
            for r in L.RESULT_ITEM.finditer(text, m.start(1), m.end(1)):
                results.append((r.group(1), int(r.group(2) or 1), r.start()))
            self.pos = m.end()
            self.skip_ws()
        name_pos = self.pos
        if text.startswith('"', name_pos):
            op = self.generic_operation()
        else:
            m = L.BARE_ID.match(text, name_pos)
            word = m.group() if m else ""
            if word in ("module", "builtin.module"):
                self.pos = m.end()
                op = self.module()
            elif word == "func.func":
                self.pos = m.end()
                op = self.func()
            elif word == "func.return" or (word == "return" and self.dialects[-1] == "func"):
                self.pos = m.end()
                op = self.return_op()
            elif word:
                return self.custom_operation(start, results)
            else:
                self.expected("an operation")
        if results:
            bound = sum(r[1] for r in results)
            if bound != len(op.results):
                self.error(f"operation defines {len(op.results)} results but was provided {bound} to bind", start)
            i = 0
            for name, count, offset in results:
                self.define(name, tuple(op.results[i : i + count]), offset)
                i += count
        _POSITIONS[op] = (self.filename, self.lines, name_pos)
        return op

    def fast_generic_operation(self, m) -> Operation | None:
        """The common one-line generic op, from one regex match and the memo tables.

        Returns None when anything is unusual (forward reference, type mismatch, text not yet
        memoised that does not parse the same way); the general path then parses the op again
        and reports errors with their exact position."""
        result, name, operands_text, dict_text, ins_text, outs_text, loc_text = m.groups()
        cls = self.op_classes.get(name) or self.op_class(name, m.start(2) - 1)
        if self.prop_names.get(cls, True):  # ops with properties take the general path
            return None
        attrs = {}
        if dict_text is not None:
            attrs = self.dict_memo.get(dict_text)
            if attrs is None:
                self.pos = m.start(4)
                attrs = self.attr_dict()
        inputs = self.types_memo.get(ins_text)
        if inputs is None:
            self.pos = m.start(5) - 1
            inputs = self.type_list()
        outputs = self.types_memo.get(outs_text)
        if outputs is None:
            self.pos = m.start(6)
            outputs = self.type_list() if outs_text[0] == "(" else (self.type(),)
            if self.pos != m.end(6):
                return None
            self.types_memo[outs_text] = outputs
        location = None
        if loc_text is not None:
            if loc_text[0] == "#":
                location = self.aliases.get(loc_text)
                if location is None:
                    return None
            else:
                location = self.name_locs.get(loc_text[1:-1]) or self.location_named(loc_text[1:-1])
        operands = []
        if operands_text:
            values = self.values
            refs = operands_text.split(", ")
            if len(refs) != len(inputs):
                return None
            for ref, t in zip(refs, inputs):
                value_name, _, index = ref[1:].partition("#")
                defined = values.get(value_name)
                if defined is None:
                    return None
                i = int(index) if index else 0
                if i >= len(defined):
                    return None
                v = defined[i]
                if v.type is not t and v.type != t:
                    return None
                operands.append(v)
        elif inputs:
            return None
        if result is not None and len(outputs) != 1:
            return None
        op = cls.create(operands=operands, result_types=outputs, attributes=attrs, location=location)
        if result is not None:
            self.define(result, op.results, m.start(1) - 1)
        _POSITIONS[op] = (self.filename, self.lines, m.start(2) - 1)
        self.pos = m.end()
        return op

    def location_named(self, name: str) -> NameLoc:
        loc = self.name_locs[name] = _name_loc(name)
        return loc

    def op_class(self, name: str, offset: int) -> type[Operation]:
        cls = self.op_classes.get(name)
        if cls is None:
            cls = self.ctx.get_optional_op(name, dialect_stack=self.dialects)
            if cls is None:
                self.error(f"unknown operation '{name}'", offset)
            self.op_classes[name] = cls
            if cls not in self.prop_names:
                self.prop_names[cls] = (
                    frozenset(cls.get_irdl_definition().properties) if issubclass(cls, IRDLOperation) else frozenset()
                )
        return cls

    def generic_operation(self) -> Operation:
        text = self.text
        m = L.OP_NAME.match(text, self.pos)
        if m is None:
            self.expected("an operation name string")
        name = m.group(1)
        cls = self.op_class(name, m.start())
        self.pos = m.end()
        operand_refs = self.operand_list()
        successors = self.successors() if self.accept("[") else []
        properties: dict[str, Attribute] = {}
        self.skip_ws()
        if text.startswith("<{", self.pos):
            self.pos += 1
            properties = dict(self.attr_dict())
            self.expect(">", "'>' after the properties")
            self.skip_ws()
        regions = []
        if L.REGIONS_START.match(text, self.pos):
            self.pos += 1
            self.dialects.append(name.partition(".")[0])
            regions.append(self.region())
            while self.accept(","):
                regions.append(self.region())
            self.dialects.pop()
            self.expect(")", "')' after the regions")
            self.skip_ws()
        attributes = self.attr_dict() if text.startswith("{", self.pos) else {}
        self.expect(":", "':' and the function type")
        self.skip_ws()
        type_pos = self.pos
        inputs, outputs = self.function_type()
        location = self.optional_location()
        if len(inputs) != len(operand_refs):
            self.error(f"expected {len(operand_refs)} operand types but had {len(inputs)}", type_pos)
        use = self.use
        operands = [use(n, i, t, off) for (n, i, off), t in zip(operand_refs, inputs)]
        props = self.prop_names[cls]
        if props and attributes:
            # Like xDSL: attributes named like the op's properties are properties.
            attributes = dict(attributes)
            for key in props & attributes.keys():
                properties.setdefault(key, attributes.pop(key))
        return cls.create(
            operands=operands,
            result_types=outputs,
            properties=properties,
            attributes=attributes,
            location=location,
            successors=successors,
            regions=regions,
        )

    def operand_list(self) -> list[tuple[str, int, int]]:
        """`(%a, %b#1)` as (name, result index, offset) triples."""
        m = L.OPERAND_LIST.match(self.text, self.pos)
        if m is not None:
            self.pos = m.end()
            return [(o.group(1), int(o.group(2) or 0), o.start()) for o in L.OPERAND_ITEM.finditer(self.text, m.start(1), m.end(1))]
        # Malformed: walk it token by token to point at the offending one.
        self.expect("(", "'(' and the operand list")
        while True:
            self.skip_ws()
            if not L.OPERAND_ITEM.match(self.text, self.pos):
                self.expected("an operand like '%0'")
            self.pos = L.OPERAND_ITEM.match(self.text, self.pos).end()
            if not self.accept(","):
                self.expected("',' or ')' in the operand list")

    def successors(self) -> list[Block]:
        blocks = []
        while True:
            self.skip_ws()
            m = L.BLOCK_ID.match(self.text, self.pos)
            if m is None:
                self.expected("a successor block")
            blocks.append(self.block_ref(m.group(1)))
            self.pos = m.end()
            if not self.accept(","):
                break
        self.expect("]", "']' after the successors")
        return blocks

    def block_ref(self, name: str) -> Block:
        entry = self.blocks.get(name)
        if entry is None:
            block = Block()
            if not Block.is_default_block_name(name):
                block.name_hint = name
            entry = self.blocks[name] = (block, False)
        return entry[0]

    def custom_operation(self, start: int, results: list[tuple[str, int, int]]) -> Operation:
        """A custom-form op we have no fast rule for: xDSL's parser reads it with our values."""
        name_pos = self.pos
        op, self.pos = self.xdsl_call(start, lambda p: p.parse_operation())
        for name, _, _ in results:
            self.scopes[-1].append(name)
        _POSITIONS[op] = (self.filename, self.lines, name_pos)
        return op

    # ---- regions and blocks ---------------------------------------------------------------

    def region(self, entry_args: list[tuple[str, Attribute, Attribute | None, int]] | None = None) -> Region:
        self.expect("{", "'{' to start a region")
        region = Region()
        outer_blocks = self.blocks
        self.blocks = {}
        self.scopes.append([])
        if entry_args is not None:
            block = Block(arg_types=[t for _, t, _, _ in entry_args])
            for arg, (name, _, loc, offset) in zip(block.args, entry_args):
                self.define(name, (arg,), offset)
                if loc is not None:
                    arg.location = loc
            self.block_body(block)
            region.add_block(block)
        else:
            self.skip_ws()
            if not self.text.startswith(("^", "}"), self.pos):
                block = Block()
                self.block_body(block)
                region.add_block(block)
        while not self.accept("}"):
            region.add_block(self.labeled_block())
        for name, (_, defined) in self.blocks.items():
            if not defined:
                self.error(f"reference to an undefined block '^{name}'", self.pos - 1)
        for name in self.scopes.pop():
            del self.values[name]
        self.blocks = outer_blocks
        return region

    def block_body(self, block: Block) -> None:
        text = self.text
        while True:
            self.skip_ws()
            if self.pos >= len(text):
                self.expected("'}' to end the region")
            if text[self.pos] in "}^":
                return
            block.add_op(self.operation())

    def labeled_block(self) -> Block:
        self.skip_ws()
        m = L.BLOCK_ID.match(self.text, self.pos)
        if m is None:
            self.expected("a block label or '}'")
        name = m.group(1)
        block, defined = self.blocks.get(name, (None, False))
        if defined:
            self.error(f"redefinition of block '^{name}'", m.start())
        if block is None:
            block = self.block_ref(name)
        self.blocks[name] = (block, True)
        self.pos = m.end()
        if self.accept("("):
            if not self.accept(")"):
                while True:
                    name, t, loc, offset = self.named_argument()
                    arg = block.insert_arg(t, len(block.args), loc)
                    self.define(name, (arg,), offset)
                    if not self.accept(","):
                        break
                self.expect(")", "',' or ')' in block arguments")
        self.expect(":", "':' after the block label")
        self.block_body(block)
        return block

    def named_argument(self) -> tuple[str, Attribute, Attribute | None, int]:
        self.skip_ws()
        m = L.VALUE_ID.match(self.text, self.pos)
        if m is None:
            self.expected("an argument like '%arg0: type'")
        self.pos = m.end()
        self.expect(":", "':' and the argument type")
        t = self.type()
        return m.group(1), t, self.optional_location(), m.start()

    # ---- module, func.func, return --------------------------------------------------------

    def module(self) -> ModuleOp:
        self.skip_ws()
        sym_name = StringAttr(self.symbol()) if self.text.startswith("@", self.pos) else None
        attributes = self.keyword_attributes()
        self.dialects.append("builtin")
        region = self.region()
        self.dialects.pop()
        if not region.blocks:
            region.add_block(Block())
        op = ModuleOp(region, attributes, sym_name)
        loc = self.optional_location()
        if loc is not None:
            op.location = loc
        return op

    def keyword_attributes(self) -> dict[str, Attribute] | None:
        self.skip_ws()
        m = L.BARE_ID.match(self.text, self.pos)
        if m is None or m.group() != "attributes":
            return None
        self.pos = m.end()
        self.skip_ws()
        if not self.text.startswith("{", self.pos):
            self.expected("'{' after 'attributes'")
        return self.attr_dict()

    def symbol(self) -> str:
        m = L.SYMBOL.match(self.text, self.pos)
        if m is None:
            self.expected("a symbol name like '@main'")
        self.pos = m.end()
        return m.group(1) if m.group(1) is not None else L.unescape(m.group(2))

    def func(self) -> FuncOp:
        self.skip_ws()
        visibility = None
        m = L.BARE_ID.match(self.text, self.pos)
        if m is not None and m.group() in ("private", "public", "nested"):
            visibility = m.group()
            self.pos = m.end()
            self.skip_ws()
        name = self.symbol()
        self.expect("(", "'(' to start the function arguments")
        named: list[tuple[str, Attribute, Attribute | None, int]] = []
        inputs: list[Attribute] = []
        arg_dicts: list[dict[str, Attribute]] = []
        if not self.accept(")"):
            while True:
                self.skip_ws()
                if self.text.startswith("%", self.pos):
                    arg_name, t, _, offset = self.named_argument_without_loc()
                else:
                    arg_name, t, offset = None, self.type(), self.pos
                self.skip_ws()
                arg_dicts.append(self.attr_dict() if self.text.startswith("{", self.pos) else {})
                loc = self.optional_location()
                if arg_name is not None:
                    named.append((arg_name, t, loc, offset))
                inputs.append(t)
                if not self.accept(","):
                    break
            self.expect(")", "',' or ')' in the function arguments")
        if named and len(named) != len(inputs):
            self.error("expected all arguments to be named or all unnamed", self.pos)
        outputs, res_attrs = self.func_results()
        extra = self.keyword_attributes()
        self.skip_ws()
        region = Region()
        if self.text.startswith("{", self.pos):
            self.dialects.append("func")
            region = self.region(named or None)
            self.dialects.pop()
        op = FuncOp(
            name,
            (inputs, outputs),
            region,
            visibility,
            arg_attrs=ArrayAttr(DictionaryAttr(d) for d in arg_dicts) if any(arg_dicts) else None,
            res_attrs=res_attrs,
        )
        if extra:
            op.attributes |= extra
        loc = self.optional_location()
        if loc is not None:
            op.location = loc
        return op

    def named_argument_without_loc(self):
        m = L.VALUE_ID.match(self.text, self.pos)
        if m is None:
            self.expected("an argument like '%arg0: type'")
        self.pos = m.end()
        self.expect(":", "':' and the argument type")
        return m.group(1), self.type(), None, m.start()

    def func_results(self) -> tuple[list[Attribute], ArrayAttr | None]:
        m = L.ARROW.match(self.text, self.pos)
        if m is None:
            return [], None
        self.pos = m.end()
        if not self.accept("("):
            return [self.type()], None
        types, dicts = [], []
        if not self.accept(")"):
            while True:
                types.append(self.type())
                self.skip_ws()
                dicts.append(self.attr_dict() if self.text.startswith("{", self.pos) else {})
                if not self.accept(","):
                    break
            self.expect(")", "',' or ')' in the function results")
        res_attrs = ArrayAttr(DictionaryAttr(d) for d in dicts) if any(dicts) else None
        return types, res_attrs

    def return_op(self) -> ReturnOp:
        refs = []
        self.skip_ws()
        m = L.OPERAND_ITEM.match(self.text, self.pos)
        while m is not None:
            refs.append((m.group(1), int(m.group(2) or 0), m.start()))
            self.pos = m.end()
            if not self.accept(","):
                break
            self.skip_ws()
            m = L.OPERAND_ITEM.match(self.text, self.pos)
            if m is None:
                self.expected("an operand after ','")
        operands = []
        if refs:
            self.expect(":", "':' and the operand types")
            types = [self.type()]
            while self.accept(","):
                types.append(self.type())
            if len(types) != len(refs):
                self.error(f"expected {len(refs)} types but had {len(types)}", self.pos)
            operands = [self.use(n, i, t, off) for (n, i, off), t in zip(refs, types)]
        op = ReturnOp.create(operands=operands)
        loc = self.optional_location()
        if loc is not None:
            op.location = loc
        return op

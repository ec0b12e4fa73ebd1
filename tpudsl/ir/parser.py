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

Layout: parse_base.py holds the state and the leaves (types, attributes, locations, aliases,
errors, the xDSL fallback), parse_builtin.py the module/func.func/return custom forms, and this
file operations, regions and SSA values.
"""

from __future__ import annotations

import gc
import re
import weakref

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnknownLoc
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.parser.core import ForwardDeclaredValue
from xdsl.utils.exceptions import ParseError

from tpudsl.ir import lexer as L
from tpudsl.ir.attr_text import attr_text
from tpudsl.ir.diagnostics import last_line
from tpudsl.ir.parse_base import ParserBase
from tpudsl.ir.parse_builtin import BuiltinOpsMixin

# An op's own `loc(unknown)` or `loc(#alias)` at its end (xDSL gives UnknownLoc to both those and
# ops written without a location).
_TRAILING_LOC = re.compile(r"\bloc\((?:unknown|#[\w$.-]+)\)\s*$")

# Where each parsed op came from, for diagnostics after parsing (verifier errors).
_POSITIONS: weakref.WeakKeyDictionary[Operation, tuple[str, L.LineIndex, int]] = weakref.WeakKeyDictionary()


# How deep regions may nest (see _Parser.region).
MAX_REGION_DEPTH = 64


def parse_module(text: str, filename: str, ctx: Context, split_line: int | None = None) -> ModuleOp:
    """Parse `text` (the contents of `filename`) into a module; raises TpudslError with a position.

    Ops, funcs and arguments written without `loc(...)` get MLIR's default, `"FILE":line:col` of
    their name. `split_line` is for one `--split-input-file` chunk (`text` padded to keep the
    file's line numbers): the line of the `// -----` before it (1 for the first chunk); such
    locations are then named and numbered as MLIR names a chunk (`within split at FILE:N offset `)."""
    # Building the IR allocates millions of small objects and no garbage cycles; the cyclic
    # collector would rescan the growing heap again and again (a third of the parse time).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _Parser(text, filename, ctx, split_line).parse()
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


class _Parser(BuiltinOpsMixin, ParserBase):
    """Operations, regions, blocks and SSA values; the leaves are in ParserBase."""

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
            raise self.error_at(last_line(e.msg) or "syntax error", e.span.start) from None
        if len(ops) == 1 and isinstance(ops[0], ModuleOp):
            return ops[0]
        module = ModuleOp(ops)
        module.location = self.file_loc()
        return module

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
            self.pos = start  # the fast path may have read part of the op
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
                op = self.module(name_pos)
            elif word == "func.func":
                self.pos = m.end()
                op = self.func(name_pos)
            elif word == "func.return" or (word == "return" and self.dialects[-1] == "func"):
                self.pos = m.end()
                op = self.return_op(name_pos)
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
        else:
            location = self.source_loc(m.start(2) - 1)
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
        name_pos = self.pos
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
        location = self.optional_location() or self.source_loc(name_pos)
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
            if not Block.is_default_block_name(name) and L.is_value_name_hint(name):
                block.name_hint = name  # a numeric label like `^0` is valid MLIR but no xDSL name
            entry = self.blocks[name] = (block, False)
        return entry[0]

    def custom_operation(self, start: int, results: list[tuple[str, int, int]]) -> Operation:
        """A custom-form op we have no fast rule for: xDSL's parser reads it with our values."""
        name_pos = self.pos
        op, self.pos = self.xdsl_call(start, lambda p: p.parse_operation())
        if isinstance(op.location, UnknownLoc) and not _TRAILING_LOC.search(self.text, start, self.pos):
            op.location = self.source_loc(name_pos)
        for name, _, _ in results:
            self.scopes[-1].append(name)
        _POSITIONS[op] = (self.filename, self.lines, name_pos)
        return op

    # ---- regions and blocks ---------------------------------------------------------------

    def region(self, entry_args: list[tuple[str, Attribute, Attribute | None, int]] | None = None) -> Region:
        self.expect("{", "'{' to start a region")
        if len(self.scopes) > MAX_REGION_DEPTH:
            # Verifying, printing and walking the IR recurse per level: deeper input would exhaust
            # Python's recursion limit somewhere later. Real models nest a few levels.
            self.error(f"regions nested more than {MAX_REGION_DEPTH} deep", self.pos - 1)
        region = Region()
        outer_blocks = self.blocks
        self.blocks = {}
        self.scopes.append([])
        if entry_args is not None:
            block = Block(arg_types=[t for _, t, _, _ in entry_args])
            for arg, (name, _, loc, offset) in zip(block.args, entry_args):
                self.define(name, (arg,), offset)
                arg.location = loc if loc is not None else self.source_loc(offset)
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
                    arg = block.insert_arg(t, len(block.args), loc or self.source_loc(offset))
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

"""The custom forms upstream MLIR prints for builtin and func ops: `module @name attributes
{...} {`, `func.func private @f(%arg0: T loc(...)) -> T attributes {...} {` and `return %x : T`.

The ops are built as xDSL's own custom parsers build them (same properties and attributes)."""

from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Region

from tpudsl.ir import lexer as L


class BuiltinOpsMixin:
    """Parses module, func.func and return for parser._Parser (uses its ParserBase helpers)."""

    def module(self, name_pos: int) -> ModuleOp:
        self.skip_ws()
        sym_name = StringAttr(self.symbol()) if self.text.startswith("@", self.pos) else None
        attributes = self.keyword_attributes()
        self.dialects.append("builtin")
        region = self.region()
        self.dialects.pop()
        if not region.blocks:
            region.add_block(Block())
        op = ModuleOp(region, attributes, sym_name)
        op.location = self.optional_location() or self.source_loc(name_pos)
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

    def func(self, name_pos: int) -> FuncOp:
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
        op.location = self.optional_location() or self.source_loc(name_pos)
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

    def return_op(self, name_pos: int) -> ReturnOp:
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
        op.location = self.optional_location() or self.source_loc(name_pos)
        return op

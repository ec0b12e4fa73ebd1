"""xDSL module -> MLIR text, exactly as upstream MLIR's AsmPrinter writes it.

`module`, `func.func` and `return` use their custom forms, every other op the generic form
(`%3 = "top.Conv"(%0, %1, %2) {...} : (...) -> ...`), which is what TPU-MLIR files contain.
Values are renumbered like MLIR's SSANameState (`%argN` for entry-block arguments, `%N` per
result group, nested regions continue from the end of the enclosing region). With `debuginfo`,
locations are printed as MLIR's `--mlir-print-debuginfo` does (see locations.py).
"""

from __future__ import annotations

import gc

from xdsl.dialects.builtin import ModuleOp, UnregisteredOp
from xdsl.dialects.func import CallOp, FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region

from tpudsl.ir.attr_text import attr_text, dict_body, result_types_text, type_list
from tpudsl.ir.locations import LocAliases, inline_loc

_FUNC_RESERVED = {"sym_name", "function_type", "sym_visibility", "arg_attrs", "res_attrs"}


def print_module(op: Operation, debuginfo: bool = False) -> str:
    """The module as MLIR text, ending with a newline; locations printed when `debuginfo`."""
    # Only short-lived strings are allocated; without this the cyclic collector rescans the
    # whole module many times over (like in parser.py).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _Printer(op, debuginfo).run()
    finally:
        if was_enabled:
            gc.enable()


class _Printer:
    def __init__(self, top: Operation, debuginfo: bool):
        self.top = top
        self.names = _number_values(top)
        self.aliases = LocAliases(top) if debuginfo else None
        self.lines: list[str] = []
        self.dict_cache: dict[tuple, str] = {}

    def run(self) -> str:
        self.op(self.top, "", None)
        out = self.lines
        if self.aliases is not None:
            head, tail = self.aliases.definitions()
            out = head + out + tail
        return "\n".join(out) + "\n"

    def loc(self, op: Operation) -> str:
        if self.aliases is None:
            return ""
        return f" loc({self.aliases.ref(op.location)})"

    def arg_loc(self, arg) -> str:
        if self.aliases is None:
            return ""
        return f" loc({inline_loc(arg.location, self.aliases)})"

    # ---- operations -------------------------------------------------------------------------

    def op(self, op: Operation, indent: str, parent: Operation | None) -> None:
        if type(op) is ModuleOp:
            self.module(op, indent)
        elif type(op) is FuncOp:
            self.func(op, indent)
        elif type(op) is ReturnOp:
            self.ret(op, indent, _func_prefix(parent))
        elif type(op) is CallOp:
            self.call(op, indent, _func_prefix(parent))
        else:
            self.generic(op, indent)

    def module(self, op: ModuleOp, indent: str) -> None:
        head = indent + "module"
        if op.sym_name is not None:
            head += " @" + op.sym_name.data
        if op.attributes:
            head += " attributes {" + dict_body(op.attributes.items()) + "}"
        self.lines.append(head + " {")
        for block in op.body.blocks:
            self.block_ops(block, indent + "  ", op)
        self.lines.append(f"{indent}}}{self.loc(op)}")

    def func(self, op: FuncOp, indent: str) -> None:
        names = self.names
        ftype = op.function_type
        entry = op.body.blocks.first
        arg_attrs = op.arg_attrs.data if op.arg_attrs is not None else None
        args = []
        for i, t in enumerate(ftype.inputs.data):
            text = attr_text(t)
            if entry is not None:
                text = f"{names[entry.args[i]]}: {text}"
            if arg_attrs is not None and arg_attrs[i].data:
                text += f" {{{dict_body(arg_attrs[i].data.items())}}}"
            if entry is not None:
                text += self.arg_loc(entry.args[i])
            args.append(text)
        head = f"{indent}func.func "
        if op.sym_visibility is not None:
            head += op.sym_visibility.data + " "
        head += f"@{op.sym_name.data}({', '.join(args)})"
        head += _func_results(op)
        extra = {k: v for k, v in op.attributes.items() if k not in _FUNC_RESERVED}
        if extra:
            head += " attributes {" + dict_body(extra.items()) + "}"
        if entry is None:
            self.lines.append(head + self.loc(op))
            return
        self.lines.append(head + " {")
        self.region_blocks(op.body, indent, op, print_entry_args=False)
        self.lines.append(f"{indent}}}{self.loc(op)}")

    def ret(self, op: ReturnOp, indent: str, prefix: str) -> None:
        operands = op._operands  # noqa: SLF001 - the tuple itself, without a view object
        if operands:
            names = self.names
            body = f" {', '.join([names[v] for v in operands])} : {type_list([v.type for v in operands])}"
        else:
            body = ""
        self.lines.append(f"{indent}{prefix}return{body}{self.loc(op)}")

    def call(self, op: CallOp, indent: str, prefix: str) -> None:
        # TPU-MLIR's addressed modules call their subnets: `%1 = call @subfunc_0(%0) : (T) -> T`.
        names = self.names
        operands = op._operands  # noqa: SLF001
        attrs = f" {{{dict_body(op.attributes.items())}}}" if op.attributes else ""
        self.lines.append(
            f"{self.results_lhs(op, indent)}{prefix}call {attr_text(op.callee)}({', '.join([names[v] for v in operands])})"
            f"{attrs} : ({type_list([v.type for v in operands])}) -> {result_types_text([r.type for r in op.results])}"
            f"{self.loc(op)}"
        )

    def results_lhs(self, op: Operation, indent: str) -> str:
        """`indent` followed by `%3 = `, `%3:2 = ` or nothing."""
        results = op.results
        if not results:
            return indent
        if len(results) == 1:
            return f"{indent}{self.names[results[0]]} = "
        return f"{indent}{self.names[results[0]].partition('#')[0]}:{len(results)} = "

    def generic(self, op: Operation, indent: str) -> None:
        names = self.names
        results = op.results
        lhs = self.results_lhs(op, indent)
        operands = op._operands  # noqa: SLF001
        attrs = op.attributes
        if _is_unregistered(type(op)):
            name = op.op_name.data
            attrs = {k: v for k, v in attrs.items() if k != "op_name__"}
        else:
            name = op.name
        text = f'{lhs}"{name}"({", ".join([names[v] for v in operands])})'
        if op._successors:  # noqa: SLF001 - the property builds a view object per call
            text += "[" + ", ".join(self.block_name(b) for b in op._successors) + "]"  # noqa: SLF001
        if op.properties:
            text += f" <{{{dict_body(op.properties.items())}}}>"
        in_types = type_list([v.type for v in operands])
        out_types = result_types_text([r.type for r in results])
        attr_part = f" {{{self.attr_dict(attrs)}}}" if attrs else ""
        tail = f"{attr_part} : ({in_types}) -> {out_types}{self.loc(op)}"
        if not op.regions:
            self.lines.append(text + tail)
            return
        text += " ("
        for i, region in enumerate(op.regions):
            self.lines.append(text + "{")
            self.region_blocks(region, indent, op, print_entry_args=True)
            text = indent + "}, " if i + 1 < len(op.regions) else indent + "})"
        self.lines.append(text + tail)

    def attr_dict(self, attrs: dict) -> str:
        # Ops built by the parser share attribute objects, so the dictionary text is keyed by ids.
        key = tuple([(k, id(v)) for k, v in attrs.items()])
        text = self.dict_cache.get(key)
        if text is None:
            text = self.dict_cache[key] = dict_body(attrs.items())
        return text

    # ---- regions and blocks ---------------------------------------------------------------

    def region_blocks(self, region: Region, indent: str, parent: Operation, print_entry_args: bool) -> None:
        inner = indent + "  "
        for i, block in enumerate(region.blocks):
            if i > 0 or (print_entry_args and block.args):
                self.lines.append(indent + self.block_header(block, is_entry=i == 0))
            self.block_ops(block, inner, parent)

    def block_ops(self, block: Block, indent: str, parent: Operation) -> None:
        for op in block.ops:
            self.op(op, indent, parent)

    def block_header(self, block: Block, is_entry: bool) -> str:
        head = self.block_name(block)
        if block.args:
            names = self.names
            head += "(" + ", ".join(
                f"{names[a]}: {attr_text(a.type)}{self.arg_loc(a)}" for a in block.args
            ) + ")"
        head += ":"
        if is_entry:
            return head
        preds = [self.block_name(p) for p in block.predecessors()]
        if not preds:
            return head + "  // no predecessors"
        if len(preds) == 1:
            return head + f"  // pred: {preds[0]}"
        return head + f"  // {len(preds)} preds: {', '.join(preds)}"

    def block_name(self, block: Block) -> str:
        return self.names[block]


def _func_prefix(parent: Operation | None) -> str:
    # Inside func.func the func dialect is the default one, so MLIR drops its prefix there.
    return "" if type(parent) is FuncOp else "func."


_UNREGISTERED: dict[type, bool] = {}


def _is_unregistered(cls: type) -> bool:
    # An ABC isinstance check per op is measurable at 10^4 ops; the answer is per class.
    known = _UNREGISTERED.get(cls)
    if known is None:
        known = _UNREGISTERED[cls] = issubclass(cls, UnregisteredOp)
    return known


def _func_results(op: FuncOp) -> str:
    outputs = op.function_type.outputs.data
    if not outputs:
        return ""
    res_attrs = op.res_attrs.data if op.res_attrs is not None else None
    if res_attrs is None or not any(d.data for d in res_attrs):
        return " -> " + result_types_text(outputs)
    parts = []
    for t, d in zip(outputs, res_attrs, strict=True):
        parts.append(attr_text(t) + (f" {{{dict_body(d.data.items())}}}" if d.data else ""))
    return " -> (" + ", ".join(parts) + ")"


class _Names(dict):
    # A value defined outside the printed op (printing a detached op) prints as MLIR does.
    def __missing__(self, key) -> str:
        return "<<UNKNOWN SSA VALUE>>"


def _number_values(top: Operation) -> dict:
    """Names for every value and block, following MLIR's SSANameState.

    Each region numbers its own block arguments and op results first; regions nested in its
    ops then start from where it ended (siblings may reuse the same numbers)."""
    names: dict = _Names()
    next_value = 0
    for i, r in enumerate(top.results):
        names[r] = f"%{next_value}" if len(top.results) == 1 else f"%{next_value}#{i}"
    if top.results:
        next_value += 1
    stack = [(region, next_value, 0) for region in reversed(top.regions)]
    while stack:
        region, next_value, next_arg = stack.pop()
        nested = []
        for block_index, block in enumerate(region.blocks):
            names[block] = f"^bb{block_index}"
            for arg in block.args:
                if block_index == 0:
                    names[arg] = f"%arg{next_arg}"
                    next_arg += 1
                else:
                    names[arg] = f"%{next_value}"
                    next_value += 1
            for op in block.ops:
                results = op.results
                if results:
                    if len(results) == 1:
                        names[results[0]] = f"%{next_value}"
                    else:
                        for i, r in enumerate(results):
                            names[r] = f"%{next_value}#{i}"
                    next_value += 1
                if op.regions:
                    nested.extend(op.regions)
        for inner in reversed(nested):
            stack.append((inner, next_value, next_arg))
    return names

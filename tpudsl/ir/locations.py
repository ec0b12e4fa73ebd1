"""Location aliases exactly as MLIR's `--mlir-print-debuginfo` prints them.

What upstream does (AsmPrinter's AliasInitializer, checked against iree's bindings):
* Every distinct location that gets printed, including nested ones, gets an alias `#loc`,
  `#loc1`, ...; `unknown` too.
* Aliases are collected in print order (an op's own location before its regions; a func's
  location, then its argument locations, then its body) and then stably sorted by depth: plain
  locations (unknown, "name", "file":l:c) first, then locations that contain other locations
  (`"name"(child)`, `fused[...]`, `callsite(...)`) by how deep they nest.
* Block-argument locations are printed inline (`%arg0: T loc(unknown)`), but their aliases
  (and those of their children) are still defined, before the module; all other aliases are
  defined after it.
* Inside an alias definition or an inline location, nested locations are printed by alias.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.dialects.builtin import (
    ArrayAttr,
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    ModuleOp,
    NameLoc,
    NoneAttr,
    UnknownLoc,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation

from tpudsl.ir.attr_text import attr_text, escape_string


@dataclass
class _Alias:
    loc: Attribute
    deferrable: bool
    depth: int = 0
    children: list[Attribute] = field(default_factory=list)
    name: str = ""


def _canonical(loc: Attribute) -> Attribute:
    """The location MLIR would have built: xDSL keeps locations as written, but MLIR
    normalises an absent NameLoc child to `unknown` and simplifies fused locations."""
    if isinstance(loc, NameLoc):
        if isinstance(loc.location, NoneAttr | UnknownLoc):
            return loc if isinstance(loc.location, NoneAttr) else NameLoc(loc.desc, NoneAttr())
        child = _canonical(loc.location)
        return NameLoc(loc.desc, NoneAttr() if isinstance(child, UnknownLoc) else child)
    if isinstance(loc, CallSiteLoc):
        return CallSiteLoc(_canonical(loc.callee), _canonical(loc.caller))
    if isinstance(loc, FusedLoc):
        return _canonical_fused(loc)
    return loc


def _canonical_fused(loc: FusedLoc) -> Attribute:
    # FusedLoc::get: inline fused children with the same metadata, drop unknowns and
    # duplicates; no location left -> unknown, one location without metadata -> itself.
    parts: list[Attribute] = []
    for child in loc.locations.data:
        child = _canonical(child)
        if isinstance(child, FusedLoc) and child.metadata == loc.metadata:
            items = list(child.locations.data)
        elif isinstance(child, UnknownLoc):
            items = []
        else:
            items = [child]
        parts += [x for x in items if x not in parts]
    has_metadata = not isinstance(loc.metadata, NoneAttr)
    if not parts:
        return FusedLoc(ArrayAttr([UnknownLoc()]), loc.metadata) if has_metadata else UnknownLoc()
    if len(parts) == 1 and not has_metadata:
        return parts[0]
    return FusedLoc(ArrayAttr(parts), loc.metadata)


def _children(loc: Attribute) -> list[Attribute]:
    """The locations printed inside `loc`, in print order."""
    if isinstance(loc, NameLoc):
        return [] if isinstance(loc.location, NoneAttr) else [loc.location]
    if isinstance(loc, FusedLoc):
        return list(loc.locations.data)
    if isinstance(loc, CallSiteLoc):
        return [loc.callee, loc.caller]
    return []


class LocAliases:
    """The aliases of every location printed for `top`, numbered as MLIR numbers them."""

    def __init__(self, top: Operation):
        self.table: dict[Attribute, _Alias] = {}
        self.visited: dict[int, tuple[Attribute, _Alias]] = {}
        self._visit_op(top)
        ordered = sorted(self.table.values(), key=lambda a: a.depth)
        for i, alias in enumerate(ordered):
            alias.name = "#loc" if i == 0 else f"#loc{i}"
        self.ordered = ordered

    def definitions(self) -> tuple[list[str], list[str]]:
        """Alias definition lines: (before the module, after the module)."""
        head, tail = [], []
        for alias in self.ordered:
            line = f"{alias.name} = loc({_inline_canonical(alias.loc, self)})"
            (tail if alias.deferrable else head).append(line)
        return head, tail

    def ref(self, loc: Attribute, canonical: bool = False) -> str:
        """The alias of `loc`; `canonical`: `loc` is already what MLIR built (a part of an
        alias's location), not to be normalised again (normalising is not idempotent:
        `fused<"a">[x, fused<"a">[unknown]]` becomes `fused<"a">[x, unknown]`, which as
        written text would lose its `unknown`)."""
        seen = self.visited.get(id(loc))
        if seen is not None and seen[0] is loc:
            return seen[1].name
        alias = self.table[loc if canonical else _canonical(loc)]
        self.visited[id(loc)] = (loc, alias)
        return alias.name

    # ---- collection, in MLIR's print order --------------------------------------------

    def _visit(self, loc: Attribute, deferrable: bool, canonical: bool = False) -> int:
        seen = self.visited.get(id(loc))  # parsed modules share location objects
        if seen is not None and seen[0] is loc:
            alias = seen[1]
            if not deferrable:
                self._pin(alias)
            return alias.depth
        key = loc if canonical else _canonical(loc)
        alias = self.table.get(key)
        if alias is not None:
            self.visited[id(loc)] = (loc, alias)
            if not deferrable:
                self._pin(alias)
            return alias.depth
        alias = self.table[key] = _Alias(key, deferrable)
        self.visited[id(loc)] = (loc, alias)
        depth = 1 if isinstance(key, FusedLoc) and not isinstance(key.metadata, NoneAttr) else 0
        for child in _children(key):
            alias.children.append(child)
            depth = max(depth, self._visit(child, deferrable, canonical=True) + 1)
        alias.depth = depth
        return depth

    def _pin(self, alias: _Alias) -> None:
        if alias.deferrable:
            alias.deferrable = False
            for child in alias.children:
                self._pin(self.table[child])

    def _visit_op(self, op: Operation) -> None:
        self._visit(op.location, True)
        if type(op) is FuncOp:
            entry = op.body.blocks.first
            if entry is not None:
                for arg in entry.args:
                    self._visit(arg.location, False)
                self._visit_region(op.body, entry_args=False)
            return
        for region in op.regions:
            self._visit_region(region, entry_args=type(op) is not ModuleOp)

    def _visit_region(self, region, entry_args: bool) -> None:
        for i, block in enumerate(region.blocks):
            if i > 0 or entry_args:
                for arg in block.args:
                    self._visit(arg.location, False)
            for op in block.ops:
                self._visit_op(op)


def inline_loc(loc: Attribute, aliases: LocAliases) -> str:
    """The body of `loc(...)` for `loc`, with nested locations by alias."""
    return _inline_canonical(_canonical(loc), aliases)


def _inline_canonical(loc: Attribute, aliases: LocAliases) -> str:
    if isinstance(loc, UnknownLoc):
        return "unknown"
    if isinstance(loc, NameLoc):
        text = escape_string(loc.desc.data)
        if isinstance(loc.location, NoneAttr | UnknownLoc):
            return text
        return f"{text}({aliases.ref(loc.location, canonical=True)})"
    if isinstance(loc, FileLineColLoc):
        return f"{escape_string(loc.filename.data)}:{loc.line.data}:{loc.column.data}"
    if isinstance(loc, FusedLoc):
        meta = "" if isinstance(loc.metadata, NoneAttr) else f"<{attr_text(loc.metadata)}>"
        return f"fused{meta}[{', '.join(aliases.ref(c, canonical=True) for c in loc.locations.data)}]"
    if isinstance(loc, CallSiteLoc):
        return f"callsite({aliases.ref(loc.callee, canonical=True)} at {aliases.ref(loc.caller, canonical=True)})"
    raise ValueError(f"not a location: {loc}")

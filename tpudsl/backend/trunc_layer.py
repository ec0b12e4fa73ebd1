"""`--trunc-layer="cutLocs=a,b"`: a layer-grouped Tpu module cut down to the named layers, so that a
layer whose .bmodel output differs from the Tpu interpreter's can be compiled and run alone.

    tpuc-opt X_final.mlir --trunc-layer="cutLocs=a,b" --address-assign -o X_cut.mlir
    tpuc-opt X_cut.mlir --codegen="model_file=X_cut.bmodel" -o /dev/null

As TPU-MLIR's TruncLayer.cpp: the ops located at cutLocs are kept; an op inside a layer group keeps
its whole tpu.Group, and a tpu.Reshape a kept op reads is kept too (and the Reshapes it reads). Each
tensor a kept op reads that no kept op computes becomes a new input named as the tensor (weights stay
weights, inputs stay inputs); each result of a kept op that an op not kept (or the return) reads
becomes an output, in program order; everything else is erased.

What tpudsl adds (docs/tpuc-opt.md, "--trunc-layer"): the full model's global addresses are not
valid for the cut (a new input may share memory with a kept tensor computed before it was, a new
output with one computed after its last reader), so they are removed and the module is TPU_LOWERED
again: --address-assign must follow, as it does in TPU-MLIR's line. A kept group whose first weights
were loaded during a group the cut drops is built again with them loaded in it (same slices).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.func import ReturnOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from tpudsl.backend.address_assign import clear_addresses
from tpudsl.backend.layer_group import module_chip
from tpudsl.backend.layer_group.prefetch import without_prefetch
from tpudsl.dialects.opdef import loc_name, value_name
from tpudsl.ir.cut import drop_unused_args, erase_dead_ops, new_input
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import TopModule, top_module_of

# Ops that compute nothing: what the cut keeps when a kept op reads them, never a layer to name.
_SOURCES = ("top.Input", "top.Weight", "top.None")
_STATES = ("TPU_LOWERED", "TPU_ADDRESSED")


@dataclass(frozen=True)
class TruncLayerPass(ModulePass):
    """Cut a layer-grouped Tpu module down to the layers cutLocs names (a debugging cut); --address-assign follows."""

    name = "trunc-layer"

    cutLocs: tuple[str, ...] = ()  # noqa: N815 (TPU-MLIR's option name)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        names = list(dict.fromkeys(n.strip() for n in self.cutLocs if n.strip()))
        if not names:
            raise TpudslError(f"{self.name}: cutLocs is empty; name the layers to keep (cutLocs=a,b)")
        state = op.attributes.get("module.state")
        if not isinstance(state, StringAttr) or state.data not in _STATES:
            got = state.data if isinstance(state, StringAttr) else "not set"
            raise TpudslError(f"{self.name}: module.state is {got}; it cuts a Tpu module ({', '.join(_STATES)})")
        top = top_module_of(op) or TopModule(op)
        main = top.main_func()
        block = main.body.block
        kept = _kept(block, names, self.name)
        outputs = [r for o in kept for r in o.results
                   if any(_top_level(u.operation, block) not in kept for u in r.uses)]
        if not outputs:
            raise TpudslError(f"{self.name}: nothing outside the layers {', '.join(names)} reads their results, "
                              "so the cut would have no output")
        computing = [o for o in block.ops if o.name not in _SOURCES and not isinstance(o, ReturnOp)]
        # a kept group prefetched during a group the cut drops: built again without the prefetch
        unprefetch = [g for i, g in enumerate(computing) if g in kept and g.attributes.get("other_up_overlap_op")
                      and (i == 0 or computing[i - 1] not in kept)]
        first = next(o for o in block.ops if o.name != "top.Input")  # new inputs after the model's own
        for value in dict.fromkeys(v for o in kept for v in _outside_operands(o)):
            if value.owner not in kept and getattr(value.owner, "name", None) not in _SOURCES:
                new_input(block, value, _tensor_name(value), first)
        old_return = block.last_op
        assert isinstance(old_return, ReturnOp)
        old_return.detach()
        old_return.erase()
        top.set_outputs(outputs)
        erase_dead_ops(block, keep=kept)
        drop_unused_args(main)
        clear_addresses(op)
        for group in unprefetch:
            without_prefetch(group, module_chip(op))


def _kept(block: Block, names: list[str], pass_name: str) -> dict[Operation, None]:
    """The ops of @main's block to keep (in program order): those named, or whose group holds one
    named, and the tpu.Reshapes they read; an error naming every name no layer has."""
    named = {n: [] for n in names}
    for o in block.walk():
        if o.name not in (*_SOURCES, "func.return", "tpu.Yield") and loc_name(o) in named:
            named[loc_name(o)].append(_top_level(o, block))
    unknown = [n for n, found in named.items() if not found]
    if unknown:
        raise TpudslError(f"{pass_name}: no layer of @main is named {', '.join(repr(n) for n in unknown)} (cutLocs)")
    chosen: set[Operation] = set()
    todo = [o for found in named.values() for o in found]
    while todo:
        o = todo.pop()
        if o not in chosen:
            chosen.add(o)
            todo += [v.owner for v in _outside_operands(o) if getattr(v.owner, "name", None) == "tpu.Reshape"]
    return dict.fromkeys(o for o in block.ops if o in chosen)


def _top_level(op: Operation, block: Block) -> Operation:
    """The op of `block` that is `op` or holds it (a tpu.Group for an op of its region)."""
    while op.parent_block() is not block:
        parent = op.parent_op()
        assert parent is not None
        op = parent
    return op


def _outside_operands(op: Operation) -> list[SSAValue]:
    """The values `op` reads, and for a tpu.Group those its region reads, that are defined outside it."""
    return [v for inner in op.walk() for v in inner.operands
            if not (isinstance(v.owner, Operation) and op.is_ancestor(v.owner))]


def _tensor_name(value: SSAValue) -> str:
    """A new input's name: the tensor's, as the Tpu interpreter's dump names it (`name_1`, ... for the
    further results of an op with one name)."""
    name = value_name(value)
    owner = value.owner
    if isinstance(owner, Operation) and value.index and name == value_name(owner.results[0]):
        return f"{name}_{value.index}"
    return name

"""Cutting @main down to a part of it: the steps `mlir_cut` (by tensor names, docs/tools.md) and
`--trunc-layer` (by layer names, docs/tpuc-opt.md) share.

A tensor the part reads but no longer computes becomes a new input: a function argument read by a
`top.Input` located at the tensor's name, as every input of a tpudsl module is (the runtimes and
codegen find inputs by their top.Input). What the part no longer reads is erased.
"""

from __future__ import annotations

from collections.abc import Collection

from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, SSAValue

from tpudsl.dialects.opdef import create


def new_input(block: Block, value: SSAValue, name: str, before: Operation) -> SSAValue:
    """Replace every use of `value` by a new input named `name` (its argument last, its top.Input
    placed before `before`, so inputs made one after another keep their order)."""
    arg = block.insert_arg(value.type, len(block.args))
    source = create("top.Input", [arg], [value.type], loc=name)
    block.insert_op_before(source, before)
    value.replace_all_uses_with(source.results[0])
    return source.results[0]


def erase_dead_ops(block: Block, keep: Collection[Operation] = ()) -> None:
    """Erase the ops whose results nothing reads (but the block's terminator and `keep`), last op
    first, so that chains die in one sweep."""
    for op in reversed(list(block.ops)):
        if op is block.last_op or op in keep:
            continue
        if all(not r.uses for r in op.results):
            op.detach()
            op.erase()


def drop_unused_args(func: FuncOp) -> None:
    """Erase the function arguments nothing reads and make the signature match."""
    block = func.body.block
    for arg in [a for a in block.args if not a.uses]:
        block.erase_arg(arg)
    func.update_function_type()

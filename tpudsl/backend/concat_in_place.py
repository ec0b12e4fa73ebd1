"""A Concat whose inputs are written in place (TPU-MLIR's `only_merge`: address-assign's
ConcatFusePattern): each input's memory is its run of the Concat's result, so the Concat itself
moves nothing (docs/backend.md "Several cores").

tpudsl merges the Concat `--core-parallel` puts after an A16MatMul's column parts: the parts are
ops alone placed on the cores (`core_id`), each read only by the Concat, on its last axis with
every dim before it 1, so each part is one contiguous run of bytes of the result. Other Concats
move their inputs as before (TPU-MLIR merges every Concat its supportInplace accepts).
"""

from __future__ import annotations

import math

from xdsl.ir import Operation, SSAValue

from tpudsl.backend.slicing import ESIZE, dtype_of, shape_of
from tpudsl.dialects.attrs import to_attr
from tpudsl.dialects.opdef import SPECS, AttrView, describe
from tpudsl.ir.diagnostics import TpudslError


def mergeable(op: Operation) -> bool:
    """A Concat alone of core-parallel's parts: each read only here, on the last axis with every dim before it 1."""
    if op.name != "tpu.Concat" or op.parent_op().name == "tpu.Group":  # type: ignore[union-attr]
        return False
    shape = shape_of(op.results[0])
    if AttrView(op.attributes, SPECS[op.name])["axis"] % len(shape) != len(shape) - 1 or math.prod(shape[:-1]) != 1:
        return False
    return all(isinstance(v.owner, Operation) and "core_id" in v.owner.attributes and len(list(v.uses)) == 1
               for v in op.operands)


def views(ops: list[Operation]) -> dict[SSAValue, tuple[SSAValue, int]]:
    """Each input of a mergeable Concat of `ops` -> (the Concat's result, its byte offset in it);
    `only_merge` true on those Concats and false on the others (address-assign decides again)."""
    out = {}
    for op in ops:
        if op.name != "tpu.Concat":
            continue
        if not mergeable(op):
            if AttrView(op.attributes, SPECS[op.name])["only_merge"]:
                op.attributes["only_merge"] = to_attr("bool", False)
            continue
        op.attributes["only_merge"] = to_attr("bool", True)
        offset = 0
        for v in op.operands:
            out[v] = (op.results[0], offset)
            offset += math.prod(shape_of(v)) * ESIZE[dtype_of(v)]
    return out


def check_in_place(op: Operation, address_of) -> None:
    """An only_merge Concat's inputs are its result's runs, in order (else codegen would move nothing
    while the result is not written): one error naming the first that is not."""
    at = address_of(op.results[0])
    for v in op.operands:
        if address_of(v) != at:
            raise TpudslError(f"codegen: {describe(op)} is only_merge, but its input from {describe(v.owner)} is at "
                              f"{address_of(v)}, not at {at} inside its result; run --address-assign again")
        at += math.prod(shape_of(v)) * ESIZE[dtype_of(v)]

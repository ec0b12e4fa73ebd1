"""Concats merged in place (TPU-MLIR's `only_merge`: address-assign's ConcatFusePattern, the
conditions of its `ConcatOp::supportInplace`): each input's memory is its run of the Concat's
result, so its producer writes there and the Concat itself moves nothing (docs/backend.md,
"Concats merged in place").

A Concat outside a layer group merges when (`refusal` names the first condition that fails):
* it has no fused relu (the relu would be a pass over the result);
* every dim before its axis is 1, so each input is one contiguous run of bytes of the result;
* (every input has the result's element type: the Concat's verifier's rule; an INT8 input at
  another scale comes through its own tpu.RequantInt, the lowering's as TPU-MLIR's, the producer);
* every input is computed by an op that writes its result to global memory: not a weight, not a
  graph input (the runtime places those), not a returned value (it has output memory of its own
  with the IO addr_modes), not another Concat (TPU-MLIR's rule: merged or not, its result is
  its own buffer);
* at most two inputs have other readers too (TPU-MLIR's `multi_use_times`), no such input twice,
  and no input is already a run of an earlier merged Concat (each value has one address).
"""

from __future__ import annotations

import math
from collections.abc import Container

from xdsl.ir import Operation, SSAValue

from tpudsl.backend.slicing import ESIZE, attrs_of, dtype_of, shape_of
from tpudsl.dialects.attrs import to_attr
from tpudsl.dialects.opdef import describe
from tpudsl.ir.diagnostics import TpudslError

# What does not write its result to global memory as an op of its own (TPU-MLIR's isWeight, its
# block arguments and its ConcatOp inputs).
_NOT_WRITERS = ("top.Weight", "top.None", "top.Input", "tpu.Concat")
_MULTI_USE_INPUTS = 2  # TPU-MLIR's supportInplace: more inputs with other readers than this fail


def refusal(op: Operation, returned: set[SSAValue], claimed: Container[SSAValue]) -> str | None:
    """Why the Concat `op` cannot be merged in place (None: it can); `claimed`: the inputs of the
    Concats merged before it, `returned`: the module's outputs."""
    if op.parent_op().name == "tpu.Group":  # type: ignore[union-attr]
        return "inside a layer group"
    attrs = attrs_of(op)
    if attrs["do_relu"]:
        return "do_relu"
    shape = shape_of(op.results[0])
    if math.prod(shape[:attrs["axis"] % len(shape)]) != 1:
        return "a dim before the axis is not 1"
    multi_use = 0
    seen: set[SSAValue] = set()
    repeated = {v for v in op.operands if v in seen or seen.add(v)}
    for v in op.operands:
        if not isinstance(v.owner, Operation) or v.owner.name in _NOT_WRITERS or v in returned:
            return "an input is not written by an op of its own"
        if v in claimed:
            return "an input is a run of another merged Concat"
        if not v.has_one_use():
            multi_use += 1
            if v in repeated:
                return "an input is read twice"
    return "more than two inputs have other readers" if multi_use > _MULTI_USE_INPUTS else None


def views(ops: list[Operation], returned: list[SSAValue], merge: bool = True) -> dict[SSAValue, tuple[SSAValue, int]]:
    """Each input of a Concat of `ops` merged in place -> (the Concat's result, its byte offset in
    it); `only_merge` true on those Concats and false on the others (address-assign decides again).
    `merge` false (address-assign's merge_concat=false): no Concat is merged."""
    out: dict[SSAValue, tuple[SSAValue, int]] = {}
    outputs = set(returned)
    for op in ops:
        if op.name != "tpu.Concat":
            continue
        if not merge or refusal(op, outputs, out) is not None:
            if attrs_of(op)["only_merge"]:
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

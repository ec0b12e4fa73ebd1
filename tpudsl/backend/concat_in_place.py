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

Chains (tpudsl's, beyond TPU-MLIR: DenseNet's dense blocks) are found first. Concats along the same
axis whose own conditions hold (no relu, every dim before the axis 1, not in a group, result not
returned) form a chain C1, C2, ... when each extends the one before: its first input is that
one's result (x2 = Concat(x1, y2)) or its inputs begin with all of that one's inputs in order
(Concat(x0, x1, x2) after Concat(x0, x1)), and no other Concat extends that one. The whole chain
is one buffer, the last (longest) Concat's result: each part (the first Concat's inputs, then each
later one's new inputs) its run, every Concat's result the buffer's prefix. The parts must be
written by ops of their own (as above), each once in the chain, none a run of another chain, and
each Concat's new parts at most two with readers outside the chain (`multi_use_times` again); the
chain ends before the first Concat whose parts fail. The chains are followed by `ir/chains.py`,
which the interpreter's Concat chains (interp/concat_chain.py, first-input extensions only) use too.
"""

from __future__ import annotations

import math
from collections.abc import Container, Sequence

from xdsl.ir import Operation, SSAValue

from tpudsl.backend.slicing import attrs_of, nbytes, shape_of
from tpudsl.dialects.attrs import to_attr
from tpudsl.dialects.opdef import describe
from tpudsl.ir.chains import extension_chains
from tpudsl.ir.diagnostics import TpudslError

# What does not write its result to global memory as an op of its own (TPU-MLIR's isWeight, its
# block arguments and its ConcatOp inputs).
_NOT_WRITERS = ("top.Weight", "top.None", "top.Input", "tpu.Concat")
_MULTI_USE_INPUTS = 2  # TPU-MLIR's supportInplace: more inputs with other readers than this fail


def _own_refusal(op: Operation) -> str | None:
    """Why the Concat `op` itself, whatever its inputs, cannot be merged in place (None: it can)."""
    if op.parent_op().name == "tpu.Group":  # type: ignore[union-attr]
        return "inside a layer group"
    attrs = attrs_of(op)
    if attrs["do_relu"]:
        return "do_relu"
    if math.prod(shape_of(op.results[0])[:_axis(op)]) != 1:
        return "a dim before the axis is not 1"
    return None


def _axis(op: Operation) -> int:
    return attrs_of(op)["axis"] % len(shape_of(op.results[0]))


def _written_by_own_op(v: SSAValue, returned: Container[SSAValue]) -> bool:
    return isinstance(v.owner, Operation) and v.owner.name not in _NOT_WRITERS and v not in returned


def refusal(op: Operation, returned: set[SSAValue], claimed: Container[SSAValue]) -> str | None:
    """Why the Concat `op` cannot be merged in place (None: it can); `claimed`: the inputs of the
    Concats merged before it, `returned`: the module's outputs."""
    own = _own_refusal(op)
    if own is not None:
        return own
    multi_use = 0
    seen: set[SSAValue] = set()
    repeated = {v for v in op.operands if v in seen or seen.add(v)}
    for v in op.operands:
        if (why := _part_refusal(v, repeated, claimed, returned)) is not None:
            return why
        multi_use += not v.has_one_use()
    return "more than two inputs have other readers" if multi_use > _MULTI_USE_INPUTS else None


def _part_refusal(v: SSAValue, seen: Container[SSAValue], claimed: Container[SSAValue],
                  returned: Container[SSAValue]) -> str | None:
    """Why the input `v` cannot be a run of a merged buffer (None: it can); `seen`: the values that
    have another run in the same buffer (a lone Concat's inputs read twice, a chain's earlier parts)."""
    if not _written_by_own_op(v, returned):
        return "an input is not written by an op of its own"
    if v in claimed:
        return "an input is a run of another merged Concat"
    if v in seen:
        return "an input is read twice"
    return None


def _extended(op: Operation, candidates: Container[Operation],
              by_inputs: dict[tuple[SSAValue, ...], Operation]) -> Operation | None:
    """The chain candidate `op` extends: the one whose result is its first input, else the one
    whose inputs are the longest proper prefix of its inputs (None: none). `by_inputs`: the first
    candidate with each tuple of inputs."""
    first = op.operands[0].owner
    if first in candidates:
        return first if _axis(first) == _axis(op) else None  # type: ignore[arg-type]
    ins = tuple(op.operands)
    for end in range(len(ins) - 1, 0, -1):  # the longest prefix first
        if (before := by_inputs.get(ins[:end])) is not None:
            return before if _axis(before) == _axis(op) else None
    return None


def _new_parts(op: Operation, before: Operation | None) -> list[SSAValue]:
    """The inputs chain member `op` adds to the one `before` it (all of them for the first)."""
    if before is None:
        return list(op.operands)
    return list(op.operands[1:] if op.operands[0] is before.results[0] else op.operands[len(before.operands):])


def _member_parts(chain: list[Operation]) -> list[list[SSAValue]]:
    """Each member's new parts, in chain order: the buffer's runs one after another."""
    return [_new_parts(op, chain[i - 1] if i else None) for i, op in enumerate(chain)]


def _parts_refusal(chain: list[Operation], parts: list[list[SSAValue]], returned: Container[SSAValue],
                   claimed: Container[SSAValue]) -> int | None:
    """The index of the first member of `chain` whose new `parts` (`_member_parts`) cannot be runs
    of the chain's buffer (None: every member's can)."""
    members, seen = set(chain), set()
    for i, new in enumerate(parts):
        shared = 0
        for v in new:
            if _part_refusal(v, seen, claimed, returned) is not None:
                return i
            seen.add(v)
            shared += any(use.operation not in members for use in v.uses)
        if shared > _MULTI_USE_INPUTS:
            return i
    return None


Chain = tuple[list[Operation], list[list[SSAValue]]]  # the members, each one's new parts (`_member_parts`)


def chains(concats: list[Operation], returned: set[SSAValue]) -> list[Chain]:
    """The Concat chains of `concats` (program order), each of two or more members, no value in two
    (module docstring)."""
    candidates = [op for op in concats if _own_refusal(op) is None and op.results[0] not in returned]
    candidate_set = set(candidates)
    by_inputs: dict[tuple[SSAValue, ...], Operation] = {}
    for op in candidates:
        by_inputs.setdefault(tuple(op.operands), op)
    found, claimed = [], set()
    for chain in extension_chains(candidates, lambda op: _extended(op, candidate_set, by_inputs)):
        parts = _member_parts(chain)
        # A prefix's parts are the parts' prefix; readers outside the chain are counted again without the members cut.
        while (cut := _parts_refusal(chain, parts, returned, claimed)) is not None:
            chain, parts = chain[:cut], parts[:cut]
        if len(chain) >= 2:
            found.append((chain, parts))
            claimed.update(v for new in parts for v in new)
    return found


def views(ops: list[Operation], returned: list[SSAValue], merge: bool = True) -> dict[SSAValue, tuple[SSAValue, int]]:
    """Each input of a Concat of `ops` merged in place -> (the buffer it is a run of, its byte
    offset in it): a lone Concat's result, or a chain's last result (its members' results too, at
    offset 0); `only_merge` true on those Concats and false on the others (address-assign decides
    again). `merge` false (address-assign's merge_concat=false): no Concat is merged."""
    out: dict[SSAValue, tuple[SSAValue, int]] = {}
    outputs = set(returned)
    concats = [op for op in ops if op.name == "tpu.Concat"]
    chained = set()
    for chain, parts in chains(concats, outputs) if merge else ():
        whole = chain[-1].results[0]
        _place(out, whole, [v for new in parts for v in new])
        out.update((op.results[0], (whole, 0)) for op in chain[:-1])
        for op in chain:
            op.attributes["only_merge"] = to_attr("bool", True)
        chained.update(chain)
    for op in concats:
        if op in chained:
            continue
        if not merge or refusal(op, outputs, out) is not None:
            if attrs_of(op)["only_merge"]:
                op.attributes["only_merge"] = to_attr("bool", False)
            continue
        op.attributes["only_merge"] = to_attr("bool", True)
        _place(out, op.results[0], op.operands)
    return out


def _place(out: dict[SSAValue, tuple[SSAValue, int]], whole: SSAValue, values: Sequence[SSAValue]) -> None:
    """`values` as runs of the buffer `whole`, one after another from its byte 0, into `out`."""
    offset = 0
    for v in values:
        out[v] = (whole, offset)
        offset += nbytes(v)


def check_in_place(op: Operation, address_of) -> None:
    """An only_merge Concat's inputs are its result's runs, in order (else codegen would move nothing
    while the result is not written): one error naming the first that is not."""
    at = address_of(op.results[0])
    for v in op.operands:
        if address_of(v) != at:
            raise TpudslError(f"codegen: {describe(op)} is only_merge, but its input from {describe(v.owner)} is at "
                              f"{address_of(v)}, not at {at} inside its result; run --address-assign again")
        at += nbytes(v)

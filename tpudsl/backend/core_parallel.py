"""`--core-parallel`: with several cores, weight-only `tpu.A16MatMul`s placed on the cores (TPU-MLIR's
CoreParallel pass, lib/Dialect/Tpu/Transforms/CoreParallel/CoreMatch.cpp; docs/backend.md "Several cores").

First TPU-MLIR's CommonMatch: A16MatMuls that read one value with the same operand and result
shapes, 2 up to the cores of them, run whole, branch k on core k, in one phase (`place_branches`).
Then its A16MatMulMatch on the others: part k (`<name>_core<k>`) reads the same input and columns
k N / cores .. (k + 1) N / cores of the weight [N, K'] (rows of the stored integers, two 4-bit
values per byte along K), of the scales and zero points [N, G] (one row per column: a group runs
along K, so a column cut never breaks one) and of the bias (its last axis), and runs on core k. A
Concat on the last axis joins the parts and keeps the op's name, so the Tpu interpreter's tensor
of that name is still there to compare (address-assign merges it in place, concat_in_place.py).
Where N is not a multiple of the cores, the op is left as it is (TPU-MLIR stops there:
UNREACHABLE_OP); so is one inside a tpu.Group (TPU-MLIR's isOpInBlock), one already placed, and one
whose weight, scales, zero points or bias are computed (TPU-MLIR: a computed bias is not implemented).

A placed op carries `core_id = k`, which codegen reads as "the whole op on core k, in one phase
with the placed ops next to it"; TPU-MLIR wraps such ops in a tpu.GroupParallel whose region k
runs on core k.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, TensorType, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tpudsl.backend.chips import Chip
from tpudsl.backend.layer_group import SECS_ATTRS, module_chip, set_secs
from tpudsl.backend.slicing import attrs_of, shape_of
from tpudsl.backend.tpu_mlir_stages import before_address_assign
from tpudsl.dialects.opdef import create, is_none, loc_name
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import WEIGHT_OP, TopModule, top_module_of


def splittable(op: Operation, cores: int) -> bool:
    """An A16MatMul alone in @main, not yet placed, whose constant operands the cores' column cuts divide."""
    if op.name != "tpu.A16MatMul" or op.parent_op().name == "tpu.Group" or "core_id" in op.attributes:
        return False
    constants = [v for v in op.operands[1:] if not is_none(v)]
    if any(v.owner.name != WEIGHT_OP for v in constants):  # type: ignore[union-attr]
        return False
    return attrs_of(op)["w_transpose"] and shape_of(op.operands[1])[0] % cores == 0


@dataclass
class _Cutter:
    """Each constant's column parts, made once (MatMuls sharing a weight share its parts)."""

    top: TopModule
    cores: int
    made: dict[tuple[SSAValue, int, int], SSAValue] = field(default_factory=dict)

    def part(self, value: SSAValue, axis: int, k: int, before: Operation) -> SSAValue:
        """Part k of `value`'s cores equal runs along `axis`, a new weight `<name>_core<k>` of its element type."""
        key = (value, axis, k)
        if key not in self.made:
            data = self.top.weight_of(value.owner)  # type: ignore[arg-type]
            size = data.shape[axis] // self.cores
            cut = np.ascontiguousarray(np.take(data, range(k * size, (k + 1) * size), axis=axis))
            name = f"{loc_name(value.owner)}_core{k}"  # type: ignore[arg-type]
            weight = self.top.add_weight(name, cut, before=before)
            shape = list(value.type.get_shape())  # type: ignore[attr-defined]
            shape[axis] = size
            # BF16 constants are stored as uint16 bits (docs/lowering.md): the type says what they are.
            element = value.type.element_type  # type: ignore[attr-defined]
            self.made[key] = Rewriter.replace_value_with_new_type(weight.results[0], TensorType(element, shape))
        return self.made[key]


def split(op: Operation, cutter: _Cutter, chip: Chip) -> Operation:
    """`op` as its cores' column parts joined by a Concat named as `op` (which it replaces)."""
    x, weight, scale, zp, bias = (*op.operands, *[None] * (5 - len(op.operands)))[:5]
    out = op.results[0].type
    rank, name, grouped = len(out.get_shape()), loc_name(op), "nsecs" in op.attributes  # type: ignore[attr-defined]
    parts = []
    for k in range(cutter.cores):
        operands = [x, cutter.part(weight, 0, k, op), cutter.part(scale, 0, k, op)]
        for v, axis in ((zp, 0), (bias, -1)):
            if v is not None:
                operands.append(v if is_none(v) else cutter.part(v, axis % len(shape_of(v)), k, op))
        shape = [*out.get_shape()[:-1], out.get_shape()[-1] // cutter.cores]  # type: ignore[attr-defined]
        part_type = TensorType(out.element_type, shape)  # type: ignore[attr-defined]
        part = create("tpu.A16MatMul", operands, [part_type], loc=f"{name}_core{k}")
        part.attributes.update(op.attributes, core_id=IntegerAttr(k, i64))
        Rewriter.insert_op(part, InsertPoint.before(op))
        parts.append(part)
    concat = create("tpu.Concat", [p.results[0] for p in parts], [out], attrs={"axis": rank - 1}, loc=op.location)
    Rewriter.replace_op(op, concat)
    if grouped:  # run after --layer-group (TPU-MLIR's place): the parts' slicing (op's) decided again here
        for new in (*parts, concat):
            reslice(new, chip)
    return concat


def reslice(op: Operation, chip: Chip) -> None:
    """Layer-group's slicing of an op alone decided again (a placed op: for its one core)."""
    from tpudsl.backend.layer_group.single import choose_secs

    for key in SECS_ATTRS:
        op.attributes.pop(key, None)
    set_secs(op, *choose_secs(op, chip))


def identical_branches(ops: list[Operation], cores: int) -> list[list[Operation]]:
    """TPU-MLIR's CommonMatch: the A16MatMuls `splittable` would cut that read one value and have the
    same operand and result shapes (isOpSameCalc), 2 up to `cores` of them, none of whose results
    is returned (checkForReturnOpUser)."""
    out = []
    for op in ops:
        for value in op.results:
            by_shapes: dict[tuple, list[Operation]] = {}
            for use in value.uses:
                user = use.operation
                if user.name == "tpu.A16MatMul" and user.operands[0] is value and splittable(user, 1) and \
                        not any(u.operation.name == "func.return" for r in user.results for u in r.uses):
                    key = tuple(str(v.type) for v in (*user.operands[1:], *user.results))
                    if user not in by_shapes.setdefault(key, []):
                        by_shapes[key].append(user)
            out += [same for same in by_shapes.values() if 2 <= len(same) <= cores]
    order = {o: i for i, o in enumerate(ops)}
    return [sorted(same, key=order.__getitem__) for same in out]  # uses come in no program order


def place_branches(same: list[Operation], chip: Chip) -> None:
    """Branch k whole on core k, each right after the first (its constants with it), so that codegen
    runs them in one phase."""
    at = same[0]
    for k, op in enumerate(same):
        op.attributes["core_id"] = IntegerAttr(k, i64)
        if "nsecs" in op.attributes:  # run after --layer-group: sliced for its one core now
            reslice(op, chip)
        if k:
            for v in op.operands[1:]:  # constants (splittable): moved up only, never past a reader
                if same[0].is_before_in_block(v.owner):  # type: ignore[arg-type]
                    v.owner.detach()  # type: ignore[union-attr]
                    Rewriter.insert_op(v.owner, InsertPoint.before(same[0]))  # type: ignore[arg-type]
            op.detach()
            Rewriter.insert_op(op, InsertPoint.after(at))
            at = op


def _erase_unused(top: TopModule, values: list[SSAValue]) -> None:
    """The split ops' constants no op reads any more, and their data."""
    for v in values:
        if isinstance(v.owner, Operation) and v.owner.name == WEIGHT_OP and not list(v.uses) and v.owner.parent:
            top.weights.pop(loc_name(v.owner), None)
            v.owner.detach()
            v.owner.erase()


@dataclass(frozen=True)
class CoreParallelPass(ModulePass):
    """Split ops to run on several cores: A16MatMuls placed on them, whole or by columns (TPU-MLIR's core-parallel)."""

    name = "core-parallel"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        chip = module_chip(op, self.name)  # module.cores within the chip's
        before_address_assign(op, self.name)
        if chip.cores < 2:
            return
        for same in identical_branches(list(op.walk()), chip.cores):
            place_branches(same, chip)
        todo = [o for o in op.walk() if splittable(o, chip.cores)]
        if not todo:
            return
        top = top_module_of(op)
        if top is None:
            raise TpudslError(f"{self.name}: the weight data is not loaded (the module names no readable weight file)")
        cutter = _Cutter(top, chip.cores)
        for mm in todo:
            constants = [v for v in mm.operands[1:] if not is_none(v)]
            split(mm, cutter, chip)
            _erase_unused(top, constants)

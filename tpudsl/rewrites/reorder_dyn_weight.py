"""ReorderDynWeight (the DragGAN fix): a Deconv filter computed at run time is made [oc, ic/g, *k] by a Permute.

ONNX ConvTranspose stores its filter input-channel first, [ic, oc/g, kh, kw]; the TPU kernels want
[oc, ic/g, kh, kw]. A static filter is transposed once when it is converted or lowered, but a filter
computed upstream (DragGAN modulates its weights per style vector) can only be transposed by an op
in the graph. `dynweight_reorderd` says which layout the filter operand has; shape inference, the
interpreter and the lowering all read it, so the rewrite does not change any value.

With group > 1, [ic, oc/g, ...] -> [oc, ic/g, ...] is a per-group transpose, not a swap of axes 0
and 1, so the pattern only fires for group == 1 (see docs/rewrites.md).

A dynamic Conv filter keeps its layout, which is already [oc, ic/g, kh, kw]; `SetWeightIsCoeff`
only makes `weight_is_coeff` say whether the filter is a weight (0 for a computed one, as TPU-MLIR
marks it), so that the lowering reads it as an activation instead of packing it as a coefficient."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from tpudsl.dialects.opdef import create
from tpudsl.rewrites.pattern import PatternPass, TopPattern, attrs_of, derived_loc, producer, set_attr, shape_of


def _swap_first_axes(rank: int) -> list[int]:
    return [1, 0, *range(2, rank)]


class ReorderDynWeight(TopPattern):
    ops = ("top.Deconv",)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        a = attrs_of(op)
        filt = op.operands[1]
        shape = shape_of(filt)
        if a["dynweight_reorderd"] or a["group"] != 1 or shape is None or producer(filt, "top.Weight"):
            return
        order = _swap_first_axes(len(shape))
        transpose = producer(filt, "top.Permute")
        if transpose is not None and attrs_of(transpose)["order"] == order and filt.has_one_use():
            # The exporter already transposed [oc, ic] into [ic, oc]: read the untransposed tensor.
            op.operands[1] = transpose.operands[0]
            rewriter.erase(transpose)
        else:
            swapped = (shape[1], shape[0], *shape[2:])
            permute = create(
                "top.Permute", [filt], [TensorType(filt.type.element_type, swapped)],
                {"order": order}, loc=derived_loc(op, "reorder_permute"),
            )
            rewriter.insert(permute, InsertPoint.before(op))
            op.operands[1] = permute.results[0]
        set_attr(op, "dynweight_reorderd", True, rewriter)


class SetWeightIsCoeff(TopPattern):
    """`weight_is_coeff` says whether the Conv filter is a `top.Weight`; it follows the filter
    (a filter folded into a weight later becomes a coefficient again)."""

    ops = ("top.Conv",)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        is_weight = int(producer(op.operands[1], "top.Weight") is not None)
        if attrs_of(op)["weight_is_coeff"] != is_weight:
            set_attr(op, "weight_is_coeff", is_weight, rewriter)


PATTERNS = (ReorderDynWeight, SetWeightIsCoeff)


@dataclass(frozen=True)
class ReorderDynWeightPass(PatternPass):
    name = "reorder-dyn-weight"
    patterns = PATTERNS

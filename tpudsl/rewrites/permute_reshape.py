"""Permute and Reshape cleanup: layout ops that do nothing, or two that can be one.

* Permute with order [0, 1, ..., n-1] is its input.
* Permute(Permute(x, p), q) is Permute(x, [p[i] for i in q]) (result axis i is input axis p[q[i]]).
* Reshape(Reshape(x)) is one Reshape of x; a Reshape to the input's own type is its input.
* Squeeze, Unsqueeze and Flatten are Reshapes with a static result type; making them Reshape lets
  the Reshape patterns (and the lowering) handle one op instead of four.

The Reshapes built here carry the explicit result shape in `shape` (no 0 or -1), because 0 copies
a dim of the input, which changes meaning when the input changes."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tpudsl.dialects.opdef import create
from tpudsl.rewrites.pattern import PatternPass, TopPattern, attrs_of, erase_if_dead, producer, replace, shape_of


class RemoveIdentityPermute(TopPattern):
    ops = ("top.Permute",)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        order = attrs_of(op)["order"]
        if order == list(range(len(order))) and op.operands[0].type == op.results[0].type:
            replace(rewriter, op, [], [op.operands[0]])


class ComposePermutes(TopPattern):
    ops = ("top.Permute",)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        inner = producer(op.operands[0], "top.Permute")
        if inner is None:
            return
        first, second = attrs_of(inner)["order"], attrs_of(op)["order"]
        composed = create(
            "top.Permute", [inner.operands[0]], [op.results[0].type],
            {"order": [first[i] for i in second]}, loc=op.location,
        )
        rewriter.replace(op, composed)
        erase_if_dead(rewriter, [inner.results[0]])


def _static_reshape(op: Operation, source: SSAValue) -> Operation | None:
    """A Reshape of `source` to `op`'s static result type, named like `op`; None if not static."""
    shape = shape_of(op.results[0])
    if shape is None:
        return None
    return create("top.Reshape", [source], [op.results[0].type], {"shape": list(shape)}, loc=op.location)


class MergeReshapes(TopPattern):
    ops = ("top.Reshape",)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        inner = producer(op.operands[0], "top.Reshape")
        if inner is None or len(op.operands) != 1:  # a shapeT operand decides the shape at run time
            return
        merged = _static_reshape(op, inner.operands[0])
        if merged is not None:
            rewriter.replace(op, merged)
            erase_if_dead(rewriter, [inner.results[0]])


class RemoveSameShapeReshape(TopPattern):
    ops = ("top.Reshape",)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.operands[0].type == op.results[0].type and shape_of(op.results[0]) is not None:
            replace(rewriter, op, [], [op.operands[0]])


class ShapeOpToReshape(TopPattern):
    ops = ("top.Squeeze", "top.Unsqueeze", "top.Flatten")

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        reshape = _static_reshape(op, op.operands[0])
        if reshape is not None:
            rewriter.replace(op, reshape)


PATTERNS = (RemoveIdentityPermute, ComposePermutes, RemoveSameShapeReshape, MergeReshapes, ShapeOpToReshape)


@dataclass(frozen=True)
class PermuteReshapeCleanupPass(PatternPass):
    name = "permute-reshape-cleanup"
    patterns = PATTERNS

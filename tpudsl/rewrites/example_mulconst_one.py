"""MulConst(x, 1.0) is x: the pattern docs/writing-a-pass.md builds, step by step."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter

from tpudsl.rewrites.pattern import PatternPass, TopPattern, attrs_of, replace


class FoldMulConstOne(TopPattern):
    ops = ("top.MulConst",)  # the table calls this pattern only for these ops

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        a = attrs_of(op)  # attribute values, spec defaults filled in
        if a["const_val"] == 1.0 and not a["do_relu"] and op.operands[0].type == op.results[0].type:
            replace(rewriter, op, [], [op.operands[0]])  # users now read x, unless y is a graph output


@dataclass(frozen=True)
class FoldMulConstOnePass(PatternPass):
    name = "fold-mulconst-one"
    patterns = (FoldMulConstOne,)

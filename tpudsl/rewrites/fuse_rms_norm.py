"""LLaMA's RMSNorm as torch exports it (LlamaRMSNorm, Qwen2RMSNorm, ...) -> top.RMSNorm, TPU-MLIR's
MergeToRMSNormPattern:

    r = 1 / Sqrt(AddConst(ReduceMean(Pow(x, 2) or Mul(x, x), last axis, keepdims), eps))
    Mul(x, r)                      -> RMSNorm(x, none; eps)
    Mul(RMSNorm(x, none), gamma)   -> RMSNorm(x, gamma)

1 / s is how the frontend leaves torch's rsqrt: Reciprocal (torch >= 2.0 exports Reciprocal) or a
reversed DivConst of 1 (older exporters' Div(1, s)). It is an RMSNorm only over the last axis
alone (what top.RMSNorm normalizes), with eps > 0 and every intermediate read only inside the
chain (a mean or a root read elsewhere must survive); gamma must hold one value per element of the
last axis, of the result's element type. As in fuse_layer_norm.py, each fused op takes the name of
the Mul it replaces, so the RMSNorm ends with the gamma Mul's name."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import NoneType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tpudsl.dialects.opdef import create
from tpudsl.rewrites.pattern import (
    PatternPass, TopPattern, attrs_of, derived_loc, fold_norm_parameter, inner_link, is_float_tensor, mean_axes,
    shape_of, squares,
)


def _plain_mul(op: Operation) -> bool:
    """A two-operand Mul without a fused Relu or a scalar form."""
    a = attrs_of(op)
    return len(op.operands) == 2 and not a["do_relu"] and not a["is_scalar"]


def _inverse_root(value: SSAValue) -> tuple[list[Operation], Operation] | None:
    """The ops 1 / Sqrt(AddConst(ReduceMean(...))) from `value` back to the ReduceMean, each read
    once, and that ReduceMean; None when `value` is not such a chain."""
    chain = []
    for names in (("top.Reciprocal", "top.DivConst"), ("top.Sqrt",), ("top.AddConst",), ("top.Reduce",)):
        op = value.owner
        if not isinstance(op, Operation) or op.name not in names or not inner_link(op, value.type):
            return None
        chain.append(op)
        value = op.operands[0]
    inverse, _, eps, mean = chain
    a = attrs_of(inverse)
    if a["const_val"] != 1.0 or (inverse.name == "top.DivConst" and not a["is_reverse"]):
        return None
    return (chain, mean) if attrs_of(eps)["const_val"] > 0 else None  # inner_link refused a fused Relu


class FuseRMSNorm(TopPattern):
    """Mul(x, 1 / sqrt(mean(x^2, last axis) + eps)) -> RMSNorm(x, none)."""

    ops = ("top.Mul",)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not _plain_mul(op) or not is_float_tensor(op.results[0]):
            return
        for x, inverse in (op.operands, tuple(reversed(op.operands))):
            if x.type != op.results[0].type:
                continue
            found = _inverse_root(inverse)
            if found is None:
                continue
            chain, mean = found
            square = mean.operands[0].owner
            rank = len(shape_of(x))
            if (mean_axes(mean, rank) == [rank - 1] and isinstance(square, Operation) and squares(square, x)
                    and square.results[0].has_one_use()):
                break
        else:
            return
        none = create("top.None", [], [NoneType()], loc=derived_loc(op, "none"))
        norm = create("top.RMSNorm", [x, none.results[0]], [x.type], {"eps": attrs_of(chain[2])["const_val"]},
                      loc=op.location)
        rewriter.replace(op, [none, norm], [norm.results[0]])
        for dead in (*chain, square):  # consumers first
            rewriter.erase(dead)


class FoldRMSNormGamma(TopPattern):
    """Mul(RMSNorm(x, none), gamma) -> RMSNorm(x, gamma), gamma of the last axis' size."""

    ops = ("top.Mul",)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if _plain_mul(op):
            fold_norm_parameter(op, rewriter, "top.RMSNorm", 1, lambda norm: shape_of(norm.results[0])[-1:])


PATTERNS = (FuseRMSNorm, FoldRMSNormGamma)


@dataclass(frozen=True)
class FuseRMSNormPass(PatternPass):
    name = "fuse-rms-norm"
    patterns = PATTERNS

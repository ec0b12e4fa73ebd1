"""The LayerNorm exporters spell out in ops (torch before opset 17) -> top.LayerNorm.

    mean = ReduceMean(x, axes A, keepdims)          d = Sub(x, mean)
    var = ReduceMean(Pow(d, 2) or Mul(d, d), axes A, keepdims)
    Div(d, Sqrt(AddConst(var, eps)))                -> LayerNorm(x, none, none; axis k, eps)
    Mul(LayerNorm(x, none, b), gamma)               -> LayerNorm(x, gamma, b)
    Add(LayerNorm(x, w, none), beta)                -> LayerNorm(x, w, beta)

It really is a LayerNorm only when both means run over the same axes A and those are the trailing
axes k..rank-1 (the normalized shape), keepdims holds, eps > 0, the squared value is d itself and
every intermediate is read only inside the chain (d by the square and the Div, the others once; a
mean or variance read elsewhere must survive). gamma and beta must have exactly the normalized
shape (what LayerNorm's weight and bias mean); the LayerNorm must have no other reader. As in the
GELU chain (fuse_activations.py), eps is matched as `--scalar-to-const` leaves it (AddConst). Each
fused op takes the name of the op it replaces, so the LayerNorm ends with the name of the chain's
last op."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import NoneType
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter

from tpudsl.dialects.opdef import create
from tpudsl.rewrites.pattern import (
    PatternPass, TopPattern, attrs_of, derived_loc, fold_norm_parameter, is_float_tensor, mean_axes, producer, shape_of,
    squares,
)


class FuseLayerNorm(TopPattern):
    """Div(x - mean(x), sqrt(mean((x - mean(x))^2) + eps)) -> LayerNorm(x, none, none)."""

    ops = ("top.Div",)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        a = attrs_of(op)
        if len(op.operands) != 2 or a["do_relu"] or a["is_reverse"] or not is_float_tensor(op.results[0]):
            return
        d, std_value = op.operands
        out_type = d.type
        std = producer(std_value, "top.Sqrt")
        eps_op = None if std is None else producer(std.operands[0], "top.AddConst")
        var = None if eps_op is None else producer(eps_op.operands[0], "top.Reduce")
        square = None if var is None else var.operands[0].owner
        sub = producer(d, "top.Sub")
        mean = None if sub is None else producer(sub.operands[1], "top.Reduce")
        if mean is None or op.results[0].type != out_type or square is None:
            return
        x = sub.operands[0]
        rank = len(shape_of(x))
        axes = mean_axes(mean, rank)
        sa = attrs_of(sub)
        if (
            axes is None or axes != list(range(rank - len(axes), rank)) or mean_axes(var, rank) != axes
            or mean.operands[0] != x or x.type != out_type or len(sub.operands) != 2
            or sa["do_relu"] or sa["is_reverse"] or sa.get("coeff") is not None
            or not squares(square, d) or attrs_of(eps_op)["do_relu"] or not attrs_of(eps_op)["const_val"] > 0
            or not all(op_ is not None and op_.results[0].has_one_use() for op_ in (mean, var, eps_op, std))
            or not square.results[0].has_one_use() or any(u.operation not in (square, op) for u in d.uses)
        ):
            return
        axis = axes[0]
        none = create("top.None", [], [NoneType()], loc=derived_loc(op, "none"))
        norm = create("top.LayerNorm", [x, none.results[0], none.results[0]], [out_type],
                      {"axis": axis, "eps": attrs_of(eps_op)["const_val"],
                       "normalized_shape": list(shape_of(x)[axis:])}, loc=op.location)
        rewriter.replace(op, [none, norm], [norm.results[0]])
        for dead in (std, eps_op, var, square, sub, mean):  # consumers first
            rewriter.erase(dead)


class FoldLayerNormAffine(TopPattern):
    """Mul(LayerNorm(x, none, b), gamma) -> LayerNorm(x, gamma, b); Add(LayerNorm(x, w, none), beta)
    -> LayerNorm(x, w, beta); gamma and beta of exactly the normalized shape."""

    ops = ("top.Mul", "top.Add")

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        a = attrs_of(op)
        if len(op.operands) != 2 or a["do_relu"] or a.get("coeff") is not None:
            return
        fold_norm_parameter(op, rewriter, "top.LayerNorm", 1 if op.name == "top.Mul" else 2,
                            lambda norm: tuple(attrs_of(norm)["normalized_shape"] or ()))


PATTERNS = (FuseLayerNorm, FoldLayerNormAffine)


@dataclass(frozen=True)
class FuseLayerNormPass(PatternPass):
    name = "fuse-layer-norm"
    patterns = PATTERNS

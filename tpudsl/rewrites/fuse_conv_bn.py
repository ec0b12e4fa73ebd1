"""Fold a per-channel affine op that follows a Conv into the Conv's filter and bias.

    y = BatchNorm(Conv(x, W, b))  with s = gamma / sqrt(var + eps)
      = Conv(x, W * s[oc], (b - mean) * s + beta)
    y = Scale(Conv(x, W, b), s, t)
      = Conv(x, W * s[oc], b * s + t)

The fused Conv produces the tensor the BatchNorm/Scale produced, so it takes that op's name;
its new filter and bias are new weights named `<name>_merged_to_weight` / `_merged_to_bias`
(the old ones stay in place for other users and are otherwise removed as dead). The Conv's filter
is [oc, ic/g, *k] for every group count, so scaling along axis 0 is exact. Only static filters
(top.Weight with data) are folded, and only when the Conv feeds nothing else."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter

from tpudsl.dialects.opdef import create, is_none, loc_name
from tpudsl.rewrites.pattern import PatternPass, TopPattern, attrs_of, erase_if_dead, producer

if TYPE_CHECKING:
    import numpy as np  # imported where the weights are folded: a run without weight data needs none


class _FoldIntoConv(TopPattern):
    """Shared rewrite: the op's per-channel (scale, shift) folded into the Conv feeding it."""

    needs_weights = True

    def channel_affine(self, op: Operation) -> tuple[np.ndarray, np.ndarray] | None:
        raise NotImplementedError

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        conv = producer(op.operands[0], "top.Conv")
        if conv is None or not conv.results[0].has_one_use() or attrs_of(conv)["do_relu"]:
            return
        filt = self.env.array(conv.operands[1])
        bias_value = conv.operands[2]
        bias = self.env.array(bias_value)
        affine = self.channel_affine(op)
        if filt is None or affine is None or (bias is None and not is_none(bias_value)):
            return
        import numpy as np

        scale, shift = (a.reshape(-1).astype(np.float64) for a in affine)
        oc = filt.shape[0]
        if scale.size != oc or shift.size != oc:
            return
        old_bias = np.zeros(oc) if bias is None else bias.reshape(-1).astype(np.float64)
        new_filter = (filt * scale.reshape(-1, *([1] * (filt.ndim - 1)))).astype(filt.dtype)
        new_bias = (old_bias * scale + shift).astype(filt.dtype)
        name = loc_name(op)
        element = conv.operands[1].type.element_type
        w = self.env.new_weight(f"{name}_merged_to_weight", new_filter, element)
        b = self.env.new_weight(f"{name}_merged_to_bias", new_bias, element)
        a = attrs_of(op)
        fused = create(
            "top.Conv", [conv.operands[0], w.results[0], b.results[0]], [op.results[0].type],
            {**conv.attributes, "do_relu": a["do_relu"], "relu_limit": a["relu_limit"]}, loc=op.location,
        )
        orphans = [*conv.operands[1:], *op.operands[1:]]
        rewriter.replace(op, [w, b, fused])
        rewriter.erase(conv)
        erase_if_dead(rewriter, orphans)


class FuseConvBatchNorm(_FoldIntoConv):
    ops = ("top.BatchNorm",)

    def channel_affine(self, op: Operation) -> tuple[np.ndarray, np.ndarray] | None:
        mean, var, gamma, beta = (self.env.array(v) for v in op.operands[1:5])
        if mean is None or var is None:
            return None
        if (gamma is None and not is_none(op.operands[3])) or (beta is None and not is_none(op.operands[4])):
            return None
        from tpudsl.dialects.geometry.batch_norm import batch_norm_affine  # numpy: with weight data only

        return batch_norm_affine(mean, var, gamma, beta, attrs_of(op)["epsilon"])


class FuseConvScale(_FoldIntoConv):
    ops = ("top.Scale",)

    def channel_affine(self, op: Operation) -> tuple[np.ndarray, np.ndarray] | None:
        scale, bias = self.env.array(op.operands[1]), self.env.array(op.operands[2])
        if scale is None or bias is None:
            return None
        return scale, bias


PATTERNS = (FuseConvBatchNorm, FuseConvScale)


@dataclass(frozen=True)
class FuseConvBnPass(PatternPass):
    name = "fuse-conv-bn"
    patterns = PATTERNS

"""Fuse an activation into the op that feeds it: Conv/MatMul/Add/BatchNorm + Relu -> `do_relu = true`.

Relu's `relu_limit` carries over; Clip(min = 0, max = m > 0) is Relu6-like and becomes
`relu_limit = m`. The fused op now produces the tensor users saw as the Relu's output, so it takes
the Relu's name (its own name disappears, as in TPU-MLIR). The producer must feed nothing else and
must not already have a fused activation."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter

from tpudsl.rewrites.pattern import PatternPass, TopPattern, attrs_of, set_attr

# TPU-MLIR's SupportFuseRelu ops that tpudsl's Top ops model (TopOps.td gives BatchNorm the trait too).
FUSES_RELU = ("top.Conv", "top.MatMul", "top.Add", "top.BatchNorm")


def _relu_limit(op: Operation) -> float | None:
    """The `relu_limit` equivalent to the activation `op` (-1: none), or None if it is no Relu."""
    a = attrs_of(op)
    if op.name == "top.Relu":
        return a["relu_limit"]
    if a["min"] == 0.0 and a["max"] > 0.0:
        return a["max"]
    return None


class FuseRelu(TopPattern):
    ops = ("top.Relu", "top.Clip")

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        source = op.operands[0]
        fusing = source.owner
        if (
            not isinstance(fusing, Operation) or fusing.name not in FUSES_RELU
            or not source.has_one_use() or attrs_of(fusing)["do_relu"]
            or source.type != op.results[0].type
        ):
            return
        limit = _relu_limit(op)
        if limit is None:
            return
        set_attr(fusing, "relu_limit", float(limit), rewriter)
        set_attr(fusing, "do_relu", True, rewriter)
        fusing.location = op.location
        rewriter.replace(op, [], [source])


PATTERNS = (FuseRelu,)


@dataclass(frozen=True)
class FuseReluPass(PatternPass):
    name = "fuse-relu"
    patterns = PATTERNS

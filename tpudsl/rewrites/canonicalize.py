"""Canonicalize Top: every rewrite family's patterns, run greedily to a fixed point.

The table's order matters only among the patterns of one op name: dead-op removal first (cheapest,
and nothing else should rewrite an op nobody reads), then folding (a computed weight makes the
other patterns moot), then the families. Weight-dependent patterns (folding, Conv+BatchNorm,
scalar weights) run only when the module's weights are known (see docs/rewrites.md)."""

from __future__ import annotations

from dataclasses import dataclass

from tpudsl.rewrites import (
    cast_cleanup,
    example_mulconst_one,
    fold_constants,
    fuse_conv_bn,
    fuse_matmul_bias,
    fuse_relu,
    permute_reshape,
    reorder_dyn_weight,
    scalar_to_const,
)
from tpudsl.rewrites.pattern import PatternPass

CANONICAL_PATTERNS = (
    *fold_constants.PATTERNS,
    *reorder_dyn_weight.PATTERNS,
    *cast_cleanup.PATTERNS,
    *permute_reshape.PATTERNS,
    *fuse_conv_bn.PATTERNS,
    *fuse_matmul_bias.PATTERNS,
    *fuse_relu.PATTERNS,
    *scalar_to_const.PATTERNS,
    example_mulconst_one.FoldMulConstOne,
)


@dataclass(frozen=True)
class CanonicalizePass(PatternPass):
    name = "canonicalize"
    patterns = CANONICAL_PATTERNS

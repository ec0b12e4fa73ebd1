"""struct-optimize and extra-optimize: TPU-MLIR's pattern groups around shape inference.

TPU-MLIR's model_transform runs `--struct-optimize --shape-infer --canonicalize --extra-optimize`.
Here each group is a choice of the rewrite families' patterns (docs/rewrites.md, Groups):

- struct-optimize runs before shape inference, when result types may still be unranked, so it
  holds the patterns that read neither shapes nor weight data and only rewire structure:
  identity and composed Permutes, no-op and lossless round-trip Casts.
- extra-optimize runs after shape inference and canonicalization: the fusions, which need static
  shapes (MatMul + bias) or weight data (Conv + BatchNorm/Scale), and Relu/Clip into its producer.

Both are subsets of --canonicalize, so after it they find nothing; they exist so that TPU-MLIR's
command lines mean the same here, and each also runs on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from tpudsl.rewrites import cast_cleanup, fuse_conv_bn, fuse_matmul_bias, fuse_relu, permute_reshape
from tpudsl.rewrites.pattern import PatternPass

STRUCT_PATTERNS = (
    permute_reshape.RemoveIdentityPermute,
    permute_reshape.ComposePermutes,
    *cast_cleanup.PATTERNS,
)
EXTRA_PATTERNS = (*fuse_conv_bn.PATTERNS, *fuse_matmul_bias.PATTERNS, *fuse_relu.PATTERNS)


@dataclass(frozen=True)
class StructOptimizePass(PatternPass):
    """Structural rewrites before shape inference: Permute chains, no-op and round-trip Casts."""

    name = "struct-optimize"
    patterns = STRUCT_PATTERNS


@dataclass(frozen=True)
class ExtraOptimizePass(PatternPass):
    """Fusions after shape inference: Conv + BatchNorm/Scale, MatMul + bias, Relu/Clip into its producer."""

    name = "extra-optimize"
    patterns = EXTRA_PATTERNS

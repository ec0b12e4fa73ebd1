"""`--weight-fold` (TPU-MLIR's pass of that name, run after --convert-top-to-tpu and
--canonicalize): a Tpu op whose operands are all weights (or `none`) is computed now, by the Tpu
interpreter's kernel for it, and becomes a `top.Weight` with the op's name and result type (an
INT8 result keeps its `!quant.uniform` type: the weight holds the stored integers, as the op's
result did); the weights it read go when nothing else reads them. Top's `fold-constants` does the
same at the Top level, with the Top table: this pass is its pattern with the Tpu table. The
layer-group ops (tpu.Group and what only lives in one) are never folded."""

from __future__ import annotations

from dataclasses import dataclass

from tpudsl.dialects import tpu
from tpudsl.rewrites.fold_constants import EraseDeadOp, FoldConstantOp
from tpudsl.rewrites.pattern import PatternPass

_GROUP_OPS = ("tpu.Group", "tpu.Load", "tpu.Store", "tpu.Yield")


class FoldTpuOp(FoldConstantOp):
    ops = tuple(spec.name for spec in tpu.SPECS if spec.name not in _GROUP_OPS)

    @staticmethod
    def kernels():
        from tpudsl.interp.kernels_tpu import ALL_KERNELS  # imported when folding is tried

        return ALL_KERNELS


class EraseDeadWeight(EraseDeadOp):
    ops = ("top.Weight",)


@dataclass(frozen=True)
class WeightFoldPass(PatternPass):
    """Fold Tpu ops whose operands are all weights into weights (TPU-MLIR's --weight-fold)."""

    name = "weight-fold"
    patterns = (EraseDeadWeight, FoldTpuOp)

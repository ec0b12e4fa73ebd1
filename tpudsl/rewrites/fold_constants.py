"""Constant folding and dead-op removal.

* An op whose operands are all weights (or `none`) is computed now, by the interpreter's kernel
  for it (`evaluate_op`), and replaced by `top.Weight`s. The weight takes the op's name: it holds
  the tensor users knew under that name (a second result gets `<name>_<i>`).
* An op nobody uses is removed, except `top.Input` (a model input stays an input even when the
  graph ignores it). Returned values are used by `func.return`, so they stay.

Folding needs the weight data; without it only dead ops are removed."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import NoneType, TensorType
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter

from tpudsl.dialects.opdef import SPECS, loc_name
from tpudsl.rewrites.pattern import PatternPass, TopPattern, producer, replace

KEEP_UNUSED = ("top.Input",)
NOT_FOLDED = ("top.Weight", "top.None", "top.Input")


class EraseDeadOp(TopPattern):
    ops = tuple(name for name in SPECS if name.startswith("top.") and name not in KEEP_UNUSED)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if all(r.first_use is None for r in op.results):
            rewriter.erase(op)


class FoldConstantOp(TopPattern):
    ops = tuple(name for name in SPECS if name.startswith("top.") and name not in NOT_FOLDED)
    needs_weights = True

    @staticmethod
    def kernels():
        """The kernel table the folding computes with (the Tpu level's: lowering/weight_fold.py)."""
        from tpudsl.interp import KERNELS  # imported when folding is tried, not at startup

        return KERNELS

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        import numpy as np  # with the interpreter: only when folding is tried (a module with weight data)

        from tpudsl.interp import evaluate_op

        kernels = self.kernels()
        if not op.operands or op.name not in kernels or not all(isinstance(r.type, TensorType) for r in op.results):
            return
        arrays = []
        for value in op.operands:
            if isinstance(value.type, NoneType) and producer(value, "top.None") is not None:
                arrays.append(None)
            elif (data := self.env.array(value)) is not None:
                arrays.append(data)
            else:
                return
        results = evaluate_op(op, arrays, kernels)
        name = loc_name(op) or "folded"
        weights = [
            self.env.new_weight(name if i == 0 else f"{name}_{i}", np.asarray(array), result.type.element_type)
            for i, (array, result) in enumerate(zip(results, op.results, strict=True))
        ]
        # Declines when a returned result would be renamed (its name taken by another weight).
        replace(rewriter, op, weights, [w.results[0] for w in weights])


PATTERNS = (EraseDeadOp, FoldConstantOp)


@dataclass(frozen=True)
class FoldConstantsPass(PatternPass):
    name = "fold-constants"
    patterns = PATTERNS

"""SmoothQuant (run_calibration --sq): activation outliers of a LayerNorm's output moved into the
weights of the MatMuls that read it.

    y = LN(x) @ W = (LN(x) / s) @ (diag(s) W),   s_j = max|X_j|^alpha / max|W_j|^(1 - alpha)

X_j is channel j (last axis) of the LayerNorm's output over every calibration sample, W_j row j
of the right operands of all its MatMuls (the largest |w| of the row over them). Dividing the
output by s is folded into the LayerNorm's gamma and beta (LN(x) = n(x) gamma + beta along the
last axis), diag(s) W into each MatMul's weight. A channel whose s is not a positive finite number
(X_j or W_j all zero) keeps s = 1 (TPU-MLIR maps inf and NaN to 1; its 0 would divide gamma by 0).

alpha is `--sq_alpha` when given (tpudsl's flag). Without it, as TPU-MLIR's `--sq` (which has no
such flag), s is searched per LayerNorm: alpha in 0, 0.05, ..., 1 and a clipping family (os+), the
least MSE of its INT8 fake-quantized MatMuls on the calibration samples' LayerNorm outputs, kept
from the maxima pass (smooth_quant_search.py; docs/quantization.md).

`plan_smoothing` finds the LayerNorms (and names those it skips, with the rule); `smooth` rewrites
them once the maxima are known (calibration.py collects them: `channels`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.ir import Operation

from tpudsl.dialects.opdef import SPECS, AttrView, is_none, loc_name, operand_shape
from tpudsl.ir.module import TopModule
from tpudsl.lowering.smooth_quant_search import SearchResult, search, smoothing_scales
from tpudsl.lowering.weight_rewrite import Skipped, rename, replace_weight, users, weight_array

SUFFIX = "smoothed"


@dataclass(frozen=True)
class Smoothed:
    layer_norm: str  # its loc name before the rewrite: the tensor whose maxima were collected
    matmuls: tuple[str, ...]
    scales: np.ndarray  # s_j, float64
    searched: SearchResult | None  # None: alpha was given


def plan_smoothing(mod: TopModule) -> tuple[list[Operation], list[Skipped]]:
    """The LayerNorms whose output feeds MatMuls and can be smoothed, and those that cannot."""
    planned: list[Operation] = []
    skipped: list[Skipped] = []
    for ln in [op for op in mod.module.walk() if op.name == "top.LayerNorm"]:
        readers = users(ln.results[0])
        if not any(op.name == "top.MatMul" and index == 0 for op, index in readers):
            continue
        rule = _rule(mod, ln, readers)
        if rule is None:
            planned.append(ln)
        else:
            skipped.append(Skipped(loc_name(ln), rule))
    return planned, skipped


def _rule(mod: TopModule, ln: Operation, readers: list[tuple[Operation, int]]) -> str | None:
    """Why `ln` cannot be smoothed, or None."""
    for op, index in readers:
        if op.name != "top.MatMul" or index != 0:
            return f"it also feeds {op.name} '{loc_name(op)}' (TPU-MLIR inserts a Mul for this case; not modelled)"
    shape = operand_shape(ln.results[0])
    if not shape or any(d < 0 for d in shape):
        return "its output has no static shape (run shape inference first)"
    k = shape[-1]
    axis = AttrView(ln.attributes, SPECS[ln.name])["axis"]
    if axis not in (-1, len(shape) - 1):
        return f"it normalizes from axis {axis}, not over the last axis alone, the channels smoothed"
    if len(ln.operands) < 2 or is_none(ln.operands[1]):
        return "it has no gamma to fold the scale into"
    for value in ln.operands[1:]:
        if is_none(value):
            continue
        array = weight_array(mod, value)
        if array is None or array.size != k:
            return f"its operand '{loc_name(value.owner)}' is not a weight of {k} values"
        if not value.has_one_use():
            return f"weight '{loc_name(value.owner)}' is shared with another op"
    for op, _ in readers:
        a = AttrView(op.attributes, SPECS[op.name])
        right = op.operands[1]
        w = weight_array(mod, right)
        if w is None or w.ndim != 2 or w.shape[0] != k:
            return f"MatMul '{loc_name(op)}' does not read a [{k}, N] weight"
        if a["right_transpose"] or a["left_transpose"] or a["hdim_is_batch"]:
            return f"MatMul '{loc_name(op)}' transposes an operand or batches heads"
        if not right.has_one_use():
            return f"weight '{loc_name(right.owner)}' is shared with another op"
    return None


def smooth(mod: TopModule, planned: list[Operation], act_max: dict[str, np.ndarray], alpha: float | None,
           kept: dict[str, list[np.ndarray]] | None = None) -> list[Smoothed]:
    """Smooth each planned LayerNorm with the maxima of its output (by its name), with `alpha`, or
    with the searched scales when alpha is None (`kept`: each one's output on every sample)."""
    done = []
    for ln in planned:
        name = loc_name(ln)
        matmuls = [op for op, _ in users(ln.results[0])]
        weights = [weight_array(mod, op.operands[1]) for op in matmuls]
        weight_max = np.max([np.abs(w).max(axis=1) for w in weights], axis=0)
        if alpha is None:
            found = search(kept[name], weights, act_max[name], weight_max)
            s = found.chosen.scales
        else:
            found, s = None, smoothing_scales(act_max[name], weight_max, alpha)
        done.append(Smoothed(name, tuple(loc_name(op) for op in matmuls), s, found))
        for index, value in enumerate(ln.operands[1:], start=1):
            if not is_none(value):
                array = weight_array(mod, value)
                replace_weight(mod, ln, index, array / s.reshape(array.shape), SUFFIX)
        for op, w in zip(matmuls, weights, strict=True):
            replace_weight(mod, op, 1, w * s[:, None], SUFFIX)
        rename(ln, SUFFIX)
    return done

"""Bias correction (run_calibration --bc), TPU-MLIR's `MixPrecSearcher.run_bias_correction`.

After the table, the module is lowered to INT8 with it and run next to the F32 module on a few
calibration samples. A layer whose INT8 output is on average systematically off by e_c per
output channel c (the mean over samples and positions of INT8 - F32; a filter whose weights all
round the same way shifts every output of the channel by the same amount) gets that shift
subtracted from its bias:

    b_c' = b_c + mean(F32_c - INT8_c)   (TPU-MLIR: `bias_float += (fp32_mean - int8_mean) / num_sample`)

INT8_c is the INT8 model's own output of the layer (activations quantized and propagated, every
layer's error included), dequantized, as TPU-MLIR measures it. The layers are taken in op order,
each measured with the corrections kept so far in place, and, as TPU-MLIR: only a layer whose mean
cosine to F32 is below `min_layer_cos` is tried, its correction kept only when the model's output
cosine does not drop, and the search stops once that cosine exceeds `expected_cos`
(cli/bias_correction.py runs the models). `plan_correction` finds the layers and names those it
skips with the rule; `measure` measures one; `correct` rewrites the biases. docs/quantization.md,
"--bc".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.ir import Operation

from tpudsl.dialects.opdef import SPECS, AttrView, is_none, loc_name, operand_shape
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import TopModule
from tpudsl.lowering.weight_rewrite import Skipped, rename, replace_weight, users, weight_array

SUFFIX = "corrected"
# The op -> the axis of its output its bias adds along (TPU-MLIR corrects top.Conv only; a MatMul
# with a bias is tpudsl's extension: the same correction along its last axis).
CHANNEL_AXIS = {"top.Conv": 1, "top.MatMul": -1}


@dataclass(frozen=True)
class Measured:
    """A planned layer over the samples: its mean cosine (INT8 vs F32) and mean(F32 - INT8) per channel."""

    op: str
    cosine: float
    shift: np.ndarray  # float64, one value per output channel


def plan_correction(mod: TopModule) -> tuple[list[Operation], list[Skipped]]:
    """The Conv/MatMul ops whose bias can be corrected, and those that cannot (with the rule)."""
    planned: list[Operation] = []
    skipped: list[Skipped] = []
    for op in [op for op in mod.module.walk() if op.name in CHANNEL_AXIS]:
        rule = _rule(mod, op)
        if rule is None:
            planned.append(op)
        else:
            skipped.append(Skipped(loc_name(op), rule))
    return planned, skipped


def _rule(mod: TopModule, op: Operation) -> str | None:
    """Why `op`'s bias cannot be corrected, or None."""
    if len(op.operands) < 3 or is_none(op.operands[2]):
        return "it has no bias to correct (as TPU-MLIR, none is added)"
    bias = op.operands[2]
    array = weight_array(mod, bias)
    if array is None:
        return f"its bias '{loc_name(bias.owner)}' is computed at run time, not a weight"
    if not bias.has_one_use():
        return f"weight '{loc_name(bias.owner)}' is shared with another op"
    a = AttrView(op.attributes, SPECS[op.name])
    if a["do_relu"]:
        return "its fused activation (do_relu) clips the output, so the output's mean error is not a bias shift"
    if op.name == "top.MatMul" and (a["output_transpose"] or a["hdim_is_batch"]):
        return "it transposes its output or batches heads: its bias is not along the output's last axis"
    shape = operand_shape(op.results[0])
    if not shape or any(d < 0 for d in shape) or array.size != shape[CHANNEL_AXIS[op.name]]:
        return f"its bias of {array.size} values is not one per channel of its output {shape}"
    if any(user.name == "func.return" for user, _ in users(op.results[0])):
        return "it is a model output, which keeps its name (a corrected value gets a derived one)"
    return None


def channel_mean(x: np.ndarray, axis: int) -> np.ndarray:
    """The float64 mean of `x` per index of `axis`, over every other axis."""
    x = np.moveaxis(np.asarray(x, dtype=np.float64), axis, 0)
    return x.reshape(x.shape[0], -1).mean(axis=1)


def measure(op: Operation, f32_runs: Sequence[Mapping[str, np.ndarray]], int8_runs: Sequence[Mapping[str, np.ndarray]],
            cosine: Callable[[np.ndarray, np.ndarray], float]) -> Measured:
    """The planned layer `op`'s mean `cosine` and per-channel mean(F32 - INT8) over the samples
    (each run: every tensor by name, the INT8 ones dequantized)."""
    name, axis = loc_name(op), CHANNEL_AXIS[op.name]
    if name not in int8_runs[0]:  # a lowering that renamed or fused it: nothing to compare with
        raise TpudslError(f"--bc: the INT8 module has no tensor '{name}' to compare with F32's")
    pairs = [(f[name], q[name]) for f, q in zip(f32_runs, int8_runs, strict=True)]
    shift = np.mean([channel_mean(f, axis) - channel_mean(q, axis) for f, q in pairs], axis=0)
    return Measured(name, float(np.mean([cosine(q, f) for f, q in pairs])), shift)


def correct(mod: TopModule, shifts: Mapping[str, np.ndarray], renamed: bool = True) -> None:
    """Add to the bias of each planned op named in `shifts` its shift (a new weight
    `<bias>_corrected`; the op renamed `<name>_corrected`, unless not `renamed`: a trial module
    lowered with the table of the names before the correction)."""
    for op in [op for op in mod.module.walk() if op.name in CHANNEL_AXIS and loc_name(op) in shifts]:
        bias = weight_array(mod, op.operands[2])
        replace_weight(mod, op, 2, bias.astype(np.float64) + shifts[loc_name(op)].reshape(bias.shape), SUFFIX)
        if renamed:
            rename(op, SUFFIX)

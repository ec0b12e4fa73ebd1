"""run_calibration --tune_num: TPU-MLIR's threshold tuning (`SimpleTuner`, kld_calibrator.py /
simple_tunner.py), on a few samples, after the table's thresholds are computed.

For a tensor t read by an op (the "consumer"), the candidates are 22 thresholds evenly spaced from
t's threshold up to its abs_max (TPU-MLIR's tune_steps 21); a tensor whose abs_max lies within 0.01
of its threshold (TPU-MLIR's absolute min_tuned_diff) is not tuned. A candidate's loss is the
consumer run alone (the Top kernel) on the tuning samples' float tensors with t fake-quantized at
the candidate (symmetric int8, scale th / 127, the f32 -> int8 Cast's rounding of
`interp/requant.py`, then back to float), against the consumer's float output:

    mean over samples of ||ref - out||_2 / ||ref||_1

The first candidate (the threshold itself) starts; a later one wins only with a strictly smaller
loss, so a tuned threshold is never worse than the table's by this measure, and never smaller.
Which (consumer, tensor) pairs are tuned and how several are combined is TPU-MLIR's rule (`pairs`):
ops in order, each tuning the operands no earlier op tuned, or its first operand again when all
were; a tensor tuned for several consumers keeps the largest of their choices.

Differences from TPU-MLIR (docs/quantization.md, "Threshold tuning"): the consumer's other float
operands are fake-quantized at their own (untuned) thresholds, where TPU-MLIR quantizes every input
at the tuned tensor's candidate; integer tensors (indices, shapes) are never quantized or tuned;
the loss reads every float result of a multi-result consumer. Weights stay float, which is what
TPU-MLIR computes (its `fake_quant_weight` rounds a copy of each weight and drops it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from tpudsl.dialects.opdef import loc_name, result_names
from tpudsl.interp import evaluate_op
from tpudsl.interp.module_interpreter import run_samples
from tpudsl.interp.requant import dequantize, quantize
from tpudsl.ir.module import TopModule
from tpudsl.lowering.calibration_table import TableEntry

TUNE_STEPS = 21  # TPU-MLIR's tune_steps: TUNE_STEPS + 1 candidates, the threshold and abs_max included
MIN_TUNED_DIFF = 0.01  # TPU-MLIR's min_tuned_diff: an absolute distance from the threshold to abs_max
UNQUANTIZED = ("top.Weight", "top.None")  # operands that are not activations: never fake-quantized


@dataclass(frozen=True)
class Tuned:
    """One (consumer, tensor) tuning: the thresholds tried, their losses, and the choice."""

    consumer: str
    tensor: str
    candidates: tuple[float, ...]
    losses: tuple[float, ...]

    @property
    def best(self) -> int:
        """The first candidate whose loss is the least (a later one wins only when strictly smaller)."""
        return int(np.argmin(self.losses))


def candidates(threshold: float, abs_max: float) -> list[float]:
    """TPU-MLIR's candidates: threshold + i (abs_max - threshold) / 21 for i = 0..21; none when
    abs_max is not more than 0.01 above the threshold."""
    diff = abs_max - threshold
    if diff <= MIN_TUNED_DIFF:
        return []
    step = diff / TUNE_STEPS
    return [threshold + step * i for i in range(TUNE_STEPS + 1)]


def fake_quant(x: np.ndarray, threshold: float) -> np.ndarray:
    """x through symmetric int8 at scale threshold / 127 and back, as the f32 -> int8 Cast stores it."""
    scale = threshold / 127.0
    return dequantize(quantize(x, scale), scale)


def distance(ref: Sequence[np.ndarray], out: Sequence[np.ndarray]) -> float:
    """||ref - out||_2 / ||ref||_1 over the results, in float64 (0 when both are all zero)."""
    r = np.concatenate([np.asarray(a, np.float64).ravel() for a in ref])
    o = np.concatenate([np.asarray(a, np.float64).ravel() for a in out])
    err, norm = float(np.linalg.norm(r - o)), float(np.abs(r).sum())
    return err / norm if norm > 0 else (0.0 if err == 0 else float("inf"))


def _operand_names(op) -> list[str | None]:
    """Each operand's tensor name, None for weights and `none` (not activations)."""
    names: list[str | None] = []
    for value in op.operands:
        owner = value.owner
        if getattr(owner, "name", None) in UNQUANTIZED or not hasattr(owner, "results"):
            names.append(None)
        else:
            names.append(result_names(owner)[value.index])
    return names


def pairs(mod: TopModule) -> list[tuple[object, str]]:
    """TPU-MLIR's (consumer op, tuned tensor) order (SimpleTuner.run): for each op but top.Input in
    order, its computed operands (pre_ops) not tuned yet, each once; when all were tuned already,
    its first one again. Ops reading only weights tune nothing."""
    tuned: set[str] = set()
    out: list[tuple[object, str]] = []
    for op in mod.main_func().body.block.ops:
        if not op.name.startswith("top.") or op.name in ("top.Input", *UNQUANTIZED):
            continue
        pre = [n for n in _operand_names(op) if n is not None]
        if not pre:
            continue
        todo = [pre[0]] if all(n in tuned for n in pre) else list(dict.fromkeys(n for n in pre if n not in tuned))
        out += [(op, n) for n in todo]
        tuned.update(todo)
    return out


def reference_runs(mod: TopModule, samples: Sequence[Mapping[str, np.ndarray]]) -> list[dict[str, np.ndarray]]:
    """Every tensor of each tuning sample's float run (TPU-MLIR's ref_activations)."""
    return run_samples(mod.module, mod.weights, samples, keep_all=True)[0]


def _is_float(x) -> bool:
    return np.asarray(x).dtype.kind == "f"


def consumer_losses(mod: TopModule, op, tensor: str, thresholds: Sequence[float],
                    refs: Sequence[Mapping[str, np.ndarray]], table: Mapping[str, TableEntry]) -> tuple[float, ...]:
    """For each of `thresholds`: the mean distance of `op` run on the samples' float tensors,
    `tensor` fake-quantized at that threshold and its other float operands at their table
    thresholds, to its float results. What does not depend on the threshold (the other operands,
    the float results) is made once per sample."""
    names = _operand_names(op)
    outputs = result_names(op)
    prepared = []  # per sample: its operands (the tuned slots left None), the tuned slots, the float results
    for ref in refs:
        operands: list[np.ndarray | None] = []
        slots = []
        for i, (value, name) in enumerate(zip(op.operands, names, strict=True)):
            if name is None:
                owner = value.owner
                operands.append(np.asarray(mod.weights[loc_name(owner)]) if owner.name == "top.Weight" else None)
                continue
            x = ref[name]
            if _is_float(x) and name in table:
                if name == tensor:
                    slots.append(i)
                    operands.append(None)
                    continue
                x = fake_quant(x, table[name].threshold)
            operands.append(x)
        floats = [i for i, n in enumerate(outputs) if _is_float(ref[n])]
        prepared.append((ref, operands, slots, floats))
    losses = []
    for threshold in thresholds:
        total = 0.0
        for ref, operands, slots, floats in prepared:
            quantized = fake_quant(ref[tensor], threshold) if slots else None
            got = evaluate_op(op, [quantized if i in slots else x for i, x in enumerate(operands)])
            total += distance([ref[outputs[i]] for i in floats], [got[i] for i in floats])
        losses.append(total / len(refs))
    return tuple(losses)


def tune(mod: TopModule, table: Mapping[str, TableEntry], samples: Sequence[Mapping[str, np.ndarray]],
         progress: Callable[[int], object] | None = None) -> tuple[dict[str, TableEntry], list[Tuned]]:
    """The table with its thresholds tuned on `samples` (model inputs by name), and every tuning
    done; `progress(1)` after each (consumer, tensor) pair (`pairs(mod)` of them)."""
    refs = reference_runs(mod, samples)
    tuned: dict[str, TableEntry] = dict(table)
    done: list[Tuned] = []
    for op, tensor in pairs(mod):
        entry = table.get(tensor)
        # An integer tensor (indices, shapes) is not quantized: nothing to tune.
        tried = candidates(entry.threshold, max(abs(entry.min), abs(entry.max))) \
            if entry is not None and _is_float(refs[0][tensor]) else []
        if tried:
            losses = consumer_losses(mod, op, tensor, tried, refs, table)
            done.append(Tuned(result_names(op)[0], tensor, tuple(tried), losses))
            best = tried[done[-1].best]
            if best > tuned[tensor].threshold:  # several consumers: the largest choice (TPU-MLIR's)
                tuned[tensor] = replace(tuned[tensor], threshold=best)
        if progress:
            progress(1)
    return tuned, done

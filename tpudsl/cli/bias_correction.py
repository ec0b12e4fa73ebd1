"""run_calibration --bc: the runs bias correction measures (tpudsl/lowering/bias_correction.py).

As TPU-MLIR's run_calibration, it comes after the table: the module is lowered to symmetric INT8
with it (as model_deploy lowers, for --processor) and run next to the F32 module on the first
--bc_inference_num calibration samples. When the INT8 model's output cosine already exceeds
--expected_cos nothing is corrected (TPU-MLIR stops there too). Otherwise, in op order, a planned
layer whose mean cosine is below --min_layer_cos is tried: its mean error per channel (measured
with the corrections kept so far) subtracted from its bias, the INT8 model lowered and run again,
the correction kept unless the output cosine drops (the cosine run_qtable scores: the outputs and
their Concat parts, or --global_compare_layers' tensors, cli/model_score.py), and the search stops once the output cosine
exceeds --expected_cos (TPU-MLIR's trial, revert and stop). The caller calibrates the corrected
module again. docs/quantization.md, "--bc".
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence

import numpy as np

from tpudsl.cli.compare import cosine_similarity
from tpudsl.cli.model_score import dequantized_runs, scoring_of
from tpudsl.cli.qtable_search import lowered_int8
from tpudsl.interp.module_interpreter import run_samples
from tpudsl.ir.module import TopModule
from tpudsl.lowering.bias_correction import correct, measure, plan_correction
from tpudsl.lowering.calibration_table import TableEntry, as_written

Runs = list[dict[str, np.ndarray]]


def correct_biases(args: argparse.Namespace, mod: TopModule, table: Mapping[str, TableEntry],
                   inputs: Sequence[Mapping[str, np.ndarray]]) -> tuple[int, list[str]]:
    """Bias correction of `mod` in place, measured with the calibration `table` (as its file holds
    it) on `inputs`; how many biases were corrected, and the lines that tell the user what was done
    and skipped."""
    planned, skipped = plan_correction(mod)
    notes = [f"--bc: {s}" for s in skipped]
    if not planned:
        return 0, ["--bc: 0 biases corrected (no Conv or MatMul has one to correct)", *notes]
    f32_runs = run_samples(mod.module, mod.weights, inputs, keep_all=True)[0]
    written = as_written(table)
    # every tensor is kept, so the search's scoring reads its tensors from these runs
    score = scoring_of(mod, args.global_compare_layers)
    reference = score.reference(f32_runs)

    def lowered(shifts: Mapping[str, np.ndarray]) -> TopModule:
        """The INT8 model with `shifts` added to the biases."""
        trial = mod.clone()  # lowering rewrites in place
        correct(trial, shifts, renamed=False)  # the table names the layers as they were
        return lowered_int8(trial, written, args.processor, asymmetric=False)

    def int8_runs(trial: TopModule) -> tuple[Runs, float]:
        """`trial`'s runs, dequantized, and output cosine."""
        runs = dequantized_runs(trial, inputs)
        return runs, score.cosine(runs, reference)

    uncorrected = lowered({})
    score.check_lowered(uncorrected)  # biases change no op: the same tensors in every trial
    runs, best = int8_runs(uncorrected)
    head = f"--bc: INT8 output cosine {best:.6f} on {len(inputs)} samples"
    if best > args.expected_cos:
        return 0, [f"{head} > --expected_cos {args.expected_cos:g}: 0 biases corrected", *notes]
    kept: dict[str, np.ndarray] = {}
    lines = []
    for op in planned:
        m = measure(op, f32_runs, runs, cosine_similarity)
        if m.cosine >= args.min_layer_cos:
            lines.append(f"'{m.op}' not corrected: layer cosine {m.cosine:.6f} >= --min_layer_cos "
                         f"{args.min_layer_cos:g}")
            continue
        trial_runs, cos = int8_runs(lowered({**kept, m.op: m.shift}))
        what = f"'{m.op}' (layer cosine {m.cosine:.6f}, largest shift {np.abs(m.shift).max():.3e})"
        if cos < best:  # TPU-MLIR's revert
            lines.append(f"{what} not corrected: the output cosine would drop to {cos:.6f}")
            continue
        kept[m.op], runs, best = m.shift, trial_runs, cos
        lines.append(f"{what} corrected: output cosine {cos:.6f}")
        if best > args.expected_cos:  # TPU-MLIR's stop
            lines.append(f"output cosine {best:.6f} > --expected_cos {args.expected_cos:g}: stopped")
            break
    correct(mod, kept)
    return len(kept), [f"{head}; {len(kept)} biases corrected", *(f"--bc: {line}" for line in lines), *notes]


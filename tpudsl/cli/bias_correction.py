"""run_calibration --bc: the runs bias correction measures (tpudsl/lowering/bias_correction.py).

As TPU-MLIR's run_calibration, it comes after the table: the module is lowered to symmetric INT8
with it (as model_deploy lowers, for --processor) and run next to the F32 module on the first
--bc_inference_num calibration samples. When the INT8 model's output cosine already exceeds
--expected_cos nothing is corrected (TPU-MLIR stops there too); otherwise each planned layer whose
mean cosine is below --min_layer_cos gets its mean error subtracted from its bias, and the caller
calibrates the corrected module again. docs/quantization.md, "--bc".
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Mapping, Sequence

import numpy as np

from tpudsl.cli.compare import cosine_similarity
from tpudsl.cli.qtable_search import lowered_int8, output_cosine
from tpudsl.interp import ModuleInterpreter
from tpudsl.interp.requant import dequantize
from tpudsl.ir.module import TopModule, write_atomically
from tpudsl.lowering.bias_correction import correct, measure, plan_correction
from tpudsl.lowering.top_to_tpu_int8 import int8_params


def correct_biases(args: argparse.Namespace, mod: TopModule, table: str,
                   inputs: Sequence[Mapping[str, np.ndarray]]) -> tuple[int, list[str]]:
    """Bias correction of `mod` in place, measured with the calibration table text `table` on
    `inputs`; how many biases were corrected, and the lines that tell the user what was done and
    skipped."""
    planned, skipped = plan_correction(mod)
    notes = [f"--bc: {s}" for s in skipped]
    if not planned:
        return 0, ["--bc: 0 biases corrected (no Conv or MatMul has one to correct)", *notes]
    f32_runs, outputs = _runs(mod, inputs)
    int8 = TopModule(mod.module.clone(), dict(mod.weights), mod.path)  # lowering rewrites in place
    with tempfile.TemporaryDirectory(prefix="bias_correction_") as tmp:
        path = os.path.join(tmp, "cali_table")
        write_atomically(path, lambda f: f.write(table.encode()))
        lowered_int8(int8, path, args.processor, asymmetric=False)
    params = int8_params(int8)
    int8_runs = [{k: dequantize(v, *params[k]) if k in params else v for k, v in run.items()}
                 for run in _runs(int8, inputs)[0]]
    cos = output_cosine(int8_runs, f32_runs, outputs)
    head = f"--bc: INT8 output cosine {cos:.6f} on {len(inputs)} samples"
    if cos > args.expected_cos:
        return 0, [f"{head} > --expected_cos {args.expected_cos:g}: 0 biases corrected", *notes]
    measured = measure(planned, f32_runs, int8_runs, cosine_similarity)
    done = correct(mod, planned, measured, args.min_layer_cos)
    kept = [m for m in measured if m not in done]
    return len(done), [f"{head}; {len(done)} biases corrected" + "".join(
        f"; '{m.op}' (layer cosine {m.cosine:.6f}, largest shift {np.abs(m.shift).max():.3e})" for m in done),
        *(f"--bc: '{m.op}' not corrected: layer cosine {m.cosine:.6f} >= --min_layer_cos {args.min_layer_cos:g}"
          for m in kept), *notes]


def _runs(mod: TopModule, inputs: Sequence[Mapping[str, np.ndarray]]) -> tuple[list[dict[str, np.ndarray]], list[str]]:
    """Every tensor of `mod` on each input, and the output names."""
    interp = ModuleInterpreter(mod.module, mod.weights)
    interp.init()
    try:
        return [interp.inference(x, keep_all=True) for x in inputs], interp.output_names
    finally:
        interp.deinit()

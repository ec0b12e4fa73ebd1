"""The comparison's cost against the two runs it compares (issue 9).

    .venv/bin/python bench/compare_time.py [--models resnet18,mobilenetv2,vit_layer] [--runs 3] [--no-write]

For each model of tests/models, runs model_transform in-process with a --test_input (random normal
input, seed 0) and reads the times it prints on stderr: the Top interpreter, onnxruntime, and the
comparison of every common tensor (with the noise scales). Then times `npz_tool compare` of the two
npz files model_transform wrote (reading both files included). Reports
compare / (interpreter + onnxruntime) for both, the median over --runs runs (wall times stretch
with the load of other jobs on a shared machine); the issue's target is below 0.5.
"""

from __future__ import annotations

import sys
from pathlib import Path

import _common  # noqa: E402

_common.pin_one_thread()

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402

# name -> (builder, keyword arguments): ViT-B/16's encoder layer is the transformer block at 197 x 768.
MODELS = {
    "resnet18": ("resnet18", {}),
    "mobilenetv2": ("mobilenetv2", {}),
    "vit_layer": ("transformer_block", {"seq_len": 197, "d_model": 768, "num_heads": 12, "d_ff": 3072, "gelu": "tanh"}),
}


def one_model(name: str, work: Path) -> dict[str, float]:
    import tests.models as builders
    from tpudsl.cli import npz_tool

    builder, kwargs = MODELS[name]
    model = getattr(builders, builder)(**kwargs)
    onnx.save(model, work / f"{name}.onnx")
    np.savez(work / f"{name}_in.npz", **builders.random_inputs(model, seed=0))
    _, steps = _common.transform_steps(["--model_name", name, "--model_def", str(work / f"{name}.onnx"),
                                        "--mlir", str(work / f"{name}.mlir"), "--test_input", str(work / f"{name}_in.npz")])
    top, ref = work / f"{name}_top_outputs.npz", work / f"{name}_ref_outputs.npz"
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()) as report:
        rc = npz_tool.run(["compare", str(top), str(ref)])
    npz_compare = time.perf_counter() - t0
    tensors = int(re.search(r"^(\d+) compared", report.getvalue(), re.M).group(1))
    elements = sum(a.size for a in np.load(top).values())
    return {"interp": steps["run the Top interpreter"], "ort": steps["run onnxruntime"],
            "compare": steps["compare Top with onnxruntime"], "npz_tool": npz_compare, "rc": rc,
            "tensors": tensors, "elements": elements}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="compare_time_"))
    names = args.models.split(",")
    load = os.getloadavg()
    rows = []
    for name in names:
        all_runs = [one_model(name, work) for _ in range(args.runs)]
        r = {k: statistics.median(run[k] for run in all_runs) for k in all_runs[0]}
        ratio = {k: statistics.median(run[k] / (run["interp"] + run["ort"]) for run in all_runs) for k in ("compare", "npz_tool")}
        rows.append(f"| {name} | {r['tensors']:.0f} | {r['elements'] / 1e6:.1f} M | {r['interp']:.2f} | {r['ort']:.2f} | "
                    f"{r['compare']:.2f} | **{ratio['compare']:.2f}** | {r['npz_tool']:.2f} | **{ratio['npz_tool']:.2f}** |"
                    + ("" if all(run["rc"] == 0 for run in all_runs) else " (compare FAILED)"))
        print(rows[-1], flush=True)
    text = "\n".join([
        "## compare_time: the comparison against the two runs it compares",
        "",
        f"Command: `.venv/bin/python bench/compare_time.py --models {args.models} --runs {args.runs}` ({time.strftime('%Y-%m-%d %H:%M')}; "
        f"one thread; `uptime` load average {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f} on {os.cpu_count()} cores shared with other jobs).",
        "Seconds (medians of the runs) from model_transform's own step times; npz_tool compare timed in-process,",
        "reading both files included. Ratios: median over the runs of compare / (interpreter + onnxruntime).",
        "",
        "| model | tensors compared | elements | interpreter s | onnxruntime s | compare s | compare / runs | npz_tool compare s | npz_tool / runs |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
        "",
        "Target (issue 9): compare / runs < 0.5 for both.",
    ])
    _common.publish("compare_time", text, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""model_transform of the ResNet-18-shaped model, end to end.

    .venv/bin/python bench/transform_time.py [--size 224] [--runs 3] [--no-write] [--profile]
    .venv/bin/python bench/transform_time.py --zoo [--models a,b] [--runs 3] [--no-write]

Writes tests/models resnet18 (width 64, 1000 classes) as an .onnx file, then runs the
model_transform command in-process (`tpudsl.cli.model_transform.run(argv)`, what `main` calls): ONNX import, shape
inference, canonicalize, the .mlir and the weight .npz written. Reports the median of --runs calls
(target <= 3 s), each into a fresh output directory, and one cold run in a subprocess
(Python start-up and imports included) for context.
With --profile (or when the target is missed) it cProfiles one call and prints the top costs
aggregated by tpudsl module, so the owner of the slow phase can be told.

--zoo: model_transform with --test_input (random normal input, seed 0) on each model of
bench/interp_zoo.py, the seconds of each step it prints (median over --runs), and the ratios of
the comparison step, and of everything that is not one of the two runs, to the two runs
(the Top interpreter and onnxruntime): what checking a model costs beyond running it twice.
"""

from __future__ import annotations

import sys
from pathlib import Path

import _common  # noqa: E402

_common.pin_one_thread()

import argparse  # noqa: E402
import collections  # noqa: E402
import cProfile  # noqa: E402
import os  # noqa: E402
import pstats  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import onnx  # noqa: E402


def transform_argv(onnx_path: Path, out_dir: Path, size: int) -> list[str]:
    return [
        "--model_name", "resnet18",
        "--model_def", str(onnx_path),
        "--input_shapes", f"[[1,3,{size},{size}]]",
        "--mlir", str(out_dir / "resnet18.mlir"),
    ]


def by_module(stats: pstats.Stats, top: int = 12) -> list[tuple[str, float]]:
    """Self time (tottime) summed per source module (tpudsl.x.y, xdsl.z, numpy, onnx, ...)."""
    acc: dict[str, float] = collections.defaultdict(float)
    for (filename, _, _), (_, _, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        name = filename
        for marker in ("/tpudsl/", "/site-packages/"):
            if marker in filename:
                rest = filename.split(marker, 1)[1]
                prefix = "tpudsl/" if marker == "/tpudsl/" else ""
                parts = (prefix + rest).split("/")
                name = "/".join(parts[:3]) if prefix else "/".join(parts[:2])
                break
        else:
            name = "builtins/other" if filename.startswith("~") or "<" in filename else filename.rsplit("/", 1)[-1]
        acc[name] += tottime
    return sorted(acc.items(), key=lambda kv: -kv[1])[:top]


# Column -> how model_transform's step line starts (the write step names the files).
STEPS = {"convert": "convert ONNX", "passes": "run struct-optimize", "load input": "load the test input",
         "interpreter": "run the Top interpreter", "onnxruntime": "run onnxruntime",
         "compare": "compare Top with onnxruntime", "write": "write "}
RUNS = ("interpreter", "onnxruntime")


def zoo_steps(name: str, model, work: Path, runs: int) -> dict[str, float]:
    """Median seconds of each model_transform step over `runs` calls with --test_input."""
    import numpy as np

    from tests.models import random_inputs

    onnx.save(model, work / f"{name}.onnx")
    np.savez(work / f"{name}_in.npz", **random_inputs(model, seed=0))
    per_step: dict[str, list[float]] = collections.defaultdict(list)
    for i in range(runs):
        rc, steps = _common.transform_steps([
            "--model_name", name, "--model_def", str(work / f"{name}.onnx"),
            "--mlir", str(work / f"{name}_{i}.mlir"), "--test_input", str(work / f"{name}_in.npz")])
        if rc != 0:
            raise SystemExit(f"model_transform of {name} exited with {rc}")
        for step, t in steps.items():
            per_step[next(col for col, start in STEPS.items() if step.startswith(start))].append(t)
    return {col: statistics.median(per_step[col]) for col in STEPS}


def zoo(args) -> int:
    from interp_zoo import zoo as builders

    work = Path(tempfile.mkdtemp(prefix="transform_time_zoo_"))
    names = [n for n in args.models.split(",") if n] or list(builders())
    load0 = os.getloadavg()
    rows = []
    for name in names:
        steps = zoo_steps(name, builders()[name](), work, args.runs)
        runs = sum(steps[r] for r in RUNS)
        total = sum(steps.values())
        rows.append(f"| {name} | {' | '.join(f'{t:.2f}' for t in steps.values())} | {total:.2f} | "
                    f"**{steps['compare'] / runs:.2f}** | **{(total - runs) / runs:.2f}** |")
        print(rows[-1], flush=True)
    text = "\n".join([
        "## transform_time_zoo: model_transform --test_input on the interp_zoo models",
        "",
        f"Command: `.venv/bin/python bench/transform_time.py --zoo --runs {args.runs}` ({time.strftime('%Y-%m-%d %H:%M')}; "
        f"one BLAS thread; machine shared with other jobs, `uptime` load average {load0[0]:.2f}, {load0[1]:.2f}, "
        f"{load0[2]:.2f} before, {os.getloadavg()[0]:.2f} after, on {os.cpu_count()} cores).",
        "Seconds per step (median over the runs, as model_transform prints them), then compare / (interpreter +",
        "onnxruntime) and everything else / (interpreter + onnxruntime).",
        "",
        f"| model | {' | '.join(STEPS)} | total | compare / runs | rest / runs |",
        "|---|" + "---|" * (len(STEPS) + 3),
        *rows,
    ])
    _common.publish("transform_time_zoo", text, write=not args.no_write and not args.models)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--zoo", action="store_true", help="model_transform --test_input on the interp_zoo models")
    ap.add_argument("--models", default="", help="with --zoo: a comma-separated subset")
    args = ap.parse_args()
    if args.zoo:
        return zoo(args)

    from tests.models import resnet18
    from tpudsl.cli import model_transform

    work = Path(tempfile.mkdtemp(prefix="transform_time_"))
    onnx_path = work / "resnet18.onnx"
    onnx.save(resnet18(input_size=args.size), onnx_path)

    times = []
    for i in range(args.runs):
        out = work / f"run{i}"
        out.mkdir()
        t0 = time.perf_counter()
        rc = model_transform.run(transform_argv(onnx_path, out, args.size))
        times.append(time.perf_counter() - t0)
        if rc not in (0, None):
            print(f"model_transform exited with {rc}", file=sys.stderr)
            return 1
        written = sorted(p.name for p in out.iterdir())
        if not any(n.endswith(".mlir") for n in written) or not any(n.endswith(".npz") for n in written):
            print(f"model_transform did not write the .mlir and the weight .npz: {written}", file=sys.stderr)
            return 1
    med = statistics.median(times)

    # Reference in the same process: onnxruntime's own "transform" — load the .onnx, run its graph
    # optimiser (constant folding, Conv+BatchNorm and other fusions) and write the optimised model.
    import onnxruntime as ort

    ref_times = []
    for i in range(args.runs):
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        opts.optimized_model_filepath = str(work / f"ort_optimized{i}.onnx")
        t0 = time.perf_counter()
        ort.InferenceSession(str(onnx_path), opts, providers=["CPUExecutionProvider"])
        ref_times.append(time.perf_counter() - t0)
    ref = statistics.median(ref_times)

    cold_out = work / "cold"
    cold_out.mkdir()
    t0 = time.perf_counter()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run([sys.executable, "-c", "import sys; from tpudsl.cli.model_transform import main; "
                           "main(sys.argv[1:])", *transform_argv(onnx_path, cold_out, args.size)],
                          cwd=_common.ROOT, capture_output=True, text=True)
    cold = time.perf_counter() - t0
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cold_cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    text = (work / "run0" / "resnet18.mlir").read_text()
    n_ops = sum(1 for line in text.splitlines() if "top." in line and "top.Weight" not in line)
    n_weights = text.count("top.Weight")

    verdict = "meets" if med <= 3.0 else "MISSES"
    lines = [
        "## transform_time: model_transform of the ResNet-18-shaped model",
        "",
        f"Command: `.venv/bin/python bench/transform_time.py --size {args.size} --runs {args.runs}`",
        f"({time.strftime('%Y-%m-%d %H:%M')}; machine shared with other jobs, load average {os.getloadavg()[0]:.1f}).",
        "",
        f"- in-process `model_transform.run` (ONNX import, shape inference, canonicalize, .mlir + weight .npz "
        f"written): runs {', '.join(f'{t:.2f}' for t in times)} s, **median {med:.2f} s** (target <= 3 s: {verdict})",
        f"- reference in the same process: onnxruntime session creation with ORT_ENABLE_EXTENDED writing the "
        f"optimised .onnx (load, fold, fuse, save): median {ref:.2f} s; **ratio model_transform/ort = {med / ref:.1f}**",
        f"- cold subprocess `python -c 'from tpudsl.cli.model_transform import main; main(...)'` (start-up and imports included): {cold:.2f} s wall, {cold_cpu:.2f} s CPU"
        + ("" if proc.returncode == 0 else f" (exit {proc.returncode}: {proc.stderr.strip().splitlines()[-1:]})"),
        f"- output: {n_ops} Top ops and {n_weights} top.Weight in the .mlir",
    ]
    if args.profile or med > 3.0:
        out = work / "profiled"
        out.mkdir()
        prof = cProfile.Profile()
        prof.enable()
        model_transform.run(transform_argv(onnx_path, out, args.size))
        prof.disable()
        stats = pstats.Stats(prof)
        stats.sort_stats("cumulative").print_stats(30)
        lines.append("- cProfile self time by module: " + ", ".join(f"{m} {t:.2f} s" for m, t in by_module(stats)))
    text = "\n".join(lines)
    _common.publish("transform_time", text, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())

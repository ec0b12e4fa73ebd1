"""Top interpreter vs onnxruntime on a ResNet-18-shaped model, in one process.

    .venv/bin/python bench/interp_vs_ort.py [--size 224] [--runs 5] [--no-write] [--profile]

Model: tests/models resnet18 (width 64, 1000 classes), input 1x3xSxS (224 by default), converted
with convert_onnx. onnxruntime runs with one intra-op thread (and one inter-op thread); numpy's
BLAS is pinned to one thread too, so both sides use one core. Runs alternate (interp, ort, ...)
after one warm-up each; the result is median(interp) / median(ort) over --runs runs (target <= 1.5).

Peak memory: tracemalloc's peak of traced allocations (numpy reports its data buffers to
tracemalloc) during one `inference` call, measured in a separate run because tracing slows
allocation; plus ru_maxrss before/after the whole bench (a high-water mark, so informative only
when it grows). Writes its section of bench/RESULTS.md unless --no-write.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common  # noqa: E402

_common.pin_one_thread()
_common.add_paths()

import argparse  # noqa: E402
import cProfile  # noqa: E402
import platform  # noqa: E402
import pstats  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--profile", action="store_true", help="cProfile one interpreter run, print top 25")
    args = ap.parse_args()

    import onnxruntime as ort

    from tests.models import resnet18
    from onnx_node.harness import convert_onnx, cosine, max_rel_err
    from tpudsl.interp import ModuleInterpreter

    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    model = resnet18(input_size=args.size)
    x = np.random.default_rng(0).standard_normal((1, 3, args.size, args.size)).astype(np.float32)

    t0 = time.perf_counter()
    top = convert_onnx()(model, "resnet18")
    t_convert = time.perf_counter() - t0
    interp = ModuleInterpreter(top.module, top.weights)
    t0 = time.perf_counter()
    interp.init()
    t_init = time.perf_counter() - t0

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    in_name = sess.get_inputs()[0].name
    out_name = sess.get_outputs()[0].name

    def run_interp():
        return interp.inference({in_name: x})[out_name]

    def run_ort():
        return sess.run([out_name], {in_name: x})[0]

    a, b = run_interp(), run_ort()  # warm-up, and a correctness check
    cos, rel = cosine(a, b), max_rel_err(a, b)
    ti, to = [], []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        run_interp()
        ti.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        run_ort()
        to.append(time.perf_counter() - t0)
    mi, mo = statistics.median(ti), statistics.median(to)
    ratio = mi / mo

    tracemalloc.start()
    tracemalloc.reset_peak()
    base, _ = tracemalloc.get_traced_memory()
    run_interp()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    peak_mib = (peak - base) / 2**20
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    weights_mib = sum(np.asarray(w).nbytes for w in top.weights.values()) / 2**20

    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        run_interp()
        prof.disable()
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
        pstats.Stats(prof).sort_stats("tottime").print_stats(15)
    interp.deinit()

    verdict = "meets" if ratio <= 1.5 else "MISSES"
    lines = [
        "## interp_vs_ort: Top interpreter vs onnxruntime, ResNet-18 shape",
        "",
        f"Command: `.venv/bin/python bench/interp_vs_ort.py --size {args.size} --runs {args.runs}`",
        f"({time.strftime('%Y-%m-%d %H:%M')}, {platform.machine()}, numpy {np.__version__}, onnxruntime "
        f"{ort.__version__}; one thread each: ORT intra_op=1, numpy BLAS pinned to 1).",
        "",
        f"- model: tests/models resnet18 width 64, input 1x3x{args.size}x{args.size}, {weights_mib:.1f} MiB weights",
        f"- interpreter median {mi * 1e3:.1f} ms, onnxruntime median {mo * 1e3:.1f} ms over {args.runs} runs",
        f"- **ratio interp/ort = {ratio:.2f}** (target <= 1.5: {verdict})",
        f"- outputs agree: cosine {cos:.7f}, max rel err {rel:.2e}",
        f"- interpreter peak memory during one inference (tracemalloc, numpy buffers): {peak_mib:.1f} MiB; "
        f"process ru_maxrss {rss0 / 1024:.0f} -> {rss1 / 1024:.0f} MiB",
        f"- convert_onnx {t_convert:.2f} s, interpreter init {t_init:.2f} s (not in the ratio)",
    ]
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        _common.write_section("interp_vs_ort", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

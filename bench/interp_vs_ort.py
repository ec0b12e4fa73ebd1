"""Top interpreter vs onnxruntime on a ResNet-18-shaped model, in one process.

    .venv/bin/python bench/interp_vs_ort.py [--size 224] [--runs 5] [--no-write] [--profile]

Model: tests/models resnet18 (width 64, 1000 classes), input 1x3xSxS (224 by default), converted
with convert_onnx. onnxruntime runs with one intra-op thread (and one inter-op thread); numpy's
BLAS is pinned to one thread too, so both sides use one core. Runs alternate (ort, interp, interp)
after one warm-up each; the result is median(interp) / median(ort) over --runs runs (target <= 1.5).
The interpreter runs two modules: convert_onnx's output after `canonicalize` (Conv+BatchNorm folded,
as model_transform writes it and as onnxruntime's own graph optimiser does) — the headline ratio —
and the raw convert_onnx output.

Peak memory: tracemalloc's peak of traced allocations (numpy reports its data buffers to
tracemalloc) during one `inference` call, measured in a separate run because tracing slows
allocation; plus ru_maxrss before/after the whole bench (a high-water mark, so informative only
when it grows). Writes its section of bench/RESULTS.md unless --no-write.
"""

from __future__ import annotations

import sys

import _common  # noqa: E402

_common.pin_one_thread()

import argparse  # noqa: E402
import cProfile  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import pstats  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402


def per_op_breakdown(top, model, xs, in_name, runs: int = 3) -> list[str]:
    """Interpreter time per op type (and the costliest op shapes) next to onnxruntime's per-op-type
    kernel time from its own profiler, both per inference."""
    import collections

    from tpudsl.interp import KERNELS, ModuleInterpreter

    acc: dict = {}
    it = ModuleInterpreter(top.module, top.weights, _common.timed_kernels(KERNELS, acc))
    it.init()
    it.inference({in_name: xs[0]})
    acc.clear()
    for i in range(runs):
        it.inference({in_name: xs[i % len(xs)]})
    it.deinit()
    by_op: dict = collections.defaultdict(float)
    for (name, _, _), t in acc.items():
        by_op[name] += t / runs
    sess = _common.ort_session(model, profile_prefix="/tmp/interp_vs_ort_ort_profile")
    sess.run(None, {in_name: xs[0]})
    for i in range(runs):
        sess.run(None, {in_name: xs[i % len(xs)]})
    ort_by = _common.ort_seconds_by_op(sess, runs + 1)
    fmt = lambda d: ", ".join(f"{k.removeprefix('top.')} {v * 1e3:.1f}" for k, v in sorted(d.items(), key=lambda kv: -kv[1])[:5])
    worst = sorted(acc.items(), key=lambda kv: -kv[1])[:5]
    return [
        f"- per op type, ms per inference: interpreter {fmt(by_op)}; onnxruntime (its profiler) {fmt(ort_by)}",
        "- costliest interpreter ops (out shape, filter shape, ms per inference): "
        + "; ".join(f"{n.removeprefix('top.')} {'x'.join(map(str, sh))} w{'x'.join(map(str, w))} {t / runs * 1e3:.1f}"
                    for (n, sh, w), t in worst),
    ]


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
    rng = np.random.default_rng(0)
    # a fresh input per run (the same for both engines), so no engine can reuse a previous result
    xs = [rng.standard_normal((1, 3, args.size, args.size)).astype(np.float32) for _ in range(args.runs + 1)]
    x = xs[0]

    t0 = time.perf_counter()
    top = convert_onnx(model, "resnet18")
    t_convert = time.perf_counter() - t0
    top_c = _common.top_module(model, "resnet18")
    interps = {}
    t_init = {}
    for key, t in (("raw", top), ("canon", top_c)):
        interps[key] = ModuleInterpreter(t.module, t.weights)
        t0 = time.perf_counter()
        interps[key].init()
        t_init[key] = time.perf_counter() - t0
    n_ops = {key: sum(1 for op in t.module.walk() if op.name.startswith("top.") and op.name not in
                      ("top.Weight", "top.None")) for key, t in (("raw", top), ("canon", top_c))}

    # High-water RSS growth of the first canonicalized inference, before onnxruntime allocates anything.
    rss_a = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    interps["canon"].inference({model.graph.input[0].name: xs[0]})
    rss_b = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

    sess = _common.ort_session(model)
    # context only: onnxruntime without its layout (NCHWc) and fusion passes
    sess_basic = _common.ort_session(model, basic=True)
    in_name = sess.get_inputs()[0].name
    out_name = sess.get_outputs()[0].name

    def run_interp(x=x, key="canon"):
        return interps[key].inference({in_name: x})[out_name]

    def run_ort(x=x):
        return sess.run([out_name], {in_name: x})[0]

    b = run_ort()
    cos, rel = 1.0, 0.0
    for key in interps:  # warm-up, and a correctness check
        a = run_interp(key=key)
        cos, rel = min(cos, cosine(a, b)), max(rel, max_rel_err(a, b))
    times: dict[str, list[float]] = {"raw": [], "canon": [], "ort": [], "ort_basic": []}
    sess_basic.run([out_name], {in_name: x})
    for i in range(args.runs):
        xi = xs[i + 1]
        t0 = time.perf_counter()
        sess_basic.run([out_name], {in_name: xi})
        times["ort_basic"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        b = run_ort(xi)
        times["ort"].append(time.perf_counter() - t0)
        for key in interps:
            t0 = time.perf_counter()
            a = run_interp(xi, key)
            times[key].append(time.perf_counter() - t0)
            cos, rel = min(cos, cosine(a, b)), max(rel, max_rel_err(a, b))
    med = {k: statistics.median(v) for k, v in times.items()}
    ratio = med["canon"] / med["ort"]
    ratio_raw = med["raw"] / med["ort"]
    paired = statistics.median(c / o for c, o in zip(times["canon"], times["ort"], strict=True))

    tracemalloc.start()
    peak_mib = {}
    for key in interps:
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        run_interp(key=key)
        _, peak = tracemalloc.get_traced_memory()
        peak_mib[key] = (peak - base) / 2**20
    tracemalloc.stop()
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    weights_mib = sum(np.asarray(w).nbytes for w in top.weights.values()) / 2**20

    hot = []
    if args.profile or ratio > 1.5:
        prof = cProfile.Profile()
        prof.enable()
        for xi in xs[:3]:
            run_interp(xi)
        prof.disable()
        stats = pstats.Stats(prof)
        if args.profile:
            stats.sort_stats("tottime").print_stats(15)
        total = sum(v[2] for v in stats.stats.values()) or 1.0  # type: ignore[attr-defined]
        rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:6]  # type: ignore[attr-defined]
        hot = [f"{fn.split('/tpudsl/')[-1] if '/tpudsl/' in fn else fn.rsplit('/', 1)[-1]}:{name} "
               f"{100 * v[2] / total:.0f}%" for (fn, _, name), v in rows]
    for it in interps.values():
        it.deinit()

    verdict = "meets" if ratio <= 1.5 else "MISSES"
    ms = {k: f"{v * 1e3:.1f} ms (min {min(times[k]) * 1e3:.1f})" for k, v in med.items()}
    lines = [
        "## interp_vs_ort: Top interpreter vs onnxruntime, ResNet-18 shape",
        "",
        f"Command: `.venv/bin/python bench/interp_vs_ort.py --size {args.size} --runs {args.runs}`",
        f"({time.strftime('%Y-%m-%d %H:%M')}, {platform.machine()}, numpy {np.__version__}, onnxruntime "
        f"{ort.__version__}; one thread each: ORT intra_op=1 with its default graph optimisations, numpy BLAS "
        f"pinned to 1; machine shared with other jobs, load average {os.getloadavg()[0]:.1f}).",
        "",
        f"- model: tests/models resnet18 width 64, input 1x3x{args.size}x{args.size}, {weights_mib:.1f} MiB weights",
        f"- onnxruntime median {ms['ort']} over {args.runs} alternating runs, a fresh input each run",
        f"- interpreter on the canonicalized module ({n_ops['canon']} Top ops, what model_transform writes): "
        f"median {ms['canon']}",
        f"- interpreter on the raw convert_onnx module ({n_ops['raw']} Top ops, BatchNorm not folded): median {ms['raw']}",
        f"- context: onnxruntime with ORT_ENABLE_BASIC only (no NCHWc layout, no fusions): median {ms['ort_basic']}; "
        f"interp/ort_basic = {med['canon'] / med['ort_basic']:.2f}",
        f"- **ratio interp/ort = {ratio:.2f}** canonicalized (median of per-run ratios {paired:.2f}; target <= 1.5: "
        f"{verdict}); raw module {ratio_raw:.2f}",
        f"- outputs agree on every run: min cosine {cos:.7f}, max rel err {rel:.2e}",
        f"- interpreter peak memory during one inference (tracemalloc peak of traced allocations = numpy buffers, "
        f"above the weights already loaded): {peak_mib['canon']:.1f} MiB canonicalized, {peak_mib['raw']:.1f} MiB raw; "
        f"ru_maxrss grew {(rss_b - rss_a) / 1024:.1f} MiB during the first inference (before onnxruntime was loaded; "
        f"process {rss0 / 1024:.0f} -> {rss1 / 1024:.0f} MiB overall, onnxruntime included)",
        f"- convert_onnx {t_convert:.2f} s, interpreter init {t_init['canon']:.2f} s (not in the ratio)",
    ]
    if ratio > 1.5 or args.profile:
        lines += per_op_breakdown(top_c, model, xs, in_name)
    if hot:
        lines.append("- cProfile self time of the canonicalized run (3 inferences; BLAS time counts in its caller): "
                     + ", ".join(hot))
    text = "\n".join(lines)
    _common.publish("interp_vs_ort", text, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Top interpreter vs onnxruntime on the architectures people export (issue 9), in one process.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/interp_zoo.py \
        [--runs 7] [--models a,b] [--profile] [--loaded] [--no-write]

(unset both where the machine sets them: they force OpenBLAS's Haswell kernels, 1.8x slower GEMMs
on an AVX-512 machine; the BLAS kernel in use is printed with the results.)

Models (tests/models, 224x224 inputs, fewer blocks than the originals so one inference takes
10-100 ms): ResNet-18, MobileNetV2, EfficientNet-B0-style (SiLU) and its HardSwish variant
(MobileNetV3-style), ConvNeXt-tiny-style, ShuffleNetV2-style, ViT-style, DenseNet-style and a
transformer encoder. Each is converted and canonicalized as model_transform writes it.

Default mode: one thread each (onnxruntime intra_op=1 with its default graph optimisations; the
interpreter with threads=1, i.e. BLAS limited to one thread by threadpoolctl). Runs alternate
(ort, interp) after a warm-up, a fresh input per run; the figure is median(interp) / median(ort)
per model and their geometric mean (targets: <= 1.5 geomean, no model above 2.5); beside it the
ratio of each side's best CPU time (process_time), which other jobs on a shared machine disturb least.

--loaded: default thread settings on both sides (onnxruntime's intra_op default, the
interpreter's default `threads`), with one competing busy process (target geomean <= 2); the
interpreter with numpy's BLAS on every core is shown too, for the collapse the default avoids
(timed in a second loop, so that its spinning BLAS threads disturb no other run). onnxruntime's
pool threads do not spin here (`session.intra_op.allow_spinning` 0; see _common.ort_session).

--profile: per model, interpreter time per op type (the kernel alone; "other" is the rest of the
inference: relu/cast finishing, freeing, the step loop) next to onnxruntime's per-op-type kernel
time from its own profiler, in ms per inference.

Peak MiB: tracemalloc's peak during one interpreter inference above what was allocated before
(numpy reports its buffers to tracemalloc), measured after the timed runs.
"""

from __future__ import annotations

import sys

import _common  # noqa: E402

import argparse  # noqa: E402
import collections  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402


def zoo() -> dict:
    from tests import models as m

    return {
        "resnet18": lambda: m.resnet18(),
        "mobilenetv2": lambda: m.mobilenetv2(),
        "efficientnet_silu": lambda: m.efficientnet(max_repeats=1),
        "efficientnet_hardswish": lambda: m.efficientnet(max_repeats=1, act="hardswish"),
        "convnext": lambda: m.convnext(depths=(1, 1, 2, 1)),
        "shufflenet": lambda: m.shufflenet(repeats=(2, 4, 2)),
        "vit": lambda: m.vit(depth=6),
        "densenet": lambda: m.densenet(blocks=(6, 12, 8)),
        "transformer": lambda: m.transformer_block(seq_len=128, d_model=256, num_heads=4, d_ff=1024),
    }


def interpreter(top, threads, kernels=None):
    from tpudsl.interp import KERNELS, ModuleInterpreter

    it = ModuleInterpreter(top.module, top.weights, kernels or KERNELS, threads=threads)
    it.init()
    return it


def compare(name, model, top, runs: int, interp_threads: dict, ort_threads: int) -> dict:
    """Alternating runs, ort then the interpreter (`interp`), then ort then each other interpreter
    setting in a second loop; medians and the worst agreement. The second loop keeps an
    every-core BLAS's threads, which spin for a while after each call, from running beside the
    timed ort and `interp` runs (and being counted in their process_time)."""
    from onnx_node.harness import cosine

    sess = _common.ort_session(model, ort_threads)
    in_name, out_name = sess.get_inputs()[0].name, sess.get_outputs()[0].name
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(shape).astype(np.float32) for _ in range(runs + 1)]
    its = {k: interpreter(top, t) for k, t in interp_threads.items()}
    times = {k: [] for k in ["ort", *its]}
    cpu = {k: [] for k in ["ort", *its]}
    cos = 1.0
    for loop in [["ort", "interp"], *(["ort2", k] for k in its if k != "interp")]:
        for i, x in enumerate(xs):
            for k in loop:
                t0, c0 = time.perf_counter(), time.process_time()
                if k.startswith("ort"):  # first in the loop: ref is this input's result below
                    ref = sess.run([out_name], {in_name: x})[0]
                else:
                    got = its[k].inference({in_name: x})[out_name]
                if i and k != "ort2":  # the first run is the warm-up; ort is timed in the first loop
                    times[k].append(time.perf_counter() - t0)
                    cpu[k].append(time.process_time() - c0)
                if not k.startswith("ort"):
                    cos = min(cos, cosine(got, ref))
    tracemalloc.start()  # numpy reports its buffers: the peak of one inference above the weights
    base, _ = tracemalloc.get_traced_memory()
    its["interp"].inference({in_name: xs[0]})
    peak = (tracemalloc.get_traced_memory()[1] - base) / 2**20
    tracemalloc.stop()
    for it in its.values():
        it.deinit()
    return {"peak": peak, "med": {k: statistics.median(v) for k, v in times.items()},
            "cpu": {k: min(v) for k, v in cpu.items()}, "cos": cos}


def profile(model, top, runs: int = 3) -> tuple[dict, dict, float]:
    """(interpreter ms per op type, onnxruntime ms per op type, interpreter ms per inference)."""
    from tpudsl.interp import KERNELS

    acc: dict = {}
    it = interpreter(top, 1, _common.timed_kernels(KERNELS, acc))
    sess = _common.ort_session(model, 1, profile_prefix="/tmp/interp_zoo_ort_profile")
    in_name = sess.get_inputs()[0].name
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    it.inference({in_name: x})
    acc.clear()
    t0 = time.perf_counter()
    for _ in range(runs):
        it.inference({in_name: x})
    total = (time.perf_counter() - t0) / runs * 1e3
    it.deinit()
    mine: dict = collections.defaultdict(float)
    for (op, _, _), t in acc.items():
        mine[op.removeprefix("top.")] += t / runs * 1e3
    mine["other"] = total - sum(mine.values())
    for _ in range(runs + 1):
        sess.run(None, {in_name: x})
    theirs = {op: s * 1e3 for op, s in _common.ort_seconds_by_op(sess, runs + 1).items()}
    return dict(mine), theirs, total


def top_of(d: dict, n: int = 7) -> str:
    return ", ".join(f"{k} {v:.1f}" for k, v in sorted(d.items(), key=lambda kv: -kv[1])[:n])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--models", default="", help="comma-separated subset")
    ap.add_argument("--profile", action="store_true", help="per-op-type time table per model")
    ap.add_argument("--loaded", action="store_true", help="default threads on both sides, one busy competitor")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    import onnxruntime as ort
    from tpudsl.interp.threads import default_threads

    builders = zoo()
    names = [n for n in args.models.split(",") if n] or list(builders)
    busy = None
    if args.loaded:
        busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        interp_threads = {"interp": None, "interp_all_cores": os.cpu_count()}
        ort_threads = 0
    else:
        interp_threads = {"interp": 1}
        ort_threads = 1
    rows, ratios, cpu_ratios, profiles = [], [], [], []
    load0 = os.getloadavg()[0]
    try:
        for name in names:
            model = builders[name]()
            top = _common.top_module(model, name)
            r = compare(name, model, top, args.runs, interp_threads, ort_threads)
            med, cpu = r["med"], r["cpu"]
            ratio = med["interp"] / med["ort"]
            ratios.append(ratio)
            cpu_ratios.append(cpu["interp"] / cpu["ort"])
            extra = (f" | {med['interp_all_cores'] * 1e3:.1f} ({med['interp_all_cores'] / med['ort']:.2f}x)"
                     if "interp_all_cores" in med else "")
            rows.append(f"| {name} | {med['ort'] * 1e3:.1f} | {med['interp'] * 1e3:.1f} | **{ratio:.2f}** | "
                        f"{cpu_ratios[-1]:.2f} | {r['cos']:.6f} | {r['peak']:.1f}{extra} |")
            print(rows[-1], flush=True)
            if args.profile:
                mine, theirs, total = profile(model, top)
                profiles.append(f"- {name} ({total:.1f} ms): interpreter {top_of(mine)}; onnxruntime {top_of(theirs)}")
                print(profiles[-1], flush=True)
    finally:
        if busy is not None:
            busy.kill()
            busy.wait()
    load1 = os.getloadavg()[0]
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
    geo_cpu = math.exp(sum(map(math.log, cpu_ratios)) / len(cpu_ratios))
    blas = _common.blas_kernels()
    if args.loaded:
        key = "interp_zoo_loaded"
        head = (f"Default thread settings: onnxruntime intra_op default, interpreter `threads` default "
                f"({default_threads()} here), one competing busy process; last column: interpreter with BLAS on "
                f"all {os.cpu_count()} cores. Target geomean <= 2.")
        cols = ("| model | ort ms | interp ms | ratio | best CPU-time ratio | min cosine | peak MiB | interp all cores ms (ratio) |\n"
                "|---|---|---|---|---|---|---|---|")
        verdict = "meets" if geo <= 2 else "MISSES"
    else:
        key = "interp_zoo"
        head = "One thread each (onnxruntime intra_op=1, interpreter threads=1). Targets: geomean <= 1.5, no model above 2.5."
        cols = "| model | ort ms | interp ms | ratio | best CPU-time ratio | min cosine | peak MiB |\n|---|---|---|---|---|---|---|"
        verdict = "meets" if geo <= 1.5 and max(ratios) <= 2.5 else "MISSES"
    lines = [
        f"## {key}: Top interpreter vs onnxruntime, exported architectures",
        "",
        f"Command: `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/interp_zoo.py --runs {args.runs}"
        f"{' --loaded' if args.loaded else ''}` "
        f"({time.strftime('%Y-%m-%d %H:%M')}, numpy {np.__version__} ({blas}), onnxruntime {ort.__version__}; "
        f"machine shared with other jobs, load average {load0:.1f} before, {load1:.1f} after on {os.cpu_count()} cores).",
        head,
        "",
        cols,
        *rows,
        "",
        f"- **geometric mean {geo:.2f}**, worst {max(ratios):.2f} ({verdict}); of the CPU-time ratios "
        f"(best process_time of each side: the least disturbed by the other jobs) {geo_cpu:.2f}, worst "
        f"{max(cpu_ratios):.2f}",
        *profiles,
    ]
    text = "\n".join(lines)
    _common.publish(key, text, write=not args.no_write and len(names) == len(builders))
    return 0


if __name__ == "__main__":
    sys.exit(main())

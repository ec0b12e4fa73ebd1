"""Per conv layer, inside an interp_zoo inference: the Conv kernel of a base revision vs this tree's.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/interp_conv_ab.py --base REV \
        [--models mobilenetv2,efficientnet_silu,...] [--runs 9] [--all-convs] [--no-write]

Every top.Conv of the model runs both kernels (the base one read with interp_ab's finder), on the
same input, in the order base-tree on even inferences and tree-base on odd ones (whichever runs
second finds the input warmer), and the inference continues with the tree's result. So each layer
sees the caches a real inference leaves it, and a loaded machine disturbs both sides alike
(interp_ab's whole-model figure mixes every kernel; this one isolates a layer kind). Figure: the
median CPU time (process_time) of each layer shape, summed over the model's depthwise layers
(`--all-convs`: every conv), base / tree.
"""

from __future__ import annotations

import sys

import _common  # noqa: E402

import argparse  # noqa: E402
import collections  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

MODELS = "mobilenetv2,efficientnet_silu,shufflenet,convnext"


def measure(model, top, base, tree, runs: int) -> dict:
    """{(input shape, filter shape, strides): {"base": [s], "tree": [s]}} over `runs` inferences."""
    from tpudsl.interp import KERNELS, ModuleInterpreter
    from tpudsl.interp.kernel import Kernel

    times: dict = collections.defaultdict(lambda: {"base": [], "tree": []})
    flip = [False]

    def prepare(static, a):
        sides = [("base", base.prepare(static, a)), ("tree", tree.prepare(static, a))]

        def run(ins, a):
            key = (tuple(ins[0].shape), tuple(ins[1].shape), tuple(a.get("strides") or ()))
            results = {}
            for name, r in reversed(sides) if flip[0] else sides:
                c0 = time.process_time()
                results[name] = r(ins, a)
                times[key][name].append(time.process_time() - c0)
            return results["tree"]

        return run

    table = {**KERNELS, "top.Conv": Kernel(tree.run, prepare, tree.fuses_relu)}
    it = ModuleInterpreter(top.module, top.weights, table, threads=1)
    it.init()
    name = model.graph.input[0].name
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    for i in range(runs):
        flip[0] = bool(i % 2)
        it.inference({name: np.random.default_rng(i).standard_normal(shape).astype(np.float32)})
    it.deinit()
    return times


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="git revision whose Conv kernel is the reference")
    ap.add_argument("--models", default=MODELS)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--all-convs", action="store_true", help="every conv, not only the depthwise ones")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    import interp_ab
    import interp_zoo
    from tpudsl.interp import KERNELS

    rev, base = interp_ab.base_conv(args.base)
    load0 = os.getloadavg()[0]
    rows, totals = [], []
    for name in args.models.split(","):
        model = interp_zoo.zoo()[name]()
        times = measure(model, _common.top_module(model, name), base, KERNELS["top.Conv"], args.runs)
        sums = {"base": 0.0, "tree": 0.0}
        for (x_shape, w_shape, strides), t in times.items():
            if not args.all_convs and w_shape[1] != 1:
                continue
            med = {k: statistics.median(v) * 1e3 for k, v in t.items()}
            for k in sums:
                sums[k] += med[k]
            rows.append(f"| {name} | {list(x_shape[1:])} | {'x'.join(map(str, w_shape[2:]))} /{strides[0] if strides else 1} "
                        f"| {med['base']:.3f} | {med['tree']:.3f} | {med['base'] / med['tree']:.2f} |")
            print(rows[-1], flush=True)
        totals.append(f"- {name}: {sums['base']:.2f} -> {sums['tree']:.2f} ms, **{sums['base'] / sums['tree']:.2f}x**")
        print(totals[-1], flush=True)
    load1 = os.getloadavg()[0]
    kind = "conv" if args.all_convs else "depthwise conv"
    text = "\n".join([
        f"## interp_conv_ab: Conv kernel of a base revision vs this tree, per {kind} layer inside the inference",
        "",
        f"Command: `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/interp_conv_ab.py --base {rev} "
        f"--runs {args.runs}{' --all-convs' if args.all_convs else ''}` ({time.strftime('%Y-%m-%d %H:%M')}; one BLAS "
        f"thread; load average {load0:.1f} before, {load1:.1f} after on {os.cpu_count()} cores). Median CPU ms per layer "
        "(process_time; a shape that occurs several times is timed once per occurrence), both kernels on the same "
        "input, alternating order; speed-up = base / tree.",
        "",
        "| model | input [c, *size] | kernel /stride | base ms | tree ms | speed-up |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        f"Sum over the {kind} layers of each model:",
        *totals,
    ])
    _common.publish("interp_conv_ab", text, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())

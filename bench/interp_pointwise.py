"""The pointwise (1x1, group 1) convs of the interp_zoo models: the Conv kernel of a base revision and this
tree's against the bare GEMM they are built on and against onnxruntime's Conv on the same layer.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/interp_pointwise.py --base REV \
        [--models mobilenetv2,...] [--runs 15] [--no-write]

Each 1x1 conv's input is captured during one inference; then, per layer, in one process and alternating:
the base kernel, this tree's kernel (both prepared as in an inference, bias and fused relu included), the
bare GEMM `np.matmul(W [oc, ic], x [ic, h*w])` on a contiguous input (no bias, no relu: the floor of any
numpy kernel), and an onnxruntime session of the single Conv (+ Relu/Clip, which it fuses), one thread
each. Figure: best CPU time per layer, summed over the model's pointwise layers.
"""

from __future__ import annotations

import sys

import _common  # noqa: E402

import argparse  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

MODELS = "mobilenetv2,efficientnet_silu,shufflenet,resnet18"


def capture(model, top) -> list:
    """[(x, static operands, attrs)] of every 1x1 group-1 conv of one inference."""
    return [(ins[0], static, a) for _, a, _, ins, static in _common.record_calls(
        model, top, ["top.Conv"], lambda _, ins, a: all(k == 1 for k in ins[1].shape[2:]) and int(a.get("group", 1)) == 1)]


def measure(layers, base, tree, runs: int) -> dict:
    from threadpoolctl import threadpool_limits

    sums = dict.fromkeys(("base", "tree", "gemm", "ort"), 0.0)
    with threadpool_limits(1):
        for x, static, a in layers:
            w, b = static[1], static[2] if len(static) > 2 else None
            ins = [x, w, b]
            strides = tuple(a.get("strides") or [1] * (x.ndim - 2))
            w2 = np.ascontiguousarray(w.reshape(w.shape[0], -1))
            xs = np.ascontiguousarray(x[(0, slice(None), *(slice(None, None, s) for s in strides))]).reshape(x.shape[1], -1)
            sess = _common.ort_conv(x, w, b, a)
            sides = {"base": lambda r=base.prepare(static, a): r(ins, a),
                     "tree": lambda r=tree.prepare(static, a): r(ins, a),
                     "gemm": lambda: np.matmul(w2, xs),
                     "ort": lambda: sess.run(None, {"x": x})}
            best = dict.fromkeys(sides, float("inf"))
            for i in range(runs):
                for name, f in (reversed(sides.items()) if i % 2 else sides.items()):
                    c0 = time.process_time()
                    f()
                    best[name] = min(best[name], time.process_time() - c0)
            for name in sums:
                sums[name] += best[name] * 1e3
    return sums


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="git revision whose Conv kernel is compared")
    ap.add_argument("--models", default=MODELS)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    import interp_ab
    import interp_zoo
    from tpudsl.interp import KERNELS

    rev, base = interp_ab.base_conv(args.base)
    load0 = os.getloadavg()[0]
    rows = []
    for name in args.models.split(","):
        model = interp_zoo.zoo()[name]()
        layers = capture(model, _common.top_module(model, name))
        s = measure(layers, base, KERNELS["top.Conv"], args.runs)
        rows.append(f"| {name} | {len(layers)} | {s['base']:.2f} | {s['tree']:.2f} | {s['gemm']:.2f} | {s['ort']:.2f} "
                    f"| {s['base'] / s['gemm']:.2f} | {s['tree'] / s['gemm']:.2f} | {s['gemm'] / s['ort']:.2f} |")
        print(rows[-1], flush=True)
    load1 = os.getloadavg()[0]
    text = "\n".join([
        "## interp_pointwise: 1x1 convs, the kernels against the bare GEMM and onnxruntime",
        "",
        f"Command: `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/interp_pointwise.py --base {rev} "
        f"--runs {args.runs}` ({time.strftime('%Y-%m-%d %H:%M')}; one thread each; load average {load0:.1f} before, "
        f"{load1:.1f} after on {os.cpu_count()} cores). Best CPU ms per layer summed over the model's 1x1 group-1 convs, "
        "all four on the same input in one process, alternating.",
        "",
        "| model | layers | base kernel | tree kernel | bare GEMM | onnxruntime | base / GEMM | tree / GEMM | GEMM / onnxruntime |",
        "|---|---|---|---|---|---|---|---|---|",
        *rows,
    ])
    _common.publish("interp_pointwise", text, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The depthwise convs of the interp_zoo models, one layer at a time, against onnxruntime running that
single Conv node (same shape, stride, pads, group, bias, + Relu/Clip for the fused relu).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/interp_dw_layers.py \
        [--base REV] [--models mobilenetv2,...] [--runs 21] [--no-write]

Each depthwise conv's input is captured during one inference (a shape that occurs several times is
measured once); then, per layer, in one process, alternating order, one thread each: this tree's Conv
kernel (prepared as in an inference, bias and fused relu included), onnxruntime's session of the one
node, and with `--base` the Conv kernel of that revision (interp_ab's finder). Figure: best CPU time per
layer and the ratio tree / onnxruntime, which says which layer shapes are furthest from onnxruntime.
The layers are not inside an inference here (caches warm with the same input): interp_conv_ab measures
the in-model A/B that decides a change.
"""

from __future__ import annotations

import sys

import _common  # noqa: E402

import argparse  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

MODELS = "mobilenetv2,efficientnet_silu,shufflenet,convnext"


def capture(model, top) -> dict:
    """{layer key: (x, static operands, attrs)} of every depthwise conv of one inference."""
    layers = {}
    for _, a, _, ins, static in _common.record_calls(model, top, ["top.Conv"],
                                                        lambda _, ins, a: ins[1].shape[1] == 1 and ins[1].shape[0] > 1):
        w = ins[1]
        layers.setdefault((ins[0].shape[1:], w.shape[2:], tuple(a.get("strides") or ()), bool(a.get("do_relu", False))),
                          (ins[0], static, a))
    return layers


def measure(layers: dict, tree, base, runs: int) -> list:
    """[(key, {side: best CPU s})] per layer, the sides alternating in order."""
    from threadpoolctl import threadpool_limits

    out = []
    with threadpool_limits(1):
        for key, (x, static, a) in layers.items():
            w, b = static[1], static[2] if len(static) > 2 else None
            ins = [x, w, b]
            sess = _common.ort_conv(x, w, b, a)
            ref = sess.run(None, {"x": x})[0]
            sides = {"tree": lambda r=tree.prepare(static, a): r(ins, a), "ort": lambda: sess.run(None, {"x": x})}
            if base is not None:
                sides["base"] = lambda r=base.prepare(static, a): r(ins, a)
            got = sides["tree"]()
            err = float(np.abs(got - ref).max() / max(1e-30, float(np.abs(ref).max())))
            assert err < 1e-5, f"{key}: the tree kernel differs from onnxruntime by {err:.2e} of the largest output"
            best = dict.fromkeys(sides, float("inf"))
            for i in range(runs):
                for name, f in (reversed(sides.items()) if i % 2 else sides.items()):
                    c0 = time.process_time()
                    f()
                    best[name] = min(best[name], time.process_time() - c0)
            out.append((key, best))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", help="git revision whose Conv kernel is measured beside")
    ap.add_argument("--models", default=MODELS)
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    import interp_ab
    import interp_zoo
    from tpudsl.interp import KERNELS

    rev, base = interp_ab.base_conv(args.base) if args.base else (None, None)
    load0 = os.getloadavg()[0]
    rows, totals = [], []
    for name in args.models.split(","):
        model = interp_zoo.zoo()[name]()
        results = measure(capture(model, _common.top_module(model, name)), KERNELS["top.Conv"], base, args.runs)
        sums = dict.fromkeys(results[0][1], 0.0)
        for (x_shape, k, strides, relu), best in results:
            ms = {s: t * 1e3 for s, t in best.items()}
            for s in sums:
                sums[s] += ms[s]
            extra = f" {ms['base']:.3f} | {ms['base'] / ms['tree']:.2f} |" if base is not None else ""
            rows.append(f"| {name} | {list(x_shape)} | {'x'.join(map(str, k))} /{strides[0] if strides else 1}"
                        f"{' +relu' if relu else ''} | {ms['tree']:.3f} | {ms['ort']:.3f} | **{ms['tree'] / ms['ort']:.2f}** |"
                        + extra)
            print(rows[-1], flush=True)
        extra = f", base {sums['base']:.2f} ms (base / tree {sums['base'] / sums['tree']:.2f}x)" if base is not None else ""
        totals.append(f"- {name}: tree {sums['tree']:.2f} ms, onnxruntime {sums['ort']:.2f} ms, "
                      f"**{sums['tree'] / sums['ort']:.2f}x**{extra}")
        print(totals[-1], flush=True)
    load1 = os.getloadavg()[0]
    text = "\n".join([
        "## interp_dw_layers: depthwise conv layers against onnxruntime's single Conv node",
        "",
        f"Command: `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/interp_dw_layers.py "
        f"--runs {args.runs}{f' --base {rev}' if rev else ''}` ({time.strftime('%Y-%m-%d %H:%M')}; one thread each; "
        f"load average {load0:.1f} before, {load1:.1f} after on {os.cpu_count()} cores). Best CPU ms per layer "
        "(a shape that occurs several times once), same input, one process, alternating.",
        "",
        "| model | input [c, *size] | kernel /stride | tree ms | onnxruntime ms | tree / ort |"
        + (" base ms | base / tree |" if base is not None else ""),
        "|---|---|---|---|---|---|" + ("---|---|" if base is not None else ""),
        *rows,
        "",
        "Sum over the model's distinct depthwise layers:",
        *totals,
    ])
    _common.publish("interp_dw_layers", text, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())

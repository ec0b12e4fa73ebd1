"""Per Conv / MatMul layer of an interp_zoo model: this tree's kernel against onnxruntime running the same node alone.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/interp_layers_ort.py \
        [--models resnet18,densenet,vit,transformer] [--runs 15] [--no-write]

One inference records each top.Conv and top.MatMul step's operands (the kernel prepared at init,
as in the model). Then, per distinct layer (operand shapes and attributes), onnxruntime (one
thread, default graph optimisations) runs a one-node model of it (Conv with the same weights,
pads, strides, group and a Relu/Clip for a fused relu; MatMul with a constant right operand
where the Top op has a weight, plus the bias Add), and the two alternate on the same input;
figure: best CPU time (process_time) of each, and interp / ort. A single-node onnxruntime Conv
pays its NCHWc reorders of the input and output, which a whole model shares between layers, so
its per-layer figure is an upper bound of its in-model time.
"""

from __future__ import annotations

import sys

import _common  # noqa: E402

import argparse  # noqa: E402
import collections  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

OPS = ("top.Conv", "top.MatMul")


def one_node(op: str, a, ins: list, static: list) -> onnx.ModelProto:
    """The ONNX model of one recorded step: inputs are its computed operands, weights initializers."""
    inits, names, graph_ins = [], [], []
    if op == "top.MatMul" and a.get("right_transpose", False):
        if static[1] is None:
            raise NotImplementedError("right_transpose on a computed operand")
        ins = [ins[0], np.swapaxes(ins[1], -1, -2), *ins[2:]]
    for i, (x, w) in enumerate(zip(ins, static, strict=False)):
        if x is None:
            names.append("")
            continue
        nm = f"in{i}"
        names.append(nm)
        if w is not None:
            inits.append(numpy_helper.from_array(np.asarray(x, np.float32), nm))
        else:
            graph_ins.append(helper.make_tensor_value_info(nm, TensorProto.FLOAT, list(x.shape)))
    nodes = []
    if op == "top.Conv":
        rank = len(ins[1].shape) - 2
        nodes.append(helper.make_node(
            "Conv", [n for n in names[:3] if n], ["y"], strides=list(a.get("strides") or [1] * rank),
            pads=list(a.get("pads") or [0] * 2 * rank), dilations=list(a.get("dilations") or [1] * rank),
            group=int(a.get("group", 1))))
    else:
        if a.get("left_transpose", False) or a.get("output_transpose", False):
            raise NotImplementedError("transposed MatMul attributes")
        nodes.append(helper.make_node("MatMul", names[:2], ["y"] if len(names) < 3 or not names[2] else ["mm"]))
        if len(names) > 2 and names[2]:
            nodes.append(helper.make_node("Add", ["mm", names[2]], ["y"]))
    out = "y"
    if a.get("do_relu", False):
        limit = float(a.get("relu_limit", -1.0))
        if limit > 0:
            inits += [numpy_helper.from_array(np.float32(0), "lo"), numpy_helper.from_array(np.float32(limit), "hi")]
            nodes.append(helper.make_node("Clip", ["y", "lo", "hi"], ["z"]))
        else:
            nodes.append(helper.make_node("Relu", ["y"], ["z"]))
        out = "z"
    graph = helper.make_graph(nodes, "layer", graph_ins, [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def layer_key(op, a, ins) -> tuple:
    return (op, tuple(tuple(x.shape) if x is not None else () for x in ins), tuple(a.get("strides") or ()),
            int(a.get("group", 1)), bool(a.get("do_relu", False)))


def compare(call, runs: int) -> tuple[float, float]:
    """(interp best s, ort best s) of one recorded step, alternating."""
    from threadpoolctl import threadpool_limits

    op, a, run, ins, static = call
    feeds_i = [i for i, w in enumerate(static) if w is None and i < len(ins) and ins[i] is not None]
    sess = _common.ort_session(one_node(op, a, ins, static), 1)
    feed = {f"in{i}": ins[i] for i in feeds_i}
    best = {"interp": float("inf"), "ort": float("inf")}
    with threadpool_limits(1, "blas"):
        for i in range(runs + 1):
            for side in ("interp", "ort") if i % 2 else ("ort", "interp"):
                c0 = time.process_time()
                if side == "ort":
                    ref = sess.run(None, feed)[0]
                else:
                    got = run(ins, a)
                if i:
                    best[side] = min(best[side], time.process_time() - c0)
    if not np.allclose(np.asarray(got).reshape(ref.shape), ref, rtol=1e-3, atol=1e-3 * float(np.abs(ref).max())):
        raise AssertionError(f"{op} {layer_key(op, a, ins)}: interp and onnxruntime disagree")
    return best["interp"], best["ort"]


def describe(op, a, ins) -> str:
    relu = " +relu" if a.get("do_relu", False) else ""
    if op == "top.Conv":
        w = ins[1].shape
        s = (a.get("strides") or [1])[0]
        g = int(a.get("group", 1))
        return f"Conv {list(ins[0].shape[1:])} {w[0]}x{w[1]}x{'x'.join(map(str, w[2:]))}/{s}" + (f" g{g}" if g > 1 else "") + relu
    return f"MatMul {list(ins[0].shape)} @ {list(ins[1].shape)}" + (" +bias" if len(ins) > 2 and ins[2] is not None else "") + relu


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="resnet18,densenet,vit,transformer")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    import interp_zoo

    load0 = os.getloadavg()[0]
    lines = []
    for name in args.models.split(","):
        model = interp_zoo.zoo()[name]()
        calls = _common.record_calls(model, _common.top_module(model, name), OPS)
        groups: dict = collections.OrderedDict()
        for c in calls:
            groups.setdefault(layer_key(c[0], c[1], c[3]), []).append(c)
        rows, tot = [], {"interp": 0.0, "ort": 0.0}
        for key, cs in groups.items():
            ti, to = compare(cs[0], args.runs)
            tot["interp"] += ti * len(cs)
            tot["ort"] += to * len(cs)
            rows.append(f"| {name} | {describe(cs[0][0], cs[0][1], cs[0][3])} | {len(cs)} | {ti * 1e3:.3f} | "
                        f"{to * 1e3:.3f} | **{ti / to:.2f}** |")
            print(rows[-1], flush=True)
        lines += rows
        lines.append(f"| {name} | all Conv/MatMul layers | {len(calls)} | {tot['interp'] * 1e3:.2f} | "
                     f"{tot['ort'] * 1e3:.2f} | **{tot['interp'] / tot['ort']:.2f}** |")
        print(lines[-1], flush=True)
    load1 = os.getloadavg()[0]
    text = "\n".join([
        "## interp_layers_ort: each Conv/MatMul layer, interpreter kernel vs onnxruntime's single node",
        "",
        f"Command: `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/interp_layers_ort.py "
        f"--models {args.models} --runs {args.runs}` ({time.strftime('%Y-%m-%d %H:%M')}; one thread each; best CPU "
        f"time of {args.runs}, alternating; load average {load0:.1f} before, {load1:.1f} after on {os.cpu_count()} "
        "cores). A single onnxruntime Conv node includes its NCHWc reorders (shared between layers in a model).",
        "",
        "| model | layer | count | interp ms | ort ms | interp / ort |",
        "|---|---|---|---|---|---|",
        *lines,
    ])
    _common.publish("interp_layers_ort", text, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())

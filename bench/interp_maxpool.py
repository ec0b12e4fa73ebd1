"""Each MaxPool layer of the interp_zoo models: this tree's kernel, a base revision's, and onnxruntime's single node.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/interp_maxpool.py --base REV \
        [--models resnet18,densenet,shufflenet] [--runs 30] [--no-write]

One inference records every top.MaxPool step's input and attributes. Per distinct layer the three
run alternately on that input (onnxruntime: one thread, a one-node MaxPool model with the same
kernel, strides, pads and ceil_mode); figure: best CPU time (process_time) of each. The outputs
must be equal (a max is one of its inputs).
"""

from __future__ import annotations

import sys

import _common  # noqa: E402

import argparse  # noqa: E402
import ctypes  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402


def record(model, name: str) -> list:
    """[(attrs, input copy)] of every top.MaxPool step of one inference (a seeded normal input)."""
    from tpudsl.interp import KERNELS, ModuleInterpreter
    from tpudsl.interp.kernel import Kernel

    calls, k = [], KERNELS["top.MaxPool"]

    def run(ins, a):
        calls.append((a, ins[0].copy()))
        return k.run(ins, a)

    top = _common.top_module(model, name)
    it = ModuleInterpreter(top.module, top.weights, {**KERNELS, "top.MaxPool": Kernel(run)}, threads=1)
    it.init()
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    it.inference({model.graph.input[0].name: np.random.default_rng(0).standard_normal(shape).astype(np.float32)})
    it.deinit()
    return calls


def one_node(a, x):
    rank = x.ndim - 2
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=list(a["kernel_shape"]),
                            strides=list(a.get("strides") or [1] * rank), pads=list(a.get("pads") or [0] * 2 * rank),
                            ceil_mode=int(bool(a.get("ceil_mode", False))))
    graph = helper.make_graph([node], "pool", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--models", default="resnet18,densenet,shufflenet")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    import interp_ab
    import interp_zoo
    from threadpoolctl import threadpool_limits

    from tpudsl.interp import KERNELS

    libc = ctypes.CDLL("libc.so.6")  # keep freed temporaries mapped (docs/interpreter.md: page faults misrank kernels)
    libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD
    libc.mallopt(-3, 1 << 30)  # M_MMAP_THRESHOLD
    rev, base = interp_ab.base_conv(args.base)[0], interp_ab.base_kernels(args.base)["top.MaxPool"].run
    new = KERNELS["top.MaxPool"].run
    load0 = os.getloadavg()[0]
    rows, seen = [], set()
    for name in args.models.split(","):
        for a, x in record(interp_zoo.zoo()[name](), name):
            key = (name, x.shape, tuple(a["kernel_shape"]), tuple(a.get("strides") or ()), tuple(a.get("pads") or ()))
            if key in seen:
                continue
            seen.add(key)
            sess = _common.ort_session(one_node(a, x), 1)
            sides = {"base": lambda: base([x], a), "new": lambda: new([x], a),
                     "ort": lambda: sess.run(None, {"x": x})[0]}
            best, outs = dict.fromkeys(sides, float("inf")), {}
            with threadpool_limits(1, "blas"):
                for i in range(args.runs + 1):
                    order = list(sides) if i % 2 else list(reversed(sides))
                    for side in order:
                        c0 = time.process_time()
                        outs[side] = sides[side]()
                        if i:
                            best[side] = min(best[side], time.process_time() - c0)
            for side in ("base", "new"):
                np.testing.assert_array_equal(outs[side], outs["ort"], err_msg=f"{key} {side}")
            k, s, p = a["kernel_shape"], a.get("strides"), a.get("pads")
            layer = f"{list(x.shape[1:])} {'x'.join(map(str, k))}/{s[0] if s else 1} pads {list(p or [])}"
            rows.append(f"| {name} | {layer} | "
                        f"{best['base'] * 1e3:.3f} | {best['new'] * 1e3:.3f} | {best['ort'] * 1e3:.3f} | "
                        f"**{best['base'] / best['new']:.2f}** | **{best['new'] / best['ort']:.2f}** |")
            print(rows[-1], flush=True)
    load1 = os.getloadavg()[0]
    text = "\n".join([
        "## maxpool: each MaxPool layer, base kernel, this tree's, onnxruntime's single node",
        "",
        f"Command: `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/interp_maxpool.py --base {rev} "
        f"--models {args.models} --runs {args.runs}` ({time.strftime('%Y-%m-%d %H:%M')}; one thread each; best CPU "
        f"time of {args.runs}, alternating; load average {load0:.1f} before, {load1:.1f} after on "
        f"{os.cpu_count()} cores)",
        "",
        f"| model | layer | {rev} ms | this tree ms | ort ms | base / this | this / ort |",
        "|---|---|---|---|---|---|---|",
        *rows,
    ])
    _common.publish("maxpool_layers", text, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())

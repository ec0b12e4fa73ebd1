"""Time the interpreter's conv kernel on ResNet-18's 20 convolutions against onnxruntime.

Both run the same single-conv models (static filter + bias) in this process, one thread each
(numpy's BLAS pinned to 1, ORT intra_op=1); the conv kernel is prepared once (filter packed, as
ModuleInterpreter.init does). Each repeat runs the whole 20-conv sequence on both sides, one
after the other, so load from other jobs hits both; the medians over the repeats are compared.

    .venv/bin/python bench/interp_kernels.py [--repeats 5] [--no-write]
"""

from __future__ import annotations


import _common  # noqa: E402

_common.pin_one_thread()

import argparse  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from tpudsl.interp.kernel import KernelAttrs  # noqa: E402
from tpudsl.interp.table import KERNELS  # noqa: E402

# (in_channels, out_channels, kernel, stride, input size): ResNet-18's convolutions in order.
RESNET18_CONVS = [
    (3, 64, 7, 2, 224),
    *[(64, 64, 3, 1, 56)] * 4,
    (64, 128, 3, 2, 56), (128, 128, 3, 1, 28), (64, 128, 1, 2, 56), (128, 128, 3, 1, 28), (128, 128, 3, 1, 28),
    (128, 256, 3, 2, 28), (256, 256, 3, 1, 14), (128, 256, 1, 2, 28), (256, 256, 3, 1, 14), (256, 256, 3, 1, 14),
    (256, 512, 3, 2, 14), (512, 512, 3, 1, 7), (256, 512, 1, 2, 14), (512, 512, 3, 1, 7), (512, 512, 3, 1, 7),
]


def conv_attrs(k: int, stride: int) -> dict:
    pad = k // 2
    return {"kernel_shape": [k, k], "strides": [stride, stride], "pads": [pad] * 4, "group": 1}


def ort_session(w: np.ndarray, b: np.ndarray, attrs: dict, x_shape: tuple[int, ...]) -> ort.InferenceSession:
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return _common.ort_session(model)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-write", action="store_true", help="do not update bench/RESULTS.md")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    layers = []
    for ic, oc, k, s, size in RESNET18_CONVS:
        x = rng.standard_normal((1, ic, size, size)).astype(np.float32)
        w = (rng.standard_normal((oc, ic, k, k)) * 0.1).astype(np.float32)
        b = rng.standard_normal(oc).astype(np.float32)
        attrs = conv_attrs(k, s)
        sess = ort_session(w, b, attrs, x.shape)
        theirs = sess.run(None, {"x": x})[0]
        kattrs = KernelAttrs(attrs, [theirs.shape])  # the result type, as the interpreter passes it
        run = KERNELS["top.Conv"].prepare([None, w, b], kattrs)
        ours = run([x, w, b], kattrs)
        np.testing.assert_allclose(ours, theirs, rtol=1e-3, atol=1e-3)
        layers.append((x, w, b, kattrs, run, sess))

    def time_ours() -> float:
        t = time.perf_counter()
        for x, w, b, kattrs, run, _ in layers:
            run([x, w, b], kattrs)
        return time.perf_counter() - t

    def time_ort() -> float:
        t = time.perf_counter()
        for x, *_, sess in layers:
            sess.run(None, {"x": x})
        return time.perf_counter() - t

    time_ours(), time_ort()  # warm-up: page in buffers, let BLAS spin up
    ours_runs, ort_runs = [], []
    for _ in range(args.repeats):
        ours_runs.append(time_ours())
        ort_runs.append(time_ort())
    ours, theirs = statistics.median(ours_runs), statistics.median(ort_runs)
    load = os.getloadavg()[0]
    text = "\n".join([
        "## interp_kernels: conv kernel vs onnxruntime, ResNet-18's 20 convolutions",
        "",
        f"Command: `.venv/bin/python bench/interp_kernels.py --repeats {args.repeats}` "
        f"({time.strftime('%Y-%m-%d %H:%M')}, one thread each, OPENBLAS_CORETYPE="
        f"{os.environ.get('OPENBLAS_CORETYPE', '(unset)')}, load average {load:.1f} on {os.cpu_count()} cores)",
        "",
        f"- tpudsl conv kernel (im2col+GEMM; Winograd F(4x4,3x3) for 3x3/s1 convs with >= 64 channels and >= 28x28 outputs, F(2x2,3x3) down to 14x14): median {ours * 1e3:.1f} ms",
        f"- onnxruntime Conv: median {theirs * 1e3:.1f} ms",
        f"- **ratio {ours / theirs:.2f}x** (issue target for the whole model: <= 1.5x); "
        f"best runs {min(ours_runs) * 1e3:.1f} vs {min(ort_runs) * 1e3:.1f} ms = {min(ours_runs) / min(ort_runs):.2f}x "
        "(less sensitive to other jobs)",
    ])
    _common.publish("interp_kernels", text, write=not args.no_write)

if __name__ == "__main__":
    main()

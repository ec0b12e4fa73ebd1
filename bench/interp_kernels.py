"""Time the interpreter's conv kernel on ResNet-18's 20 convolutions against onnxruntime.

Both run the same single-conv models (static filter + bias) in this process, one thread each;
the conv kernel is prepared once (filter packed, as ModuleInterpreter.init does), then each
side runs the whole 20-conv sequence; the median of 5 sequence runs is reported.

    .venv/bin/python bench/interp_kernels.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from tpudsl.interp.kernel import KernelAttrs
from tpudsl.interp.table import KERNELS

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
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    layers = []
    for ic, oc, k, s, size in RESNET18_CONVS:
        x = rng.standard_normal((1, ic, size, size)).astype(np.float32)
        w = (rng.standard_normal((oc, ic, k, k)) * 0.1).astype(np.float32)
        b = rng.standard_normal(oc).astype(np.float32)
        attrs = conv_attrs(k, s)
        kattrs = KernelAttrs(attrs)
        run = KERNELS["top.Conv"].prepare([None, w, b], kattrs)
        sess = ort_session(w, b, attrs, x.shape)
        ours, theirs = run([x, w, b], kattrs), sess.run(None, {"x": x})[0]
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
    ours = statistics.median(time_ours() for _ in range(args.repeats))
    theirs = statistics.median(time_ort() for _ in range(args.repeats))
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '')} OMP/OPENBLAS threads="
          f"{os.environ.get('OPENBLAS_NUM_THREADS', 'default')}")
    print(f"ResNet-18 convs (20 layers, 1x3x224x224), median of {args.repeats}:")
    print(f"  tpudsl conv kernel : {ours * 1e3:8.1f} ms")
    print(f"  onnxruntime (1 thr): {theirs * 1e3:8.1f} ms")
    print(f"  ratio              : {ours / theirs:8.2f}x")


if __name__ == "__main__":
    main()

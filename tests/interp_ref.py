"""Shared helpers of the interpreter tests: the onnxruntime reference and kernel calls by op name.

The reference is always a single-node ONNX model built with onnx.helper and run by onnxruntime;
the test maps TPU-MLIR attributes to ONNX attributes itself."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

from onnx_node import harness

import tpudsl.dialects.top  # noqa: F401  (defines the Top ops, filling SPECS)
from tpudsl.dialects.attrs import to_attr
from tpudsl.dialects.opdef import SPECS, AttrView
from tpudsl.interp.kernel import KernelAttrs, run_kernel
from tpudsl.interp.table import KERNELS

RTOL, ATOL = 1e-4, 1e-5

_ONNX_TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
               np.dtype(np.bool_): TensorProto.BOOL, np.dtype(np.int32): TensorProto.INT32}


def ort_run(
    op_type: str,
    inputs: Sequence[np.ndarray | None],
    attrs: Mapping[str, Any] | None = None,
    n_outputs: int = 1,
    opset: int = 17,
    domain: str = "",
) -> list[np.ndarray]:
    """Run one ONNX node on `inputs` (None: an omitted optional input) with onnxruntime."""
    names = [f"x{i}" if x is not None else "" for i, x in enumerate(inputs)]
    graph_inputs = [
        helper.make_tensor_value_info(n, _ONNX_TYPES[x.dtype], list(x.shape))
        for n, x in zip(names, inputs, strict=True) if x is not None
    ]
    outs = [f"y{i}" for i in range(n_outputs)]
    node = helper.make_node(op_type, names, outs, domain=domain, **(attrs or {}))
    graph = helper.make_graph(
        [node], "single", graph_inputs,
        [onnx.ValueInfoProto(name=o) for o in outs],  # types left to onnxruntime's inference
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(domain, opset)])
    model.ir_version = 8
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    feed = {n: x for n, x in zip(names, inputs, strict=True) if x is not None}
    return sess.run(None, feed)


def top_attrs(
    op_name: str,
    attrs: Mapping[str, Any],
    out_shapes: Sequence[tuple[int, ...] | None] = (),
    out_dtypes: Sequence[np.dtype | None] = (),
) -> KernelAttrs:
    """Attributes as the interpreter sees them. When the dialect defines `op_name`, the names must
    be its attribute names and unset ones take the spec defaults (so the test checks both)."""
    spec = SPECS.get(op_name)
    if spec is None:
        return KernelAttrs(dict(attrs), out_shapes, out_dtypes)
    unknown = set(attrs) - set(spec.attrs)
    assert not unknown, f"{op_name} has no attributes {sorted(unknown)} in the dialect"
    converted = {k: to_attr(spec.attrs[k].kind, v) for k, v in attrs.items() if v is not None}
    return KernelAttrs(AttrView(converted, spec), out_shapes, out_dtypes)


def run_top(
    op_name: str,
    inputs: Sequence[np.ndarray | None],
    attrs: Mapping[str, Any] | None = None,
    out_shapes: Sequence[tuple[int, ...] | None] = (),
    out_dtypes: Sequence[np.dtype | None] = (),
) -> list[np.ndarray]:
    """Run the interpreter kernel of `op_name` once (fused activation included)."""
    return run_kernel(KERNELS[op_name], inputs, top_attrs(op_name, attrs or {}, out_shapes, out_dtypes))


def assert_close(actual: np.ndarray, expected: np.ndarray, rtol: float = RTOL, atol: float = ATOL) -> None:
    """Within rtol/atol; exact for integer and boolean references (onnx_node.harness.assert_close)."""
    harness.assert_close(actual, expected, rtol, atol)


def rand(rng: np.random.Generator, *shape: int, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    return rng.uniform(low, high, size=shape).astype(np.float32)


def same_pool_loops(x: np.ndarray, kernel: Sequence[int], strides: Sequence[int], dilations: Sequence[int],
                    auto_pad: str, is_max: bool, count_include_pad: bool = False) -> np.ndarray:
    """ONNX pooling with auto_pad SAME_UPPER/SAME_LOWER, window by window, from the spec: out =
    ceil(in / stride); total pad = (out - 1) * stride + dilation * (kernel - 1) + 1 - in, the odd
    one at the end (SAME_UPPER) or the beginning (SAME_LOWER); an average counts input elements
    only, or every tap with count_include_pad (SAME pads cover every tap of every window).

    (onnxruntime pads a dilated SAME pool as if it were not dilated, and onnx's reference
    evaluator treats SAME_LOWER as SAME_UPPER there, so neither can be the reference.)"""
    size = x.shape[2:]
    out = [-(-i // s) for i, s in zip(size, strides, strict=True)]
    begin = []
    for i, o, k, s, d in zip(size, out, kernel, strides, dilations, strict=True):
        total = max(0, (o - 1) * s + d * (k - 1) + 1 - i)
        begin.append(total // 2 if auto_pad == "SAME_UPPER" else total - total // 2)
    y = np.zeros((*x.shape[:2], *out), np.float32)
    for at in np.ndindex(*out):
        taps = []
        for tap in np.ndindex(*kernel):
            pos = [o * s - b + t * d for o, s, b, t, d in zip(at, strides, begin, tap, dilations, strict=True)]
            if all(0 <= p < i for p, i in zip(pos, size, strict=True)):
                taps.append(x[(slice(None), slice(None), *pos)])
        window = np.stack(taps)
        if is_max:
            y[(slice(None), slice(None), *at)] = window.max(axis=0)
        else:
            y[(slice(None), slice(None), *at)] = window.sum(axis=0) / (np.prod(kernel) if count_include_pad else len(taps))
    return y

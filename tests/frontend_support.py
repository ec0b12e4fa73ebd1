"""Helpers of the frontend tests: build small ONNX models, convert them, run the Top interpreter
and onnxruntime on the same inputs, and compare."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnx_node.harness import assert_close

from tpudsl.dialects.opdef import loc_name
from tpudsl.frontend.onnx_import import convert_onnx
from tpudsl.interp import run_module
from tpudsl.interp.module_interpreter import result_names
from tpudsl.ir.module import TopModule

RNG = np.random.default_rng(0)


def rand(*shape: int, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    return RNG.uniform(low, high, shape).astype(np.float32)


# The domain of the ops tests use as "an unsupported ONNX op": no real op, so supporting one never breaks them.
UNSUPPORTED = "com.example.unsupported"


def make_model(nodes: Sequence[onnx.NodeProto], inputs: Mapping[str, Sequence[int | str]], outputs: Sequence[str],
               initializers: Mapping[str, np.ndarray] | None = None, opset: int = 13,
               input_types: Mapping[str, int] | None = None, domains: Sequence[str] = ()) -> onnx.ModelProto:
    """A model with float inputs (dims may be symbolic) and untyped outputs (shape inference types them);
    `domains` are further op domains it imports (version 1), such as UNSUPPORTED."""
    types = input_types or {}
    graph = helper.make_graph(
        list(nodes), "test",
        [helper.make_tensor_value_info(n, types.get(n, TensorProto.FLOAT), list(s)) for n, s in inputs.items()],
        [helper.make_value_info(o, onnx.TypeProto()) for o in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in (initializers or {}).items()],
    )
    ir = 7 if opset < 15 else (8 if opset < 19 else 9)
    opsets = [helper.make_opsetid("", opset), *(helper.make_opsetid(d, 1) for d in domains)]
    model = helper.make_model(graph, opset_imports=opsets, ir_version=ir)
    return onnx.shape_inference.infer_shapes(model)


def run_ort(model: onnx.ModelProto, feed: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return {o.name: v for o, v in zip(session.get_outputs(), session.run(None, dict(feed)), strict=True)}


def run_top(mod: TopModule, feed: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    return run_module(mod.module, mod.weights, {k: np.asarray(v, np.float32) for k, v in feed.items()})


def locs(mod: TopModule) -> set[str]:
    """Every tensor name: ops' loc names, and each result's name in a fused loc (TopK)."""
    names = {loc_name(op) for op in mod.module.walk() if loc_name(op)}
    return names | {n for op in mod.module.walk() if op.results for n in result_names(op)}


def check(model: onnx.ModelProto, feed: Mapping[str, np.ndarray], rtol: float = 1e-4, atol: float = 1e-5,
          input_shapes: Sequence[Sequence[int]] | None = None, op_names: Sequence[str] = ()) -> TopModule:
    """Convert `model`, run both sides on `feed`, and assert every output matches onnxruntime.

    `op_names`: Top ops that must appear (so a test of a conversion form cannot pass by
    accident through another)."""
    mod = convert_onnx(model, "test", input_shapes=input_shapes)
    ours, ref = run_top(mod, feed), run_ort(model, feed)
    for out in model.graph.output:
        assert out.name in ours, f"output {out.name!r} missing from the Top outputs {sorted(ours)}"
        assert_close(ours[out.name], ref[out.name], rtol, atol, what=f"output {out.name}")  # ints: exact
    present = {op.name for op in mod.module.walk()}
    for name in op_names:
        assert name in present, f"{name} not in {sorted(present)}"
    names = locs(mod)
    for node in model.graph.node:
        for o in node.output:
            if o and o in {x.name for x in model.graph.output}:
                assert o in names
    return mod


def error_lines(stderr: str) -> list[str]:
    """stderr after the lines naming the steps that started (`model_transform: <step> ...`) and
    ended (`model_transform: <step>: 0.12 s`): bad input found during a step comes after them."""
    lines = stderr.splitlines()
    while lines and re.fullmatch(r"model_transform: [^:]*( \.\.\.|: \d+\.\d\d s)", lines[0]):
        lines.pop(0)
    return lines

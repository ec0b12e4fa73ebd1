"""Running ONNX models in onnxruntime: the reference that tpudsl's results are compared with."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper

_NP_TYPES = {onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.INT64: np.int64, onnx.TensorProto.INT32: np.int32}


def _with_all_tensors_as_outputs(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy whose graph outputs also include every node output with an inferred type."""
    inferred = onnx.shape_inference.infer_shapes(model)
    known = {v.name: v for v in inferred.graph.value_info}
    existing = {o.name for o in inferred.graph.output}
    for node in inferred.graph.node:
        for name in node.output:
            if name and name not in existing and name in known:
                inferred.graph.output.append(known[name])
                existing.add(name)
    return inferred


def onnx_inference(
    model: onnx.ModelProto, inputs: Mapping[str, np.ndarray], all_tensors: bool = False
) -> dict[str, np.ndarray]:
    """Outputs keyed by tensor name, run with one intra-op thread (deterministic, fair to the
    other processes). With `all_tensors`, every intermediate tensor too (TPU-MLIR's ref npz)."""
    if all_tensors:
        model = _with_all_tensors_as_outputs(model)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    # No graph rewrites: intermediate tensors must keep the values the ONNX graph defines.
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    values = session.run(names, dict(inputs))
    return dict(zip(names, values, strict=True))


def random_inputs(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    """Standard-normal float inputs of the model's declared (static) shapes."""
    rng = np.random.default_rng(seed)
    initializers = {t.name for t in model.graph.initializer}
    inputs = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        t = value.type.tensor_type
        shape = [d.dim_value for d in t.shape.dim]
        dtype = _NP_TYPES.get(t.elem_type)
        if dtype is None or any(d <= 0 for d in shape):
            raise ValueError(f"input {value.name}: only static float/int shapes are supported")
        inputs[value.name] = rng.standard_normal(shape).astype(dtype)
    return inputs

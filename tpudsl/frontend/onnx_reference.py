"""Reference results: run the original ONNX model with onnxruntime, exposing intermediate tensors
too, so that a mismatch is reported at the first layer that differs, not only at the outputs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import onnx
from onnx import helper, shape_inference

from tpudsl.ir.diagnostics import TpudslError, one_line


def onnx_reference(model: onnx.ModelProto, inputs: Mapping[str, np.ndarray],
                   tensors: Sequence[str] = ()) -> dict[str, np.ndarray]:
    """The graph outputs and the intermediate `tensors` (those ONNX can type) for `inputs`."""
    import onnxruntime as ort  # a test-time dependency: import it only when validating

    model = onnx.ModelProto.FromString(model.SerializeToString())
    typed = shape_inference.infer_shapes(model, strict_mode=False)
    elem = {vi.name: vi.type.tensor_type.elem_type for vi in [*typed.graph.value_info, *typed.graph.input, *typed.graph.output]}
    produced = {o for node in model.graph.node for o in node.output}
    present = {o.name for o in model.graph.output}
    for name in tensors:
        if name in produced and name not in present and elem.get(name):
            model.graph.output.append(helper.make_tensor_value_info(name, elem[name], None))
            present.add(name)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # the graph as written
    options.log_severity_level = 4  # fatal only: an error reaches the user as our one line
    feed = {}
    for vi in model.graph.input:
        if vi.name in inputs:
            dtype = helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type or onnx.TensorProto.FLOAT)
            feed[vi.name] = inputs[vi.name].astype(dtype)
    try:
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        values = session.run(None, feed)
    except Exception as e:  # onnxruntime raises its own exception types for every failure
        raise TpudslError(f"onnxruntime cannot run the model: {one_line(str(e))}") from None
    return {out.name: np.asarray(v) for out, v in zip(session.get_outputs(), values, strict=True)}

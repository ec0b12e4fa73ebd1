"""The fused relu on the values where implementations differ (-0.0, NaN, +-inf, the limit itself):
the Top/Tpu interpreter's `kernel.relu` and the cmodel's own `arith.relu` against onnxruntime's Relu
and Clip(0, limit), bit for bit, in float32 and float16. numpy's maximum turns -0.0 into +0.0 in
float32 but not in float16, which once made F16 groups differ in the sign of a zero."""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from tpudsl.backend.cmodel import arith
from tpudsl.interp import kernel

VALUES = [-0.0, 0.0, -1.5, 1.5, 6.0, 7.0, np.nan, np.inf, -np.inf, -1e-30, 5.999]
TYPES = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16}


def _onnxruntime(x: np.ndarray, limit: float) -> np.ndarray:
    elem = TYPES[x.dtype.type]
    node = (helper.make_node("Clip", ["x", "lo", "hi"], ["y"]) if limit > 0 else helper.make_node("Relu", ["x"], ["y"]))
    inits = [onnx.numpy_helper.from_array(np.array(v, x.dtype), n) for n, v in (("lo", 0), ("hi", limit))] if limit > 0 else []
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", elem, list(x.shape))],
                              [helper.make_tensor_value_info("y", elem, list(x.shape))], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint16 if a.dtype == np.float16 else np.uint32)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("limit", [-1.0, 6.0])
def test_relu_matches_onnxruntime_bitwise(dtype, limit):
    # 4 copies: long enough for numpy's SIMD loops, which treat -0.0 differently from the scalar ones
    x = np.array(VALUES * 4, dtype)
    want = _bits(_onnxruntime(x, limit))
    np.testing.assert_array_equal(_bits(kernel.relu(x.copy(), limit)), want)
    np.testing.assert_array_equal(_bits(arith.relu(x.copy(), 1, limit)), want)

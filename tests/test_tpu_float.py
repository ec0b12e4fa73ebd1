"""The Tpu level in the float modes, checked against the previous level and independent references.

* A ResNet-18-shaped model lowered to F32/F16/BF16: every tensor both levels name is compared with
  the Top interpreter (F32: cosine >= 0.999999 and max relative error <= 1e-5; F16 >= 0.999;
  BF16 >= 0.99, the issue's bounds), so a name means the same values at both levels.
* One F16 convolution against onnxruntime: the operands rounded to float16, the convolution in
  float32 by onnxruntime, the result rounded to float16; at most one float16 ulp apart (the
  summation order may differ by one rounding).
* F16 overflow is inf exactly where float16 overflows, and BF16 (float32's range) does not overflow.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.models import resnet18
from tests.models.runtime import onnx_inference
from tpudsl.dialects import make_context
from tpudsl.frontend.onnx_import import convert_onnx
from tpudsl.interp import run_module
from tpudsl.passes import pass_class

BOUNDS = {"F32": 0.999999, "F16": 0.999, "BF16": 0.99}


def top_module(model: onnx.ModelProto):
    top = convert_onnx(model, "m")
    ctx = make_context()
    for name in ("shape-infer", "canonicalize", "shape-infer"):
        pass_class(name)().apply(ctx, top.module)
    return top


def lower(top, mode: str):
    ctx = make_context()
    pass_class("processor-assign")(chip="bm1684x", mode=mode).apply(ctx, top.module)
    pass_class("convert-top-to-tpu")().apply(ctx, top.module)
    top.module.verify()
    return top


def run(top, feed, keep_all=False):
    return run_module(top.module, top.weights, feed, keep_all=keep_all)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-30))


@pytest.mark.parametrize("mode", sorted(BOUNDS))
def test_resnet18_every_named_tensor_matches_top(mode):
    model = resnet18(input_size=32, num_classes=10, width=8)
    feed = {"input": np.random.default_rng(0).random((1, 3, 32, 32), dtype=np.float32)}
    want = run(top_module(model), feed, keep_all=True)
    got = run(lower(top_module(model), mode), feed, keep_all=True)
    common = sorted(want.keys() & got.keys())
    assert len(common) >= 20 and "output" in common, common
    for name in common:
        w, g = want[name].astype(np.float32), got[name].astype(np.float32)
        assert g.shape == w.shape, name
        cos = cosine(g, w)
        assert cos >= BOUNDS[mode], f"{mode} {name}: cosine {cos:.7f}"
        if mode == "F32":
            assert np.abs(g - w).max() <= 1e-5 * max(np.abs(w).max(), 1e-6), name
    # The output is float32 under its Top name; in F16/BF16 the f16 value behind it has a derived name.
    assert got["output"].dtype == np.float32
    if mode != "F32":
        assert f"output_{mode.lower()}" in got


def conv_model(w: np.ndarray) -> onnx.ModelProto:
    node = helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])
    graph = helper.make_graph(
        [node], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [numpy_helper.from_array(w, "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_f16_conv_is_onnxruntime_on_f16_operands_rounded_once():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(1, 8, 6, 6)).astype(np.float32)
    w = rng.normal(size=(4, 8, 3, 3)).astype(np.float32)
    got = run(lower(top_module(conv_model(w)), "F16"), {"x": x})["y"]
    x16, w16 = x.astype(np.float16).astype(np.float32), w.astype(np.float16).astype(np.float32)
    want = onnx_inference(conv_model(w16), {"x": x16})["y"].astype(np.float16)
    ulp = np.spacing(np.abs(want)).astype(np.float32)
    assert (np.abs(got.astype(np.float32) - want.astype(np.float32)) <= ulp).all()
    assert (got.astype(np.float16) == want).mean() > 0.9  # most agree exactly


def scale_model(c: float) -> onnx.ModelProto:
    node = helper.make_node("Mul", ["x", "c"], ["y"])
    graph = helper.make_graph(
        [node], "scale", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(c, dtype=np.float32), "c")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_f16_overflows_to_inf_where_float16_does_and_bf16_does_not():
    x = np.array([[1.0, 2.0, 0.5, -3.0]], dtype=np.float32)
    c = 40000.0  # 2*c and 3*c exceed float16's 65504; c and c/2 do not
    f16 = run(lower(top_module(scale_model(c)), "F16"), {"x": x})["y"]
    np.testing.assert_array_equal(f16, (x.astype(np.float16) * np.float16(c)).astype(np.float32))
    assert np.isinf(f16).tolist() == [[False, True, False, True]]
    bf16 = run(lower(top_module(scale_model(c)), "BF16"), {"x": x})["y"]
    want = (x.astype(ml_dtypes.bfloat16).astype(np.float32) * np.float32(ml_dtypes.bfloat16(c)))
    np.testing.assert_array_equal(bf16, want.astype(ml_dtypes.bfloat16).astype(np.float32))
    assert np.isfinite(bf16).all()

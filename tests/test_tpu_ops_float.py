"""The float Tpu lowering of the ops beyond ResNet's (issue 10), one small ONNX model per op.

For each model: the Top op it exists for is in the Top module and its Tpu op in the lowered one;
F32 gives exactly the Top interpreter's outputs; F16 gives the Top interpreter's outputs on the
inputs rounded to float16, rounded to float16 (one float16 ulp allowed: a model of several ops
rounds between them). Indices (TopK's, MaxPool's Indices) are compared exactly, in BF16 too, where
an index above 256 held in bf16 would be another index. One op (Trilu) also lowers in an INT8 module,
by the float fallback, and stays close to Top.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from tests.frontend_support import make_model
from tests.test_tpu_float import cosine, lower, run, top_module
from tests.test_tpu_int8 import calibrated_int8
from tpudsl.dialects.opdef import loc_name

RNG = np.random.default_rng(7)


def r(*shape: int, low: float = -2.0, high: float = 2.0) -> np.ndarray:
    return RNG.uniform(low, high, shape).astype(np.float32)


def i64(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def node(op: str, ins: list[str], outs: list[str] | None = None, **attrs) -> onnx.NodeProto:
    return helper.make_node(op, ins, outs or ["y"], **attrs)


# name -> (nodes, feed, initializers, opset, Top op, Tpu op)
CASES = {
    "Expand": ([node("Expand", ["x", "s"])], {"x": r(3, 1)}, {"s": i64(2, 3, 4)}, 13, "top.Expand", "tpu.Expand"),
    "Elu": ([node("Elu", ["x"], alpha=0.7)], {"x": r(2, 5)}, {}, 13, "top.Elu", "tpu.Active"),
    "HardSigmoid": ([node("HardSigmoid", ["x"], alpha=0.3, beta=0.4)], {"x": r(2, 5, low=-5, high=5)}, {}, 13,
                    "top.HardSigmoid", "tpu.Active"),
    "Swish": ([node("Swish", ["x"], alpha=1.5)], {"x": r(2, 5)}, {}, 24, "top.Swish", "tpu.Active"),
    "Round": ([node("Round", ["x"])], {"x": np.array([[-2.5, -1.5, -0.5, 0.5, 1.5, 2.4, 2.6]], np.float32)}, {}, 13,
              "top.Round", "tpu.Active"),
    "RMSNormalization": ([node("RMSNormalization", ["x", "g"], epsilon=1e-5)], {"x": r(2, 3, 8)},
                         {"g": r(8)}, 23, "top.RMSNorm", "tpu.RMSNorm"),
    # the largest values lie past index 256 (bf16's last exact integer)
    "TopK": ([node("TopK", ["x", "k"], ["v", "i"], axis=-1)],
             {"x": np.concatenate([r(2, 260), r(2, 40, low=3, high=4)], 1)}, {"k": i64(3)}, 13,
             "top.TopK", "tpu.TopK"),
    # a scalar index (ViT's class token): tpu.Gather has an extra `buffer` operand
    "Gather": ([node("Gather", ["x", "ind"], axis=1)], {"x": r(1, 5, 3)}, {"ind": np.array(0, np.int64)}, 13,
               "top.Gather", "tpu.Gather"),
    "GatherND": ([node("GatherND", ["x", "ind"])], {"x": r(3, 4, 2)}, {"ind": np.array([[2, 1], [0, 3]], np.int64)},
                 13, "top.GatherND", "tpu.GatherND"),
    "ScatterElements": ([node("ScatterElements", ["x", "ind", "u"], axis=1)], {"x": r(2, 5), "u": r(2, 2)},
                        {"ind": np.array([[4, 0], [1, 3]], np.int64)}, 13, "top.ScatterElements",
                        "tpu.ScatterElements"),
    "ScatterND": ([node("ScatterND", ["x", "ind", "u"])], {"x": r(4, 3), "u": r(2, 3)},
                  {"ind": np.array([[3], [1]], np.int64)}, 13, "top.ScatterND", "tpu.ScatterND"),
    # reverse=1: Reverse, CumSum, Reverse
    "CumSum": ([node("CumSum", ["x", "a"], reverse=1)], {"x": r(2, 6)}, {"a": np.array(1, np.int64)}, 14,
               "top.Reverse", "tpu.CumSum"),
    "Trilu": ([node("Trilu", ["x", "k"], upper=0)], {"x": r(4, 5)}, {"k": np.array(1, np.int64)}, 14, "top.Trilu",
              "tpu.Trilu"),
    "Mod": ([node("Mod", ["x", "d"], fmod=1)], {"x": r(2, 5, low=-9, high=9), "d": r(2, 5, low=1, high=3)}, {}, 13,
            "top.Mod", "tpu.Mod"),
    "Remainder": ([node("Mod", ["x", "d"], fmod=0)], {"x": r(2, 5, low=-9, high=9), "d": r(2, 5, low=1, high=3)},
                  {}, 13, "top.Remainder", "tpu.Remainder"),
    "Pow2": ([node("Pow", ["b", "x"])], {"x": r(2, 5)}, {"b": np.array(3.0, np.float32)}, 13, "top.Pow2",
             "tpu.Pow2"),
    "Pow3": ([node("Pow", ["x", "e"])], {"x": r(2, 5, low=0.5, high=2), "e": r(2, 5)}, {}, 13, "top.Pow3",
             "tpu.Pow3"),
    "Einsum": ([node("Einsum", ["a", "b"], equation="bij,bjk->bik")], {"a": r(2, 3, 4), "b": r(2, 4, 5)}, {}, 13,
               "top.Einsum", "tpu.Einsum"),
    # BatchNorm on its own (no Conv to fold into) becomes tpu.Scale; eps 0 and these statistics give
    # a scale and shift float16 holds exactly, so F16 rounds only x and the result.
    "BatchNorm": ([node("BatchNormalization", ["x", "g", "b", "m", "v"], epsilon=0.0)], {"x": r(1, 3, 4, 4)},
                  {"g": np.array([1, 0.5, 2], np.float32), "b": np.array([0.5, -1, 0.25], np.float32),
                   "m": np.array([0, 1, -0.5], np.float32), "v": np.array([0.25, 1, 4], np.float32)}, 13,
                  "top.BatchNorm", "tpu.Scale"),
    "MaxPoolWithMask": ([node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2], strides=[2, 2])],
                        {"x": r(1, 2, 20, 20)}, {}, 13, "top.MaxPoolWithMask", "tpu.MaxPoolWithMask"),
}


def case_model(name: str) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    nodes, feed, inits, opset, _, _ = CASES[name]
    outs = [o for n in nodes for o in n.output]
    return make_model(nodes, {k: v.shape for k, v in feed.items()}, outs, inits, opset=opset), feed


def op_names(top) -> set[str]:
    return {op.name for op in top.module.walk()}


def f16(feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: v.astype(np.float16).astype(np.float32) for k, v in feed.items()}


def is_index(model: onnx.ModelProto, name: str) -> bool:
    """An index output (TopK's and MaxPool's second), which keeps f32 in every float mode."""
    return any(n.op_type in ("TopK", "MaxPool") and name == n.output[1] for n in model.graph.node)


@pytest.mark.parametrize("name", sorted(CASES))
def test_tpu_float_is_top(name):
    model, feed = case_model(name)
    *_, top_op, tpu_op = CASES[name]
    top = top_module(model)
    assert top_op in op_names(top)
    want = run(top, feed)
    got = run(lower(top_module(model), "F32"), feed)
    for out in want:
        np.testing.assert_array_equal(got[out], want[out], err_msg=f"F32 {out}")

    tpu = lower(top_module(model), "F16")
    assert tpu_op in op_names(tpu)
    got = run(tpu, feed)
    want = run(top_module(model), f16(feed))
    for out in want:
        w = want[out].astype(np.float32)
        g = got[out].astype(np.float32)
        assert g.dtype == np.float32 and g.shape == w.shape, out
        if is_index(model, out):
            np.testing.assert_array_equal(g, w, err_msg=f"F16 indices {out}")
            continue
        w16 = w.astype(np.float16).astype(np.float32)
        ulp = np.spacing(np.abs(w16).astype(np.float16)).astype(np.float32)
        assert (np.abs(g - w16) <= ulp).all(), f"F16 {out}: max error {np.abs(g - w16).max()}"


@pytest.mark.parametrize(("name", "index"), [("TopK", "i"), ("MaxPoolWithMask", "y_1")])
def test_indices_are_exact_in_bf16(name, index):
    """Indices above 256 (TopK's maxima are past 260; a 20x20 plane's mask) are exact in BF16,
    where bf16 would hold another integer. (The Add making ONNX's flat MaxPool index from the mask
    is plain arithmetic in the mode's type: docs/lowering.md.)"""
    model, feed = case_model(name)
    bf16 = {k: v.astype(ml_dtypes.bfloat16).astype(np.float32) for k, v in feed.items()}
    want = run(top_module(model), bf16, keep_all=True)
    got = run(lower(top_module(model), "BF16"), feed, keep_all=True)
    assert want[index].max() > 256
    np.testing.assert_array_equal(got[index], want[index])


def test_batch_norm_weights_have_derived_names():
    model, feed = case_model("BatchNorm")
    tpu = lower(top_module(model), "F16")
    [scale] = [op for op in tpu.module.walk() if op.name == "tpu.Scale"]
    assert [loc_name(v.owner) for v in scale.operands[1:3]] == ["y_scale_f16", "y_bias_f16"]
    np.testing.assert_array_equal(tpu.weights["y_scale_f16"], np.array([2, 0.5, 1], np.float16))
    np.testing.assert_array_equal(tpu.weights["y_bias_f16"], np.array([0.5, -1.5, 0.75], np.float16))


def test_trilu_in_an_int8_module_falls_back_to_f32(tmp_path):
    conv = helper.make_node("Conv", ["input", "w"], ["c"], pads=[1, 1, 1, 1])
    graph = helper.make_graph(
        [conv, helper.make_node("Trilu", ["c"], ["output"], upper=1)], "g",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, None)],
        [onnx.numpy_helper.from_array(r(4, 3, 3, 3, low=-0.5, high=0.5), "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    tpu = calibrated_int8(model, tmp_path, samples=4, shape=(1, 3, 8, 8), method="minmax")
    [trilu] = [op for op in tpu.module.walk() if op.name == "tpu.Trilu"]
    assert str(trilu.results[0].type) == "tensor<1x4x8x8xf32>"
    feed = {"input": np.random.default_rng(5).random((1, 3, 8, 8), dtype=np.float32)}
    got, want = run(tpu, feed)["output"], run(top_module(model), feed)["output"]
    np.testing.assert_array_equal(np.triu(np.ones((8, 8))) * got == got, True)  # zero below the diagonal
    assert cosine(got, want) >= 0.99

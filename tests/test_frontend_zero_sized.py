"""Zero-sized tensors (a 0 dim is an empty dimension, not a dynamic one) through the frontend and
the interpreter, against onnxruntime: element-wise ops, Concat with an empty input, Slice to an
empty result, reductions over and beside an empty axis, Reshape to an empty shape, Split into
an empty piece. The text layer and shape rules: lit_tests/shape_infer/zero_sized.mlir."""

from __future__ import annotations

import numpy as np
import pytest
from frontend_support import check, make_model, rand
from onnx import helper as h


def i64(*v):
    return np.array(v, np.int64)


def test_elementwise_and_concat_with_an_empty_input():
    nodes = [h.make_node("Add", ["e", "e"], ["s"]), h.make_node("Relu", ["s"], ["r"]),
             h.make_node("Concat", ["r", "x"], ["y"], axis=0)]
    model = make_model(nodes, {"e": [0, 3], "x": [2, 3]}, ["s", "y"])
    check(model, {"e": rand(0, 3), "x": rand(2, 3)}, op_names=["top.Concat"])


def test_slice_to_empty():
    node = h.make_node("Slice", ["x", "b", "e"], ["y"])
    check(make_model([node], {"x": [4, 3]}, ["y"], {"b": i64(2, 0), "e": i64(2, 3)}), {"x": rand(4, 3)})


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2", "ReduceLogSumExp"])
@pytest.mark.parametrize(("axes", "keepdims"), [([1], 1), ([1], 0), ([0], 1)], ids=["empty_kept", "empty_dropped", "beside"])
def test_reduce_over_or_beside_an_empty_axis(op, axes, keepdims):
    """Over the empty axis: the reduction of the empty set (0, -inf, +inf, 1, ...); beside it: an
    empty result."""
    node = h.make_node(op, ["x", "a"], ["y"], keepdims=keepdims)
    check(make_model([node], {"x": [2, 0, 3]}, ["y"], {"a": i64(*axes)}, opset=18), {"x": rand(2, 0, 3)},
          op_names=["top.Reduce"])


@pytest.mark.parametrize(("shape", "out"), [((2, 0, 3), [3, 0]), ((0, 3), [0, 3, 1]), ((0, 3), [3, 0, 1])])
def test_reshape_to_an_empty_shape(shape, out):
    node = h.make_node("Reshape", ["x", "s"], ["y"], allowzero=1)
    check(make_model([node], {"x": list(shape)}, ["y"], {"s": i64(*out)}, opset=14), {"x": rand(*shape)},
          op_names=["top.Reshape"])


def test_split_into_an_empty_piece():
    node = h.make_node("Split", ["x", "s"], ["a", "b", "c"], axis=1)
    check(make_model([node], {"x": [2, 5]}, ["a", "b", "c"], {"s": i64(2, 0, 3)}), {"x": rand(2, 5)})

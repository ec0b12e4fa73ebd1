"""Converters of TopK, GatherND, ScatterElements, ScatterND, Pow (all forms), RMSNormalization and
Swish against onnxruntime (convert_onnx + the Top interpreter)."""

from __future__ import annotations

import numpy as np
import pytest
from frontend_support import check, make_model, rand
from onnx import TensorProto, helper

from tpudsl.frontend.onnx_import import convert_onnx
from tpudsl.ir.diagnostics import TpudslError

I64 = np.int64


@pytest.mark.parametrize(("axis", "largest"), [(-1, 1), (1, 0)])
def test_topk_values_and_indices_keep_their_names(axis, largest):
    x = rand(2, 5, 6)
    model = make_model([helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=axis, largest=largest)],
                       {"x": [2, 5, 6]}, ["v", "i"], initializers={"k": np.array([3], I64)})
    check(model, {"x": x}, op_names=["top.TopK"])


def test_topk_with_an_unused_indices_output():
    model = make_model([helper.make_node("TopK", ["x", "k"], ["v", "i"]), helper.make_node("Relu", ["v"], ["y"])],
                       {"x": [4, 6]}, ["y"], initializers={"k": np.array([2], I64)})
    check(model, {"x": rand(4, 6)}, op_names=["top.TopK"])


@pytest.mark.parametrize(("batch_dims", "indices"), [(0, [[0, 1], [1, -1]]), (1, [[[1]], [[0]]])])
def test_gather_nd(batch_dims, indices):
    model = make_model([helper.make_node("GatherND", ["x", "i"], ["y"], batch_dims=batch_dims)], {"x": [2, 3, 4]}, ["y"],
                       initializers={"i": np.array(indices, I64)})
    check(model, {"x": rand(2, 3, 4)}, op_names=["top.GatherND"])


def test_scatter_elements_and_scatter_nd():
    idx = np.array([[2, 0, 1], [0, 2, -1]], I64)
    nodes = [helper.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=1),
             helper.make_node("ScatterND", ["x", "j", "w"], ["z"])]
    model = make_model(nodes, {"x": [2, 3], "u": [2, 3], "w": [2, 3]}, ["y", "z"],
                       initializers={"i": idx, "j": np.array([[1], [0]], I64)}, opset=16)
    check(model, {"x": rand(2, 3), "u": rand(2, 3), "w": rand(2, 3)}, op_names=["top.ScatterElements", "top.ScatterND"])


@pytest.mark.parametrize(("op", "reduction", "code"), [("ScatterND", "add", 1), ("ScatterElements", "mul", 5),
                                                   ("ScatterND", "max", 3), ("ScatterElements", "min", 4)])
def test_scatter_reductions_combine_duplicates_in_order(op, reduction, code):
    """Row 1 (column 1) named twice: both updates combine into it, as onnxruntime computes."""
    attrs = {"axis": 1} if op == "ScatterElements" else {}
    idx = np.array([[1, 0, 1], [2, 1, 1]], I64) if attrs else np.array([[1], [0], [-2]], I64)
    upd = [2, 3] if attrs else [3, 3]
    model = make_model([helper.make_node(op, ["x", "i", "u"], ["y"], reduction=reduction, **attrs)],
                       {"x": [3, 3], "u": upd}, ["y"], initializers={"i": idx}, opset=18)
    top = check(model, {"x": rand(3, 3), "u": rand(*upd)}, op_names=[f"top.{op}"])
    (scatter,) = [o for o in top.module.walk() if o.name == f"top.{op}"]
    assert scatter.attributes["reduction"].value.data == code


def test_an_unknown_scatter_reduction_is_an_error_naming_it():
    model = make_model([helper.make_node("ScatterND", ["x", "j", "w"], ["z"], reduction="sub")], {"x": [2, 3], "w": [2, 3]},
                       ["z"], initializers={"j": np.array([[1], [0]], I64)}, opset=18)
    with pytest.raises(TpudslError, match="ScatterND 'z': reduction 'sub' is not supported \\(none, add, max, min, mul are\\)"):
        convert_onnx(model, "m")


def test_pow_forms():
    nodes = [helper.make_node("Pow", ["x", "y"], ["computed"]), helper.make_node("Pow", ["two", "y"], ["base"]),
             helper.make_node("Pow", ["x", "three"], ["exponent"])]
    model = make_model(nodes, {"x": [3, 4], "y": [4]}, ["computed", "base", "exponent"],
                       initializers={"two": np.array(2.0, np.float32), "three": np.array(3.0, np.float32)})
    check(model, {"x": rand(3, 4, low=0.1, high=2), "y": rand(4, low=-2, high=2)}, op_names=["top.Pow3", "top.Pow2", "top.Pow"])


@pytest.mark.parametrize("axis", [-1, 1])
def test_rms_normalization(axis):
    scale_shape = [3, 4] if axis == 1 else [4]
    model = make_model([helper.make_node("RMSNormalization", ["x", "s"], ["y"], axis=axis, epsilon=1e-3)], {"x": [2, 3, 4]},
                       ["y"], initializers={"s": rand(*scale_shape)}, opset=23)
    check(model, {"x": rand(2, 3, 4)}, op_names=["top.RMSNorm"])


def test_swish():
    model = make_model([helper.make_node("Swish", ["x"], ["y"], alpha=1.7)], {"x": [2, 5]}, ["y"], opset=24)
    check(model, {"x": rand(2, 5, low=-4, high=4)}, op_names=["top.Swish"])


def test_int_pow_type_stays_float_valued():
    """Pow of integer tensors (held as float) gives the integer powers exactly."""
    model = make_model([helper.make_node("Pow", ["x", "y"], ["z"])], {"x": [4], "y": [4]}, ["z"], opset=15,
                       input_types={"x": TensorProto.INT32, "y": TensorProto.INT32})
    check(model, {"x": np.array([2, -3, 4, 0], np.int32), "y": np.array([3, 3, 0, 2], np.int32)}, rtol=0, atol=0)


@pytest.mark.parametrize(("equation", "shapes"), [
    ("bij, bjk -> bik", [(2, 3, 4), (2, 4, 5)]),
    ("abcd,cde->abe", [(2, 3, 4, 5), (4, 5, 6)]),
    ("ij,jk", [(3, 4), (4, 2)]),  # implicit output: the letters used once, sorted
    ("...ii->...i", [(2, 3, 3)]),
    ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]),
])
def test_einsum(equation, shapes):
    names = [f"x{i}" for i in range(len(shapes))]
    model = make_model([helper.make_node("Einsum", names, ["y"], equation=equation)], dict(zip(names, shapes, strict=True)),
                       ["y"], opset=12)
    check(model, {n: rand(*s) for n, s in zip(names, shapes, strict=True)}, op_names=["top.Einsum"])

"""Whole-graph behaviour of the ONNX frontend: dynamic filters, folding of shape subgraphs, names,
unsupported ops, input shapes and output cuts."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from frontend_support import UNSUPPORTED, check, make_model, rand, run_ort, run_top
from onnx import TensorProto
from onnx import helper as h
from onnx import numpy_helper

from tpudsl.dialects.opdef import loc_name
from tpudsl.frontend import onnx_graph
from tpudsl.frontend.onnx_import import convert_onnx
from tpudsl.frontend.onnx_ops import CONVERTERS
from tpudsl.ir.diagnostics import InternalError, TpudslError
from tpudsl.ir.module import save_module


def i64(*v):
    return np.array(v, np.int64)


def ops_named(mod, name):
    return [op for op in mod.module.walk() if op.name == name]


# ---- dynamic filters (DragGAN / StyleGAN2 modulated convolutions) ----------------------------


def test_conv_with_computed_filter_and_bias():
    """filter = weight * style (computed from an input), like a StyleGAN2 modulated conv."""
    nodes = [
        h.make_node("Reshape", ["style", "shp"], ["/b8/style4d"]),
        h.make_node("Mul", ["weight", "/b8/style4d"], ["/b8/conv0/Mul_output_0"]),
        h.make_node("ReduceSum", ["style", "ax"], ["/b8/bias"], keepdims=0),
        h.make_node("Expand", ["/b8/bias", "oc"], ["/b8/bias4"]),
        h.make_node("Conv", ["x", "/b8/conv0/Mul_output_0", "/b8/bias4"], ["y"], pads=[1, 1, 1, 1]),
    ]
    model = make_model(nodes, {"x": [1, 3, 6, 6], "style": [1, 3]}, ["y"],
                       {"weight": rand(4, 3, 3, 3), "shp": i64(1, 3, 1, 1), "ax": i64(1), "oc": i64(4)})
    mod = check(model, {"x": rand(1, 3, 6, 6), "style": rand(1, 3)}, op_names=["top.Conv"])
    conv = ops_named(mod, "top.Conv")[0]
    assert conv.attributes["weight_is_coeff"].value.data == 0
    assert loc_name(conv.operands[1].owner) == "/b8/conv0/Mul_output_0"


def test_conv_transpose_with_transposed_computed_filter():
    """DragGAN: the ConvTranspose filter is a Transpose of a computed tensor (TPU-MLIR raised
    KeyError: '/synthesis/b8/conv0/Transpose_output_0' here)."""
    name = "/synthesis/b8/conv0/Transpose_output_0"
    nodes = [
        h.make_node("Mul", ["weight", "mod"], ["/synthesis/b8/conv0/Mul_output_0"]),
        h.make_node("Transpose", ["/synthesis/b8/conv0/Mul_output_0"], [name], perm=[1, 0, 2, 3]),
        h.make_node("ConvTranspose", ["x", name], ["y"], strides=[2, 2], pads=[1, 1, 1, 1]),
    ]
    model = make_model(nodes, {"x": [1, 4, 5, 5], "mod": [1, 4, 1, 1]}, ["y"], {"weight": rand(3, 4, 3, 3)})
    mod = check(model, {"x": rand(1, 4, 5, 5), "mod": rand(1, 4, 1, 1)}, op_names=["top.Deconv"])
    deconv = ops_named(mod, "top.Deconv")[0]
    assert deconv.attributes["dynweight_reorderd"].value.data == 0
    assert loc_name(deconv.operands[1].owner) == name
    # The filter stays in ONNX layout [ic, oc/g, kh, kw].
    assert tuple(deconv.operands[1].type.get_shape()) == (4, 3, 3, 3)


def test_grouped_conv_transpose_with_computed_filter():
    nodes = [
        h.make_node("Mul", ["weight", "mod"], ["w"]),
        h.make_node("ConvTranspose", ["x", "w", "b"], ["y"], group=2, strides=[2, 2]),
    ]
    model = make_model(nodes, {"x": [1, 4, 3, 3], "mod": [4, 1, 1, 1]}, ["y"], {"weight": rand(4, 3, 2, 2), "b": rand(6)})
    check(model, {"x": rand(1, 4, 3, 3), "mod": rand(4, 1, 1, 1)}, op_names=["top.Deconv"])


# ---- folding ----------------------------------------------------------------------------------


def torch_flatten_model():
    """x.view(x.size(0), -1) as torch exports it, with a symbolic batch."""
    nodes = [
        h.make_node("Relu", ["x"], ["/relu/Relu_output_0"]),
        h.make_node("Shape", ["/relu/Relu_output_0"], ["/Shape_output_0"]),
        h.make_node("Constant", [], ["/Constant_output_0"], value=numpy_helper.from_array(np.array(0, np.int64))),
        h.make_node("Gather", ["/Shape_output_0", "/Constant_output_0"], ["/Gather_output_0"], axis=0),
        h.make_node("Unsqueeze", ["/Gather_output_0", "zero"], ["/Unsqueeze_output_0"]),
        h.make_node("Concat", ["/Unsqueeze_output_0", "minus1"], ["/Concat_output_0"], axis=0),
        h.make_node("Reshape", ["/relu/Relu_output_0", "/Concat_output_0"], ["/Reshape_output_0"]),
        # A ConstantOfShape/Range pair computing an index list from the shape.
        h.make_node("Shape", ["/Reshape_output_0"], ["/Shape_1_output_0"]),
        h.make_node("Gather", ["/Shape_1_output_0", "one"], ["/Gather_1_output_0"], axis=0),
        h.make_node("Range", ["zero_s", "/Gather_1_output_0", "two_s"], ["/Range_output_0"]),
        h.make_node("Gather", ["/Reshape_output_0", "/Range_output_0"], ["/Gather_2_output_0"], axis=1),
        h.make_node("ConstantOfShape", ["/Shape_1_output_0"], ["/ConstantOfShape_output_0"],
                    value=numpy_helper.from_array(np.array([0.5], np.float32))),
        h.make_node("Add", ["/Reshape_output_0", "/ConstantOfShape_output_0"], ["/Add_output_0"]),
        h.make_node("Concat", ["/Add_output_0", "/Gather_2_output_0"], ["out"], axis=1),
    ]
    inits = {"zero": i64(0), "minus1": i64(-1), "one": np.array(1, np.int64),
             "zero_s": np.array(0, np.int64), "two_s": np.array(2, np.int64)}
    return make_model(nodes, {"x": ["batch", 2, 3, 4]}, ["out"], inits)


def test_shape_subgraphs_are_folded():
    model = torch_flatten_model()
    x = rand(2, 2, 3, 4)
    mod = convert_onnx(model, "m", input_shapes=[[2, 2, 3, 4]])
    np.testing.assert_allclose(run_top(mod, {"x": x})["out"], run_ort(model, {"x": x})["out"], rtol=1e-6)
    computed = {loc_name(op) for op in mod.module.walk() if op.name.startswith("top.") and op.name != "top.Weight"}
    assert computed == {"x", "/relu/Relu_output_0", "/Reshape_output_0", "/Gather_2_output_0", "/Add_output_0", "out"}
    # The folded index list and constant fill are weights named after the tensors they replace;
    # the shape arithmetic only fed attributes and leaves nothing behind.
    assert set(mod.weights) == {"/Range_output_0", "/ConstantOfShape_output_0"}


def test_input_shapes_decide_folded_values():
    model = torch_flatten_model()
    mod = convert_onnx(model, "m", input_shapes=[[3, 2, 3, 4]])
    reshape = next(op for op in mod.module.walk() if loc_name(op) == "/Reshape_output_0")
    assert tuple(reshape.results[0].type.get_shape()) == (3, 24)


def test_ceil_pool_corrections_are_found_once_per_graph(monkeypatch):
    """onnx infers a window too many for this ceil-mode pool (its last window starts in the end pad):
    the first inference finds the correction, and each folding round after it infers once, from it."""
    nodes = [h.make_node("MaxPool", ["x"], ["p"], kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 1, 1], ceil_mode=1),
             h.make_node("Shape", ["p"], ["s"]), h.make_node("Reshape", ["p", "s"], ["y"])]
    model = make_model(nodes, {"x": [1, 1, 4, 4]}, ["y"], opset=19)
    inferences, infer_once = [], onnx_graph._infer_once
    monkeypatch.setattr(onnx_graph, "_infer_once", lambda *a: inferences.append(a) or infer_once(*a))
    prepared = onnx_graph.prepare(model)
    assert prepared.shapes["p"] == prepared.shapes["y"] == tuple(run_ort(model, {"x": rand(1, 1, 4, 4)})["y"].shape)
    # the first inference and its corrected one, then one for each of the two folding rounds (Shape folded, none)
    assert len(inferences) == 2 + 2


def test_constant_only_unsupported_op_is_folded():
    """NonZero has no converter, but on a constant it is just evaluated."""
    nodes = [h.make_node("NonZero", ["mask"], ["nz"]), h.make_node("Squeeze", ["nz", "zero"], ["idx"]),
             h.make_node("Gather", ["x", "idx"], ["y"], axis=1)]
    model = make_model(nodes, {"x": [2, 5]}, ["y"], {"mask": np.array([1, 0, 1, 1, 0], np.float32), "zero": i64(0)})
    check(model, {"x": rand(2, 5)}, op_names=["top.Gather"])


def test_random_ops_are_never_folded():
    nodes = [h.make_node("RandomNormalLike", ["x"], ["noise"]), h.make_node("Add", ["x", "noise"], ["y"])]
    model = make_model(nodes, {"x": [1, 4]}, ["y"])
    with pytest.raises(TpudslError, match="unsupported ONNX ops: RandomNormalLike"):
        convert_onnx(model, "m")


# ---- unsupported ops: one error naming them all -----------------------------------------------


def draggan_like_model():
    nodes = []
    prev = "x"
    for i in range(5):
        nodes.append(h.make_node("RandomNormalLike", [prev], [f"/synthesis/b4/noise{i}"], name=f"/synthesis/b4/RandomNormalLike_{i}"))
        nodes.append(h.make_node("Add", [prev, f"/synthesis/b4/noise{i}"], [f"/synthesis/b4/add{i}"]))
        prev = f"/synthesis/b4/add{i}"
    # Custom-domain ops stand for "unsupported": supporting a real ONNX op never breaks these tests.
    nodes.append(h.make_node("Mix", [prev, prev], ["e"], domain=UNSUPPORTED, name="/mix/Mix"))
    nodes.append(h.make_node("Head", ["e"], ["y"], domain=UNSUPPORTED, name="/head/Head"))
    return make_model(nodes, {"x": [2, 3]}, ["y"], domains=[UNSUPPORTED])


def test_unsupported_ops_exact_message():
    with pytest.raises(TpudslError) as info:
        convert_onnx(draggan_like_model(), "m")
    assert str(info.value) == (
        "error: unsupported ONNX ops: "
        "RandomNormalLike (5 nodes: /synthesis/b4/RandomNormalLike_0, /synthesis/b4/RandomNormalLike_1, "
        "/synthesis/b4/RandomNormalLike_2, ...); com.example.unsupported.Mix (1 node: /mix/Mix); "
        "com.example.unsupported.Head (1 node: /head/Head); "
        "hint: RandomNormalLike: export the model with constant noise, e.g. noise_mode='const' "
        "(random ops cannot be compiled)"
    )


def test_unsupported_op_outside_the_cut_is_ignored():
    nodes = [h.make_node("Relu", ["x"], ["r"]), h.make_node("Head", ["r"], ["y"], domain=UNSUPPORTED)]
    model = make_model(nodes, {"x": [2, 3]}, ["y"], domains=[UNSUPPORTED])
    mod = convert_onnx(model, "m", output_names=["r"])
    assert [loc_name(op) for op in mod.module.walk() if op.name.startswith("top.")] == ["x", "r"]


def test_converter_error_names_the_node():
    """A mode no ONNX opset defines (the converter's refusal, not the checker's)."""
    node = h.make_node("Pad", ["x", "p"], ["y"], mode="mirror", name="/pad/Pad")
    model = make_model([node], {"x": [2, 3]}, ["y"], {"p": i64(1, 1, 1, 1)}, opset=19)
    with pytest.raises(TpudslError, match=re.escape("error: Pad '/pad/Pad': mode 'mirror' is not supported")):
        convert_onnx(model, "m")


# ---- names --------------------------------------------------------------------------------------


def named_net():
    nodes = [
        h.make_node("Conv", ["input.1", "conv1.weight", "conv1.bias"], ["/conv1/Conv_output_0"], pads=[1, 1, 1, 1]),
        h.make_node("BatchNormalization", ["/conv1/Conv_output_0", "bn.w", "bn.b", "bn.m", "bn.v"], ["/bn1/BatchNormalization_output_0"]),
        h.make_node("Relu", ["/bn1/BatchNormalization_output_0"], ["/relu/Relu_output_0"]),
        h.make_node("MaxPool", ["/relu/Relu_output_0"], ["/maxpool/MaxPool_output_0"], kernel_shape=[2, 2], strides=[2, 2]),
        h.make_node("GlobalAveragePool", ["/maxpool/MaxPool_output_0"], ["/avgpool/GlobalAveragePool_output_0"]),
        h.make_node("Flatten", ["/avgpool/GlobalAveragePool_output_0"], ["/Flatten_output_0"]),
        h.make_node("Gemm", ["/Flatten_output_0", "fc.weight", "fc.bias"], ["logits"], transB=1),
        h.make_node("Softmax", ["logits"], ["prob"], axis=1),
    ]
    inits = {"conv1.weight": rand(8, 3, 3, 3), "conv1.bias": rand(8), "bn.w": rand(8), "bn.b": rand(8),
             "bn.m": rand(8), "bn.v": rand(8, low=0.5, high=1.5), "fc.weight": rand(10, 8), "fc.bias": rand(10)}
    return make_model(nodes, {"input.1": [1, 3, 8, 8]}, ["logits", "prob"], inits)


def test_every_onnx_name_is_a_loc_in_the_mlir(tmp_path):
    model = named_net()
    mod = check(model, {"input.1": rand(1, 3, 8, 8)})
    save_module(mod, tmp_path / "net.mlir")
    text = (tmp_path / "net.mlir").read_text()
    expected = {o for n in model.graph.node for o in n.output} | {"input.1"} | {i.name for i in model.graph.initializer}
    for name in expected:
        assert f'loc("{name}")' in text, name
    weight_file = tmp_path / mod.module.attributes["module.weight_file"].data
    np.testing.assert_array_equal(np.load(weight_file)["fc.weight"],
                                  numpy_helper.to_array(next(i for i in model.graph.initializer if i.name == "fc.weight")))


def test_outputs_are_returned_in_onnx_order():
    mod = convert_onnx(named_net(), "m")
    ret = mod.main_func().body.block.last_op
    assert [loc_name(v.owner) for v in ret.operands] == ["logits", "prob"]


# ---- inputs and outputs -------------------------------------------------------------------------


def test_dynamic_input_needs_input_shapes():
    model = make_model([h.make_node("Relu", ["x"], ["y"])], {"x": ["n", 3]}, ["y"])
    with pytest.raises(TpudslError, match=r"input 'x' has dynamic shape \['n', 3\]; give its shape with --input_shapes"):
        convert_onnx(model, "m")


def test_input_shapes_count_and_rank_are_checked():
    model = make_model([h.make_node("Add", ["x", "z"], ["y"])], {"x": ["n", 3], "z": [1, 3]}, ["y"])
    with pytest.raises(TpudslError, match="gives 1 shape.* model has 2 input"):
        convert_onnx(model, "m", input_shapes=[[2, 3]])
    with pytest.raises(TpudslError, match="has static shape"):
        convert_onnx(model, "m", input_shapes=[[2, 3], [2, 3]])
    with pytest.raises(TpudslError, match="has rank 2"):
        convert_onnx(model, "m", input_shapes=[[2, 3, 1], [1, 3]])


def test_unknown_output_name():
    model = make_model([h.make_node("Relu", ["x"], ["y"])], {"x": [1, 3]}, ["y"])
    with pytest.raises(TpudslError, match="output names not in the model: nope"):
        convert_onnx(model, "m", output_names=["nope"])


def test_initializers_listed_as_inputs_are_weights():
    """IR version 3 models list every initializer among the graph inputs too."""
    w = rand(3, 3)
    graph = h.make_graph([h.make_node("MatMul", ["x", "w"], ["y"])], "g",
                         [h.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                          h.make_tensor_value_info("w", TensorProto.FLOAT, [3, 3])],
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
                         [numpy_helper.from_array(w, "w")])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 9)], ir_version=3)
    mod = convert_onnx(model, "m")
    assert len(mod.main_func().body.block.args) == 1
    x = rand(2, 3)
    np.testing.assert_allclose(run_top(mod, {"x": x})["y"], x @ w, rtol=1e-5)


def test_caller_model_is_not_modified():
    model = torch_flatten_model()
    before = model.SerializeToString()
    convert_onnx(model, "m", input_shapes=[[2, 2, 3, 4]])
    assert model.SerializeToString() == before
    assert isinstance(model, onnx.ModelProto)


def _one_node_model(node: onnx.NodeProto, opset: int = 13) -> onnx.ModelProto:
    graph = h.make_graph([node], "g", [h.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])


@pytest.mark.parametrize("node, message", [
    (h.make_node("MaxPool", ["x"], ["y"], name="/pool"), "MaxPool '/pool': required attribute 'kernel_shape' is missing"),
    (h.make_node("Relu", ["x", "x"], ["y"], name="/r"), "Relu '/r': has 2 inputs; Relu takes at most 1"),
    (h.make_node("Relu", [""], ["y"], name="/r"), "Relu '/r': required input #0 ('X') is missing"),
    (h.make_node("Relu", ["x"], ["y", "z"], name="/r"), "Relu '/r': has 2 outputs; Relu has at most 1"),
])
def test_a_node_its_onnx_schema_forbids_is_bad_input(node, message):
    """What onnx.checker would reject (a required attribute or input absent, too many inputs or
    outputs) is bad input, named by node, found before its converter runs."""
    with pytest.raises(TpudslError) as info:
        convert_onnx(_one_node_model(node), "m")
    assert str(info.value) == f"error: {message}"


def test_a_converter_bug_is_an_internal_error_naming_the_node(monkeypatch):
    """An exception a converter raises on a node its schema allows is a bug in tpudsl, not a
    "malformed node": InternalError names the op type and node and chains the original exception."""
    def broken(node, conv):
        return {}["kernel"]
    monkeypatch.setitem(CONVERTERS, "Relu", broken)
    with pytest.raises(InternalError) as info:
        convert_onnx(_one_node_model(h.make_node("Relu", ["x"], ["y"], name="/act/relu")), "m")
    assert info.value.where == "the Relu converter, at node '/act/relu'"
    assert isinstance(info.value.__cause__, KeyError)


def test_custom_domain_op_on_constants_is_reported():
    """A custom-domain node is never folded (onnx cannot evaluate it), even on constant inputs:
    it is reported, with its domain, like any unsupported op."""
    nodes = [h.make_node("Foo", ["c"], ["f"], domain="my.domain", name="/custom/Foo"), h.make_node("Add", ["x", "f"], ["y"])]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, None)], [numpy_helper.from_array(rand(2), "c")])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13), h.make_opsetid("my.domain", 1)])
    with pytest.raises(TpudslError, match=r"^error: unsupported ONNX ops: my.domain.Foo \(1 node: /custom/Foo\)$"):
        convert_onnx(model, "m")

"""Zero-sized tensors (a 0 dim is an empty dimension, not a dynamic one) through the frontend and
the interpreter, against onnxruntime: element-wise ops, Concat with an empty input, Slice to an
empty result, reductions over and beside an empty axis, Reshape to an empty shape, Split into
an empty piece; to the .bmodel: a Concat's empty input left out, any other zero-sized tensor one
error naming it. The text layer and shape rules: lit_tests/shape_infer/zero_sized.mlir."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from frontend_support import check, make_model, rand, run_ort
from onnx import helper as h

from tests.backend_support import assert_f32_close, compile_for, lowered
from tests.cli_support import run_main
from tpudsl.backend.cmodel import run_bmodel
from tpudsl.dialects.opdef import loc_name


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


def test_an_empty_concat_input_is_left_out_and_the_model_deploys(tmp_path):
    """The backend has no zero-sized tensors: the frontend leaves an empty Concat input out (the ops
    that only fed it die), and the .bmodel (its empty graph input kept) runs on the cmodel as
    onnxruntime computes the model."""
    nodes = [h.make_node("Add", ["e", "e"], ["s"]), h.make_node("Relu", ["s"], ["r"]),
             h.make_node("Concat", ["r", "x", "r"], ["y"], axis=0), h.make_node("Sigmoid", ["y"], ["z"])]
    model = make_model(nodes, {"e": [0, 3], "x": [2, 3]}, ["z"])
    feed = {"e": rand(0, 3), "x": rand(2, 3)}
    top = check(model, feed, op_names=["top.Concat"])
    concat = next(op for op in top.module.walk() if op.name == "top.Concat")
    assert [loc_name(v.owner) for v in concat.operands] == ["x"]
    tpu = lowered(model)
    assert [op.name for op in tpu.module.walk() if op.name.startswith("tpu.")] == ["tpu.Concat", "tpu.Active"]
    got, _ = run_bmodel(compile_for(tpu, "bm1684x", str(tmp_path / "m.bmodel")), feed)
    assert_f32_close(got["z"], run_ort(model, feed)["z"], "z")


def test_a_zero_sized_tensor_the_backend_needs_is_one_error_naming_it(tmp_path):
    """An empty tensor that stays (here a model output) is refused by name at codegen's checks:
    one line, exit status 1, no .bmodel."""
    node = h.make_node("Slice", ["x", "b", "e"], ["y"])
    model = make_model([node, h.make_node("Relu", ["y"], ["z"])], {"x": [4, 3]}, ["z"],
                       {"b": i64(2, 0), "e": i64(2, 3)})
    onnx.save(model, tmp_path / "m.onnx")
    np.savez(tmp_path / "in.npz", x=rand(4, 3))
    run_main("model_transform", "--model_name", "m", "--model_def", "m.onnx", "--mlir", "m.mlir",
             "--test_input", "in.npz", cwd=tmp_path)
    r = run_main("model_deploy", "--mlir", "m.mlir", "--quantize", "F32", "--processor", "bm1684x",
                 "--model", "m.bmodel", cwd=tmp_path)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1] == \
        "error: backend: 'tpu.Slice' op \"y\" has a zero-sized tensor (0, 3); not modelled"
    assert not (tmp_path / "m.bmodel").exists()

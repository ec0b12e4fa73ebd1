"""LSTM and GRU to the .bmodel: model_transform + model_deploy F32 and F16 (the recurrent op stays F32,
cast from the F16 Tanh before it) on a tiny forward LSTM and a tiny bidirectional GRU; the bmodel's
outputs (record 99 on the cmodel) against the Tpu interpreter's and against onnxruntime's."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

from tests.frontend_support import run_ort
from tests.test_frontend_rnn import rnn_model
from tpudsl.cli import model_deploy, model_runner, model_transform
from tpudsl.ir.module import load_module

# (op, rnn_model's arguments): a reverse batch-first LSTM with every optional operand (the frontend's
# Reverse ops around a forward layer), a bidirectional GRU with linear_before_reset 0: both cells, both
# layouts, both directions of the record; a bidirectional LSTM with peepholes (record 102).
CASES = {
    "lstm": ("LSTM", dict(seq=4, batch=2, size=3, hidden=5, direction="reverse", layout=1)),
    "lstm_peepholes": ("LSTM", dict(seq=3, batch=2, size=3, hidden=4, direction="bidirectional", layout=0,
                                    peepholes=True)),
    "gru": ("GRU", dict(seq=3, batch=2, size=4, hidden=3, direction="bidirectional", layout=0,
                        linear_before_reset=0)),
}


def tanh_before(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with a Tanh between the input X and the recurrent node: an op that runs in the mode's
    type, so F16 casts its result to f32 for the recurrent op."""
    node = model.graph.node[0]
    node.input[0] = "X_tanh"
    model.graph.node.insert(0, helper.make_node("Tanh", ["X"], ["X_tanh"]))
    return model


def reference(op: str, kwargs: dict, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """onnxruntime's outputs. It refuses layout 1 (batch-major), so a layout 1 model is run as its layout
    0 twin (the same weights) on the transposed feed, the outputs transposed back (check_rnn's way)."""
    if not kwargs.get("layout"):
        return run_ort(tanh_before(rnn_model(op, **kwargs)[0]), feed)
    twin = tanh_before(rnn_model(op, **{**kwargs, "layout": 0})[0])
    ref = run_ort(twin, {k: v.transpose(1, 0, 2) for k, v in feed.items()})
    return {k: v.transpose(2, 0, 1, 3) if k == "Y" else v.transpose(1, 0, 2) for k, v in ref.items()}


def outputs(path) -> dict[str, np.ndarray]:
    return dict(np.load(path))


@pytest.mark.parametrize("mode", ["F32", "F16"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_bmodel_equals_the_tpu_interpreter_and_onnxruntime(case, mode, tmp_path):
    op, kwargs = CASES[case]
    model, feed = rnn_model(op, **kwargs)
    model = tanh_before(model)
    onnx.save(model, tmp_path / "m.onnx")
    np.savez(tmp_path / "in.npz", **feed)
    ref = reference(op, kwargs, feed)
    np.savez(tmp_path / "ref.npz", **ref)
    model_transform.run(["--model_name", "m", "--model_def", str(tmp_path / "m.onnx"), "--mlir",
                         str(tmp_path / "m.mlir")])
    # model_deploy's own checks: the Tpu level against onnxruntime, then the cmodel against the Tpu level.
    model_deploy.run(["--mlir", str(tmp_path / "m.mlir"), "--quantize", mode, "--processor", "bm1684x",
                      "--model", str(tmp_path / "m.bmodel"), "--test_input", str(tmp_path / "in.npz"),
                      "--test_reference", str(tmp_path / "ref.npz")])
    tpu_mlir = tmp_path / f"m_bm1684x_{mode.lower()}_tpu.mlir"
    recurrent = [o for o in load_module(tpu_mlir).module.walk() if o.name == f"tpu.{op}"]
    assert len(recurrent) == 1 and all(str(v.type.element_type) == "f32"
                                       for v in (*recurrent[0].operands, *recurrent[0].results)
                                       if hasattr(v.type, "element_type"))
    for src, out in ((tmp_path / "m.bmodel", "bmodel.npz"), (tpu_mlir, "tpu.npz")):
        model_runner.run(["--input", str(tmp_path / "in.npz"), "--model", str(src), "--output", str(tmp_path / out)])
    bmodel, tpu = outputs(tmp_path / "bmodel.npz"), outputs(tmp_path / "tpu.npz")
    assert set(ref) <= set(bmodel), (sorted(ref), sorted(bmodel))
    for name, want in ref.items():
        # The cmodel's float32 matmuls sum in their own order: 1e-5 relative to the tensor's largest value.
        np.testing.assert_allclose(bmodel[name], tpu[name], rtol=0, atol=1e-5 * np.abs(tpu[name]).max(),
                                   err_msg=f"{name}: bmodel vs Tpu interpreter")
        # F16: the Tanh before is rounded to float16 (2^-11 relative), then carried through the steps.
        tol = 1e-5 if mode == "F32" else 5e-3
        np.testing.assert_allclose(bmodel[name], want, rtol=0, atol=tol * np.abs(want).max(),
                                   err_msg=f"{name}: bmodel vs onnxruntime")

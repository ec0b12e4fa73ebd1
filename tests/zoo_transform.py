"""model_transform of a zoo model (tests/models) checked against onnxruntime, shared by the files of
the zoo's rounds (test_zoo3_models.py, test_zoo4_models.py)."""

from __future__ import annotations

import numpy as np
import onnx

from tests.models import onnx_inference, random_inputs
from tpudsl.cli import model_transform


def transform(d, name: str, model: onnx.ModelProto, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """model_transform with --test_input `feed` (its own comparison with onnxruntime) in directory
    `d`; the Top interpreter's tensors."""
    onnx.save(model, d / f"{name}.onnx")
    np.savez(d / f"{name}_in.npz", **feed)
    model_transform.run(["--model_name", name, "--model_def", str(d / f"{name}.onnx"), "--mlir",
                         str(d / f"{name}.mlir"), "--test_input", str(d / f"{name}_in.npz"),
                         "--test_result", str(d / f"{name}_top.npz")])
    return dict(np.load(d / f"{name}_top.npz"))


def assert_transform_matches_onnxruntime(d, name: str, model: onnx.ModelProto, shape: tuple[int, ...]) -> None:
    """The Top module's output has `shape` and onnxruntime's values (run here, on the same input)."""
    feed = random_inputs(model)
    top = transform(d, name, model, feed)
    (out,) = (o.name for o in model.graph.output)
    want = onnx_inference(model, feed)[out]
    assert top[out].shape == want.shape == shape
    np.testing.assert_allclose(top[out], want, rtol=1e-4, atol=1e-4 * np.abs(want).max())

"""Whole YOLO networks as ultralytics exports them (tests/models/yolo.py) through the sophon-demo flow.

model_transform with sophon-demo's preprocessing (--mean 0,0,0 --scale 1/255 --pixel_format rgb) against
onnxruntime, run by the test itself on the preprocessed image written out in numpy (YOLOv5s with the opsets'
Resize forms, YOLOv8n with opset 12's Softmax, the raw heads under --add_postprocess yolov5). Then
model_deploy with --quant_input: the decoded YOLOv5s in F16 with --fuse_preprocess --customization_format
BGR_PACKED, the .bmodel fed the raw BGR bytes; its decode alone in INT8 (asymmetric: the symmetric form's
Concat of xy, wh and conf at one KLD threshold clips the boxes, TPU-MLIR's "npz compare FAILED",
bench/RESULTS.md "yolo deploy"). Each .bmodel's output must equal the Tpu interpreter's bit for bit
(model_deploy's third check) and be close to Top's. The decode keeps rank-5 tensors ([1, 3, H, W, 85]:
Sigmoid (a Lut in INT8), Split, Concat), which the backend folds to 4-D views. Small sizes (64x64, 1/8
width): the file stays within a few seconds.
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
import onnx
import pytest

from tests.models import onnx_inference
from tests.models.yolo import SCALE, images, preprocessed, yolov5_decode, yolov5s, yolov8n
from tpudsl.cli import model_deploy, model_runner, model_transform, run_calibration
from tpudsl.cli.compare import cosine_similarity

SIZE = 64


def transform(d, name: str, model: onnx.ModelProto, *flags: str) -> dict[str, np.ndarray]:
    onnx.save(model, d / f"{name}.onnx")
    np.savez(d / f"{name}_in.npz", images=preprocessed(images(0, SIZE)))
    model_transform.run(["--model_name", name, "--model_def", str(d / f"{name}.onnx"),
                         "--mlir", str(d / f"{name}.mlir"),
                         "--mean", "0,0,0", "--scale", ",".join([str(SCALE)] * 3), "--pixel_format", "rgb",
                         "--test_input", str(d / f"{name}_in.npz"), "--test_result", str(d / f"{name}_top.npz"),
                         *flags])
    return dict(np.load(d / f"{name}_top.npz"))


@pytest.fixture(scope="module")
def v5(tmp_path_factory):
    """The decoded YOLOv5s (opset 12: Resize with a constant empty roi and scales) transformed once."""
    d = tmp_path_factory.mktemp("yolov5")
    model = yolov5s(SIZE, opset=12)
    return d, model, transform(d, "v5", model)


def test_yolov5_transform_matches_onnxruntime(v5):
    _, model, top = v5
    want = onnx_inference(model, {"images": preprocessed(images(0, SIZE))})["output0"]
    assert top["output0"].shape == want.shape == (1, 3 * (8 * 8 + 4 * 4 + 2 * 2), 85)
    np.testing.assert_allclose(top["output0"], want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


@pytest.mark.parametrize(("name", "build"), [
    ("v5_opset13_sizes", lambda: yolov5s(SIZE, opset=13, resize_form="sizes")),
    ("v8_opset12", lambda: yolov8n(SIZE, opset=12)),  # Softmax before opset 13: torch's Transpose pair
])
def test_model_transform_matches_onnxruntime(tmp_path, name, build):
    model = build()
    top = transform(tmp_path, name, model)
    want = onnx_inference(model, {"images": preprocessed(images(0, SIZE))})["output0"]
    assert top["output0"].shape == want.shape == ((1, 252, 85) if name.startswith("v5") else (1, 84, 84))
    np.testing.assert_allclose(top["output0"], want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


def test_raw_heads_keep_their_names_under_add_postprocess(tmp_path):
    """sophon-demo's form: --output_names of the three head convs and --add_postprocess yolov5; the heads are
    compared with onnxruntime's head convs by name."""
    model = yolov5s(SIZE, opset=17)
    top = transform(tmp_path, "v5raw", model, "--output_names", "head.m0,head.m1,head.m2", "--add_postprocess",
                    "yolov5")
    heads = ["head.m0", "head.m1", "head.m2"]
    want = onnx_inference(model, {"images": preprocessed(images(0, SIZE))}, all_tensors=True)
    for head in heads:
        np.testing.assert_allclose(top[head], want[head], rtol=1e-4, atol=1e-4 * np.abs(want[head]).max())
    assert top["yolo_post"].shape == (1, 1, 200, 7) and "output0" not in top


def deploy(d, mlir: str, inputs: str, reference: str, mode: str, *flags: str) -> dict[str, np.ndarray]:
    """model_deploy with sophon-demo's flags; its third check must pass; the .bmodel's outputs on `inputs`."""
    bmodel = d / f"{mlir}_{mode}.bmodel"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        model_deploy.run(["--mlir", str(d / f"{mlir}.mlir"), "--quantize", mode, *flags, "--processor", "bm1684x",
                          "--model", str(bmodel), "--quant_input", "--test_input", str(d / inputs),
                          "--test_reference", str(d / reference)])
    assert "bmodel check passed: 1 outputs of the cmodel equal the Tpu interpreter's" in err.getvalue()
    model_runner.run(["--input", str(d / inputs), "--model", str(bmodel), "--output", str(d / "out.npz")])
    return dict(np.load(d / "out.npz"))


def test_whole_yolov5_f16_on_the_raw_bgr_image(v5):
    """The decoded YOLOv5s, F16, --fuse_preprocess --customization_format BGR_PACKED: the .bmodel fed the raw
    bytes gives the Top output of the preprocessed image."""
    d, _, top = v5
    np.savez(d / "raw.npz", images_raw=np.ascontiguousarray(images(0, SIZE)[..., ::-1]))  # NHWC, BGR
    got = deploy(d, "v5", "raw.npz", "v5_top.npz", "F16", "--fuse_preprocess", "--customization_format",
                 "BGR_PACKED")
    assert cosine_similarity(got["output0"], top["output0"]) > 0.9999


def test_yolov5_decode_int8_asymmetric(tmp_path):
    """The decode alone in INT8 (asymmetric; its rank-5 Sigmoid is a Lut): calibrated on head logits of the
    range the network gives (+-20), the .bmodel close to Top."""
    rng = np.random.default_rng(0)
    logits = lambda: (rng.standard_normal((1, 255, 4, 4)) * 6).astype(np.float32)  # noqa: E731
    onnx.save(yolov5_decode(), tmp_path / "dec.onnx")
    np.savez(tmp_path / "in.npz", head=logits())
    model_transform.run(["--model_name", "dec", "--model_def", str(tmp_path / "dec.onnx"), "--mlir",
                         str(tmp_path / "dec.mlir"), "--test_input", str(tmp_path / "in.npz"), "--test_result",
                         str(tmp_path / "dec_top.npz")])
    (tmp_path / "cali").mkdir()
    for i in range(4):
        np.savez(tmp_path / "cali" / f"{i}.npz", head=logits())
    run_calibration._main([str(tmp_path / "dec.mlir"), "--dataset", str(tmp_path / "cali"), "--input_num", "4",
                           "--quiet", "-o", str(tmp_path / "dec_cali")])
    got = deploy(tmp_path, "dec", "in.npz", "dec_top.npz", "INT8", "--asymmetric", "--calibration_table",
                 str(tmp_path / "dec_cali"))
    assert cosine_similarity(got["output0"], np.load(tmp_path / "dec_top.npz")["output0"]) > 0.99

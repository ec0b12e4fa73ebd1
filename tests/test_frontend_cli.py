"""model_transform end to end: files written, validation against onnxruntime, preprocessing, and
bad input giving one line, exit status 1 and no file written."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from cli_support import run_main
from frontend_support import error_lines, make_model, rand
from onnx import helper as h
from test_frontend_graph import draggan_like_model, named_net, torch_flatten_model

from tpudsl.cli import model_transform
from tpudsl.frontend import onnx_ops
from tpudsl.ir.diagnostics import TpudslError

TOOL = [sys.executable, str(Path(__file__).resolve().parents[1] / "tools" / "model_transform.py")]


def transform(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return run_main("model_transform", *args, cwd=tmp_path)


def transform_script(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*TOOL, *args], cwd=tmp_path, capture_output=True, text=True, timeout=300)


def written(tmp_path: Path) -> set[str]:
    return {p.name for p in tmp_path.iterdir()}


def test_end_to_end_with_validation(tmp_path):
    onnx.save(named_net(), tmp_path / "net.onnx")
    np.savez(tmp_path / "in.npz", **{"input.1": rand(1, 3, 8, 8)})
    r = transform_script(tmp_path, "--model_name", "net", "--model_def", "net.onnx", "--mlir", "net.mlir",
                         "--test_input", "in.npz", "--test_result", "net_top_outputs.npz")
    assert r.returncode == 0, r.stderr
    assert "npz compare PASSED." in r.stdout
    assert {"net.mlir", "net_top_f32_all_weight.npz", "net_in_f32.npz", "net_top_outputs.npz",
            "net_ref_outputs.npz"} <= written(tmp_path)
    # Every step is named on stderr as it starts, and timed when it ends.
    lines = r.stderr.splitlines()
    starts = [line.removeprefix("model_transform: ").removesuffix(" ...") for line in lines[0::2]]
    # Both runs come before any file is written (a test input the model cannot take is bad input).
    assert starts == ["convert ONNX to Top", "run struct-optimize, shape-infer, canonicalize, extra-optimize, shape-infer",
                      "load the test input", "run the Top interpreter", "run onnxruntime",
                      "write net.mlir and the input, Top and reference npz files", "compare Top with onnxruntime"]
    assert all(line.endswith(" ...") for line in lines[0::2])
    assert [re.sub(r": \d+\.\d\d s$", "", line) for line in lines[1::2]] == [line[:-4] for line in lines[0::2]]
    text = (tmp_path / "net.mlir").read_text()
    assert 'module.state = "TOP_F32"' in text and 'loc("prob")' in text and 'loc("input.1")' in text
    top, ref = np.load(tmp_path / "net_top_outputs.npz"), np.load(tmp_path / "net_ref_outputs.npz")
    np.testing.assert_allclose(top["prob"], ref["prob"], rtol=1e-5)
    # Intermediate tensors are compared too, not only the outputs.
    assert "/maxpool/MaxPool_output_0" in ref.files and "/maxpool/MaxPool_output_0" in top.files


def test_input_shapes_and_npy_input(tmp_path):
    onnx.save(torch_flatten_model(), tmp_path / "flat.onnx")
    np.save(tmp_path / "x.npy", rand(3, 2, 3, 4))
    r = transform(tmp_path, "--model_name", "flat", "--model_def", "flat.onnx", "--mlir", "flat.mlir",
                  "--input_shapes", "[[3, 2, 3, 4]]", "--test_input", "x.npy")
    assert r.returncode == 0, r.stderr
    assert "tensor<3x24xf32>" in (tmp_path / "flat.mlir").read_text()
    assert "flat_top_outputs.npz" in written(tmp_path)


def test_output_names_cut(tmp_path):
    onnx.save(named_net(), tmp_path / "net.onnx")
    r = transform(tmp_path, "--model_name", "net", "--model_def", "net.onnx", "--mlir", "net.mlir",
                  "--output_names", "/maxpool/MaxPool_output_0")
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "net.mlir").read_text()
    assert "tensor<1x8x4x4xf32>" in text.split("func.func @main")[1].split("{")[0]
    assert 'loc("prob")' not in text


def test_validation_failure_names_the_first_bad_tensor(tmp_path, monkeypatch):
    """A wrong converter (Relu converted as Sigmoid) must fail validation at the tensor it computes."""
    nodes = [h.make_node("Relu", ["x"], ["r"]), h.make_node("Mul", ["r", "r"], ["y"])]
    onnx.save(make_model(nodes, {"x": [2, 3]}, ["y"]), tmp_path / "m.onnx")
    np.savez(tmp_path / "in.npz", x=rand(2, 3))
    monkeypatch.setitem(onnx_ops.CONVERTERS, "Relu", onnx_ops.CONVERTERS["Sigmoid"])
    monkeypatch.chdir(tmp_path)
    with pytest.raises(TpudslError, match=r"validation failed at tensor 'r': NOT_SIMILAR .* 2 of 2 tensors failed"):
        model_transform.run(["--model_name", "m", "--model_def", "m.onnx", "--mlir", "m.mlir", "--test_input", "in.npz"])


def test_image_input_is_preprocessed_and_recorded(tmp_path):
    from PIL import Image

    pixels = np.random.default_rng(1).integers(0, 256, (6, 8, 3), dtype=np.uint8)
    Image.fromarray(pixels).save(tmp_path / "img.png")
    nodes = [h.make_node("Mul", ["data", "one"], ["y"])]
    onnx.save(make_model(nodes, {"data": [2, 3, 6, 8]}, ["y"], {"one": np.array(1.0, np.float32)}), tmp_path / "m.onnx")
    r = transform(tmp_path, "--model_name", "m", "--model_def", "m.onnx", "--mlir", "m.mlir", "--test_input", "img.png",
                  "--mean", "10,20,30", "--scale", "0.5,0.25,2", "--pixel_format", "bgr")
    assert r.returncode == 0, r.stderr
    bgr = pixels[:, :, ::-1].astype(np.float32)
    want = ((bgr - [10, 20, 30]) * [0.5, 0.25, 2]).transpose(2, 0, 1)
    got = np.load(tmp_path / "m_in_f32.npz")["data"]
    assert got.shape == (2, 3, 6, 8)
    np.testing.assert_allclose(got[0], want, rtol=1e-6)
    np.testing.assert_allclose(got[1], want, rtol=1e-6)
    text = (tmp_path / "m.mlir").read_text()
    assert "do_preprocess = true" in text and 'pixel_format = "bgr"' in text and "resize_dims = [6, 8]" in text
    assert "mean = [1.000000e+01, 2.000000e+01, 3.000000e+01]" in text


def test_keep_aspect_ratio_pads_and_nhwc(tmp_path):
    from PIL import Image

    pixels = np.random.default_rng(2).integers(0, 256, (4, 8), dtype=np.uint8)
    Image.fromarray(pixels, mode="L").save(tmp_path / "gray.png")
    nodes = [h.make_node("Relu", ["data"], ["y"])]
    onnx.save(make_model(nodes, {"data": [1, 8, 8, 1]}, ["y"]), tmp_path / "m.onnx")
    r = transform(tmp_path, "--model_name", "m", "--model_def", "m.onnx", "--mlir", "m.mlir", "--test_input", "gray.png",
                  "--pixel_format", "gray", "--channel_format", "nhwc", "--keep_aspect_ratio", "--mean", "1",
                  "--pad_type", "normal")  # the image at the top left (TPU-MLIR's default is center)
    assert r.returncode == 0, r.stderr
    got = np.load(tmp_path / "m_in_f32.npz")["data"][0, :, :, 0]
    np.testing.assert_allclose(got[:4], pixels.astype(np.float32) - 1)  # ratio 1: the image as is
    np.testing.assert_allclose(got[4:], -1.0)  # letterbox padding (pad value 0) minus the mean


# ---- bad input: one line, exit 1, nothing written ------------------------------------------------


def assert_clean_failure(tmp_path: Path, r: subprocess.CompletedProcess, before: set[str], message: str) -> None:
    assert r.returncode == 1, r.stderr
    assert error_lines(r.stderr) == [message], r.stderr
    assert "Traceback" not in r.stderr
    assert written(tmp_path) == before


def test_missing_model_file(tmp_path):
    r = transform(tmp_path, "--model_name", "m", "--model_def", "missing.onnx", "--mlir", "m.mlir")
    assert_clean_failure(tmp_path, r, set(), "error: cannot open 'missing.onnx': No such file")


def test_not_an_onnx_file(tmp_path):
    (tmp_path / "bad.onnx").write_text("this is not protobuf\n")
    r = transform(tmp_path, "--model_name", "m", "--model_def", "bad.onnx", "--mlir", "m.mlir")
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "is not a valid ONNX model" in r.stderr
    assert written(tmp_path) == {"bad.onnx"}


def test_empty_model_file(tmp_path):
    (tmp_path / "empty.onnx").write_bytes(b"")
    r = transform(tmp_path, "--model_name", "m", "--model_def", "empty.onnx", "--mlir", "m.mlir")
    assert_clean_failure(tmp_path, r, {"empty.onnx"}, "error: 'empty.onnx' is not a valid ONNX model: it has no graph")


def test_unsupported_ops(tmp_path):
    onnx.save(draggan_like_model(), tmp_path / "g.onnx")
    r = transform(tmp_path, "--model_name", "g", "--model_def", "g.onnx", "--mlir", "g.mlir")
    assert_clean_failure(tmp_path, r, {"g.onnx"}, (
        "error: unsupported ONNX ops: RandomNormalLike (5 nodes: /synthesis/b4/RandomNormalLike_0, "
        "/synthesis/b4/RandomNormalLike_1, /synthesis/b4/RandomNormalLike_2, ...); com.example.unsupported.Mix "
        "(1 node: /mix/Mix); com.example.unsupported.Head (1 node: /head/Head); hint: RandomNormalLike: export the model with constant noise, "
        "e.g. noise_mode='const' (random ops cannot be compiled)"))


@pytest.mark.parametrize(("flags", "message"), [
    (["--input_shapes", "[[1,3"], "error: --input_shapes '[[1,3' is not a list of shapes like [[1,3,224,224],[10]]"),
    (["--input_shapes", "[[1,2,3]]"], "error: input 'input.1' has rank 4, --input_shapes gives [1, 2, 3]"),
    (["--test_input", "nope.npz"], "error: cannot open test input 'nope.npz': No such file"),
    (["--tolerance", "0.9"], "error: --tolerance: tolerance must be two numbers 'cos,euclid', got '0.9'"),
    (["--mean", "1,2"], "error: --mean has 2 values; bgr images have 3 channels"),
    (["--output_names", "nope"], "error: output names not in the model: nope"),
])
def test_bad_flags(tmp_path, flags, message):
    onnx.save(named_net(), tmp_path / "net.onnx")
    r = transform(tmp_path, "--model_name", "net", "--model_def", "net.onnx", "--mlir", "net.mlir", *flags)
    assert_clean_failure(tmp_path, r, {"net.onnx"}, message)


def test_test_input_of_wrong_shape_writes_nothing(tmp_path):
    onnx.save(named_net(), tmp_path / "net.onnx")
    np.savez(tmp_path / "in.npz", **{"input.1": rand(1, 3, 4, 4)})
    r = transform(tmp_path, "--model_name", "net", "--model_def", "net.onnx", "--mlir", "net.mlir", "--test_input", "in.npz")
    assert_clean_failure(tmp_path, r, {"net.onnx", "in.npz"},
                         "error: test input for 'input.1' has shape [1, 3, 4, 4], the model input has [1, 3, 8, 8]")


def test_missing_required_flag(tmp_path):
    r = transform(tmp_path, "--model_name", "net", "--model_def", "net.onnx")
    assert r.returncode == 1 and r.stderr.count("\n") == 1 and "--mlir" in r.stderr


def test_output_name_survives_canonicalize(tmp_path):
    """`y = x * 1` canonicalizes to x itself; the output must still be called y."""
    nodes = [h.make_node("Mul", ["x", "one"], ["y"])]
    onnx.save(make_model(nodes, {"x": [2, 3]}, ["y"], {"one": np.array(1.0, np.float32)}), tmp_path / "m.onnx")
    np.savez(tmp_path / "in.npz", x=rand(2, 3))
    r = transform(tmp_path, "--model_name", "m", "--model_def", "m.onnx", "--mlir", "m.mlir", "--test_input", "in.npz")
    assert r.returncode == 0, r.stderr
    assert 'loc("y")' in (tmp_path / "m.mlir").read_text()
    assert "y" in np.load(tmp_path / "m_top_outputs.npz").files


def test_integer_input(tmp_path):
    """Token ids: an int64 graph input, fed to onnxruntime as int64 and to Top as float."""
    nodes = [h.make_node("Gather", ["table", "ids"], ["emb"], axis=0), h.make_node("Relu", ["emb"], ["y"])]
    model = make_model(nodes, {"ids": [2, 5]}, ["y"], {"table": rand(10, 4)}, input_types={"ids": onnx.TensorProto.INT64})
    onnx.save(model, tmp_path / "m.onnx")
    np.savez(tmp_path / "in.npz", ids=np.array([[0, 3, 9, 2, 2], [1, 1, 4, 8, 0]], np.int64))
    r = transform(tmp_path, "--model_name", "m", "--model_def", "m.onnx", "--mlir", "m.mlir", "--test_input", "in.npz",
                  "--input_types", "int64")
    assert r.returncode == 0, r.stderr
    assert "npz compare PASSED." in r.stdout


def test_draggan_dynamic_deconv_end_to_end(tmp_path):
    """The DragGAN failure (KeyError on a computed ConvTranspose filter) through the whole command:
    convert, canonicalize (which reorders the dynamic filter), validate against onnxruntime."""
    name = "/synthesis/b8/conv0/Transpose_output_0"
    nodes = [
        h.make_node("Mul", ["weight", "styles"], ["/synthesis/b8/conv0/Mul_output_0"]),
        h.make_node("Transpose", ["/synthesis/b8/conv0/Mul_output_0"], [name], perm=[1, 0, 2, 3]),
        h.make_node("ConvTranspose", ["x", name], ["img"], strides=[2, 2], pads=[1, 1, 1, 1]),
    ]
    model = make_model(nodes, {"x": [1, 4, 5, 5], "styles": [1, 4, 1, 1]}, ["img"], {"weight": rand(3, 4, 3, 3)})
    onnx.save(model, tmp_path / "g.onnx")
    np.savez(tmp_path / "in.npz", x=rand(1, 4, 5, 5), styles=rand(1, 4, 1, 1))
    r = transform(tmp_path, "--model_name", "g", "--model_def", "g.onnx", "--mlir", "g.mlir", "--test_input", "in.npz")
    assert r.returncode == 0, r.stderr
    assert "npz compare PASSED." in r.stdout
    assert "dynweight_reorderd = true" in (tmp_path / "g.mlir").read_text()

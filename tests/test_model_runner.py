"""model_runner: a converted model run from files gives onnxruntime's values, keyed by tensor name."""

import os
import subprocess
import sys

import numpy as np
import onnx
import pytest

from cli_support import run_main
from tests.models import onnx_inference, random_inputs, transformer_block
from tpudsl.cli.compare import compare_dicts
from tpudsl.frontend.onnx_import import convert_onnx
from tpudsl.ir.module import save_module

TOOLS = os.path.join(os.path.dirname(__file__), "..", "tools")


def tool(name, *args):
    return run_main(name, *args)


def tool_script(name, *args):
    return subprocess.run(
        [sys.executable, os.path.join(TOOLS, f"{name}.py"), *map(str, args)], capture_output=True, text=True, timeout=120
    )


def assert_one_line_error(proc, *fragments):
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "error: " in lines[0], proc.stderr
    for f in fragments:
        assert f in lines[0], lines[0]


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """A small transformer block as .mlir + weight npz, its inputs, and onnxruntime's tensors."""
    d = tmp_path_factory.mktemp("runner")
    model = transformer_block(seq_len=8, d_model=32, num_heads=4, d_ff=64)
    inputs = random_inputs(model, seed=5)
    save_module(convert_onnx(model, "tblock"), d / "tblock.mlir")
    np.savez(d / "in.npz", **inputs)
    return d, inputs, onnx_inference(model, inputs, all_tensors=True)


def test_outputs_match_onnxruntime(converted, tmp_path):
    d, _, ref = converted
    out = tmp_path / "out.npz"
    proc = tool("model_runner", "--input", d / "in.npz", "--model", d / "tblock.mlir", "--output", out)
    assert proc.returncode == 0, proc.stderr
    with np.load(out) as got:
        assert got.files == ["output"]
        np.testing.assert_allclose(got["output"], ref["output"], rtol=1e-4, atol=1e-4)


def test_threads_flag_gives_the_same_outputs(converted, tmp_path):
    d, _, ref = converted
    out = tmp_path / "out.npz"
    proc = tool_script("model_runner", "--input", d / "in.npz", "--model", d / "tblock.mlir", "--output", out, "--threads",
                       "2")
    assert proc.returncode == 0, proc.stderr
    with np.load(out) as got:
        np.testing.assert_allclose(got["output"], ref["output"], rtol=1e-4, atol=1e-4)


def test_dump_all_tensors_names_intermediates(converted, tmp_path):
    d, inputs, ref = converted
    out = tmp_path / "all.npz"
    proc = tool("model_runner", "--input", d / "in.npz", "--model", d / "tblock.mlir", "--output", out, "--dump_all_tensors")
    assert proc.returncode == 0, proc.stderr
    with np.load(out) as f:
        got = {k: f[k] for k in f.files}
    # Every tensor the ONNX graph computes and the Top module kept under its ONNX name.
    for name in ("x", "ln1", "attn.softmax", "attn.context", "ffn.gelu", "output"):
        assert name in got
    np.testing.assert_array_equal(got["x"], inputs["x"])
    report = compare_dicts(got, ref, tolerance=(0.999, 0.999))
    assert report.passed and len(report.results) >= 20
    # The npz_tool command agrees on the same files.
    np.savez(tmp_path / "ref.npz", **ref)
    assert tool("npz_tool", "compare", out, tmp_path / "ref.npz").returncode == 0


def test_onnx_model_runs_in_onnxruntime(converted, tmp_path):
    # The reference side of a check: `model_runner --model x.onnx --dump_all_tensors`.
    d, inputs, ref = converted
    model = transformer_block(seq_len=8, d_model=32, num_heads=4, d_ff=64)
    onnx.save(model, tmp_path / "tblock.onnx")
    np.savez(tmp_path / "in64.npz", x=inputs["x"].astype(np.float64))  # cast to the model's float32
    out = tmp_path / "ref.npz"
    proc = tool("model_runner", "--input", tmp_path / "in64.npz", "--model", tmp_path / "tblock.onnx",
                "--output", out, "--dump_all_tensors")
    assert proc.returncode == 0, proc.stderr
    with np.load(out) as got:
        assert sorted(got.files) == sorted(ref)
        for name in got.files:
            np.testing.assert_array_equal(got[name], ref[name])
    mlir_out = tmp_path / "top.npz"
    assert tool("model_runner", "--input", d / "in.npz", "--model", d / "tblock.mlir", "--output", mlir_out).returncode == 0
    assert tool("npz_tool", "compare", mlir_out, out).returncode == 0


def test_missing_input_names_input_and_shape(converted, tmp_path):
    d, inputs, _ = converted
    np.savez(tmp_path / "wrong.npz", y=inputs["x"])
    out = tmp_path / "out.npz"
    proc = tool("model_runner", "--input", tmp_path / "wrong.npz", "--model", d / "tblock.mlir", "--output", out)
    assert_one_line_error(proc, "input 'x' is missing", "expected shape 1x8x32", "holds: y")
    assert not out.exists()


def test_wrong_input_shape_names_expected_shape(converted, tmp_path):
    d, _, _ = converted
    np.savez(tmp_path / "small.npz", x=np.zeros((1, 4, 32), np.float32))
    proc = tool("model_runner", "--input", tmp_path / "small.npz", "--model", d / "tblock.mlir", "--output", tmp_path / "o.npz")
    assert_one_line_error(proc, "input 'x' has shape 1x4x32, expected shape 1x8x32")


@pytest.mark.parametrize(
    "model, fragments",
    [
        ("missing.bmodel", ["missing.bmodel", "No such file"]),
        ("net.tflite", ["unknown model type '.tflite'"]),
        ("missing.onnx", ["missing.onnx", "No such file"]),
        ("missing.mlir", ["missing.mlir", "No such file"]),
    ],
)
def test_unsupported_or_missing_model(converted, tmp_path, model, fragments):
    d, _, _ = converted
    proc = tool("model_runner", "--input", d / "in.npz", "--model", tmp_path / model, "--output", tmp_path / "o.npz")
    assert_one_line_error(proc, *fragments)
    assert not (tmp_path / "o.npz").exists()


def test_missing_arguments_are_usage_errors(converted):
    d, _, _ = converted
    # --output is optional (TPU-MLIR writes _output.npz): only --input is missing.
    assert_one_line_error(tool("model_runner", "--model", d / "tblock.mlir"), "required: --input (")


def test_unwritable_output_names_the_output(converted, tmp_path):
    d, _, _ = converted
    out = tmp_path / "no_such_dir" / "out.npz"
    proc = tool("model_runner", "--input", d / "in.npz", "--model", d / "tblock.mlir", "--output", out)
    assert_one_line_error(proc, f"cannot open '{out}'", "No such file")


def test_binary_file_as_model_is_an_input_error(converted):
    d, _, _ = converted
    binary = d / "tblock_top_f32_all_weight.npz"
    renamed = d / "binary.mlir"
    renamed.write_bytes(binary.read_bytes())
    proc = tool("model_runner", "--input", d / "in.npz", "--model", renamed, "--output", d / "o.npz")
    assert_one_line_error(proc, "binary.mlir", "not a text .mlir file")

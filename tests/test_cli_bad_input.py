"""Bad input never crashes the commands: one line `error: ...` (or `FILE:LINE:COL: error: ...`),
exit status 1, no traceback, and no output file created or changed.

Each test is a case a systematic run of every command over bad inputs found crashing (exit 2,
"internal error"), printing more than one line, or writing files before failing."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from frontend_support import error_lines
from onnx import TensorProto, helper, numpy_helper

from tpudsl.cli import bmodel_checker, mlir_cut, model_runner, model_transform, npz_tool, tpuc_opt
from tpudsl.cli.compare import parse_tolerance
from tpudsl.ir.module import load_module, save_module

MAINS = {
    "tpuc-opt": tpuc_opt.main,
    "model_runner": model_runner.main,
    "model_transform": model_transform.main,
    "npz_tool": npz_tool.main,
    "mlir_cut": mlir_cut.main,
    "bmodel_checker": bmodel_checker.main,
}

SMALL = """module attributes {module.weight_file = "w.npz"} {
  func.func @main(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("x")
    %1 = "top.Weight"() : () -> tensor<1x4xf32> loc("w")
    %2 = "top.Add"(%0, %1) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32> loc("y")
    return %2 : tensor<1x4xf32>
  }
}
"""

DYNAMIC = """module {
  func.func @main(%arg0: tensor<?x4xf32>) -> tensor<?x4xf32> {
    %0 = "top.Input"(%arg0) : (tensor<?x4xf32>) -> tensor<?x4xf32> loc("x")
    %1 = "top.Relu"(%0) : (tensor<?x4xf32>) -> tensor<?x4xf32> loc("y")
    return %1 : tensor<?x4xf32>
  }
}
"""


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def fails(capfd, root: Path, command: str, *argv: str) -> str:
    """Run `command argv` in-process; assert the bad-input contract and return the error line."""
    before = snapshot(root)
    with pytest.raises(SystemExit) as exit_info:
        MAINS[command]([str(a) for a in argv])
    out, err = capfd.readouterr()
    assert exit_info.value.code == 1, err
    assert "Traceback" not in err and "internal error" not in err, err
    lines = error_lines(err)  # model_transform names the steps that started before the error
    assert len(lines) == 1, err
    assert " error: " in lines[0] or lines[0].startswith("error: "), err
    assert snapshot(root) == before, "files were created or changed on failure"
    return lines[0]


def succeeds(capfd, command: str, *argv: str) -> str:
    with pytest.raises(SystemExit) as exit_info:
        MAINS[command]([str(a) for a in argv])
    out, err = capfd.readouterr()
    assert exit_info.value.code == 0, err
    return out


@pytest.fixture
def small(tmp_path):
    """SMALL with its weight npz, an input npz and old outputs that must survive failures."""
    (tmp_path / "m.mlir").write_text(SMALL)
    np.savez(tmp_path / "w.npz", w=np.ones((1, 4), np.float32))
    np.savez(tmp_path / "in.npz", x=np.ones((1, 4), np.float32))
    (tmp_path / "out.npz").write_bytes(b"OLD")
    return tmp_path


def zip_without_arrays(path: Path, member: str, data: bytes) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(member, data)
    return path


def _model(nodes, inputs, outputs, initializers=()) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def relu_onnx(path: Path, dims=(1, 4)) -> Path:
    onnx.save(_model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                     [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(dims))],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(dims))]), path)
    return path


def gather_onnx(path: Path) -> Path:
    """y = table[i] for a 5-row table: an index >= 5 is a bad input, found only when running."""
    table = numpy_helper.from_array(np.arange(20, dtype=np.float32).reshape(5, 4), "table")
    onnx.save(_model([helper.make_node("Gather", ["table", "i"], ["y"], axis=0, name="gather")],
                     [helper.make_tensor_value_info("i", TensorProto.INT64, [3])],
                     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])], [table]), path)
    return path


# ---- npz files holding something other than arrays (np.load hands such members back as bytes)


@pytest.mark.parametrize("member, data", [("readme.txt", b"hello"), ("x.npy", b"not an npy file")])
def test_npz_members_that_are_not_arrays(capfd, small, member, data):
    bad = zip_without_arrays(small / "bad.npz", member, data)
    key = member.removesuffix(".npy")
    for sub in (["dump", bad], ["stats", bad], ["compare", bad, small / "in.npz"]):
        line = fails(capfd, small, "npz_tool", *sub)
        assert line == f"{bad}: error: cannot read as .npz: entry '{key}' is not a numpy array (.npy)"
    fails(capfd, small, "model_runner", "--input", bad, "--model", small / "m.mlir", "--output", small / "out.npz")


def test_weight_npz_member_that_is_not_an_array(capfd, small):
    zip_without_arrays(small / "w.npz", "w.npy", b"garbage")
    line = fails(capfd, small, "model_runner", "--input", small / "in.npz", "--model", small / "m.mlir",
                 "--output", small / "out.npz")
    assert line.startswith(f"{small / 'm.mlir'}: error: cannot read weight file")
    assert "entry 'w' is not a numpy array" in line


@pytest.mark.parametrize("command", ["model_runner", "mlir_cut", "tpuc-opt"])
def test_weight_of_strings_is_an_error_at_the_weight(capfd, small, command):
    np.savez(small / "w.npz", w=np.array([["a", "b", "c", "d"]]))
    argv = {
        "model_runner": ["--input", small / "in.npz", "--model", small / "m.mlir", "--output", small / "out.npz"],
        "mlir_cut": ["--mlir", small / "m.mlir", "--output_names", "y", "-o", small / "cut.mlir"],
        "tpuc-opt": [small / "m.mlir", "--canonicalize", "-o", small / "out.mlir"],
    }[command]
    line = fails(capfd, small, command, *argv)
    assert line == f"{small / 'm.mlir'}:4:10: error: 'top.Weight' op weight 'w' has dtype <U1 in '{small / 'w.npz'}', not numbers"


# ---- model_runner: inputs of the wrong kind or shape


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_model_runner_threads_must_be_a_positive_integer(capfd, small, value):
    line = fails(capfd, small, "model_runner", "--input", small / "in.npz", "--model", small / "m.mlir",
                 "--output", small / "out.npz", f"--threads={value}")
    assert line == f"error: argument --threads: expected a positive integer, got '{value}' (see model_runner --help)"


@pytest.mark.parametrize("array", [
    np.array([["a", "b", "c", "d"]]),
    np.ones((1, 4), np.complex64),
    np.zeros((1, 4), "datetime64[s]"),
    np.zeros((1, 4), dtype=[("a", "f4")]),
], ids=["str", "complex", "datetime", "struct"])
@pytest.mark.parametrize("model", ["m.mlir", "m.onnx"])
def test_model_runner_rejects_inputs_that_are_not_numbers(capfd, small, array, model):
    relu_onnx(small / "m.onnx")
    np.savez(small / "bad.npz", x=array)
    line = fails(capfd, small, "model_runner", "--input", small / "bad.npz", "--model", small / model,
                 "--output", small / "out.npz")
    assert line == f"error: input 'x' has dtype {array.dtype}; expected numbers (bool, int or float)"


def test_model_runner_dynamic_dims_shown_as_question_marks_and_rank_checked(capfd, small):
    (small / "dyn.mlir").write_text(DYNAMIC)
    np.savez(small / "x3.npz", x=np.ones((2, 4, 1), np.float32))
    line = fails(capfd, small, "model_runner", "--input", small / "x3.npz", "--model", small / "dyn.mlir",
                 "--output", small / "out.npz")
    assert line == "error: input 'x' has shape 2x4x1, expected shape ?x4"
    np.savez(small / "x2.npz", x=np.ones((3, 4), np.float32))
    succeeds(capfd, "model_runner", "--input", small / "x2.npz", "--model", small / "dyn.mlir", "--output", small / "o.npz")


def test_model_runner_onnx_dynamic_input_of_the_wrong_rank(capfd, small):
    relu_onnx(small / "dyn.onnx", dims=("N", 4))
    np.savez(small / "x3.npz", x=np.ones((2, 4, 1), np.float32))
    line = fails(capfd, small, "model_runner", "--input", small / "x3.npz", "--model", small / "dyn.onnx",
                 "--output", small / "out.npz")
    assert line == "error: input 'x' has shape 2x4x1, expected shape ?x4"


def test_model_runner_onnxruntime_rejecting_an_input_value(capfd, small):
    gather_onnx(small / "g.onnx")
    np.savez(small / "i.npz", i=np.array([0, 1, 7]))
    line = fails(capfd, small, "model_runner", "--input", small / "i.npz", "--model", small / "g.onnx",
                 "--output", small / "out.npz")  # also: onnxruntime's own log line is not printed
    assert line.startswith("error: onnxruntime cannot run the model on these inputs: ")
    assert "indices element out of data bounds" in line


# ---- mlir_cut / save_module: the .mlir and its npz are written together or not at all


def test_mlir_cut_output_that_is_a_directory_writes_no_weights(capfd, small):
    (small / "cut.mlir").mkdir()
    line = fails(capfd, small, "mlir_cut", "--mlir", small / "m.mlir", "--output_names", "y", "-o", small / "cut.mlir")
    assert line.endswith("cut.mlir': Is a directory")
    assert not (small / "cut_weight.npz").exists()


def test_save_module_keeps_the_old_npz_when_the_mlir_cannot_be_written(small):
    mod = load_module(small / "m.mlir")
    (small / "new_weight.npz").write_bytes(b"OLD")
    (small / "new.mlir").mkdir()
    with pytest.raises(IsADirectoryError):
        save_module(mod, small / "new.mlir", small / "new_weight.npz")
    assert (small / "new_weight.npz").read_bytes() == b"OLD"
    assert [p.name for p in small.iterdir() if p.name.endswith(".tmp")] == []
    assert mod.module.attributes["module.weight_file"].data == "w.npz"  # the module is unchanged too


# ---- model_transform


@pytest.fixture
def onnx_dir(tmp_path):
    relu_onnx(tmp_path / "m.onnx")
    np.savez(tmp_path / "in.npz", x=np.ones((1, 4), np.float32))
    (tmp_path / "m.mlir").write_bytes(b"OLD")
    return tmp_path


def transform(capfd, root, *flags):
    return fails(capfd, root, "model_transform", "--model_name", "m", "--model_def", root / "m.onnx", *flags)


def test_model_transform_test_input_npz_member_that_is_not_an_array(capfd, onnx_dir):
    bad = zip_without_arrays(onnx_dir / "bad.npz", "x.npy", b"garbage")
    line = transform(capfd, onnx_dir, "--mlir", onnx_dir / "m.mlir", "--test_input", bad)
    assert line == f"error: cannot read test input '{bad}': cannot read as .npz: entry 'x' is not a numpy array (.npy)"


def test_model_transform_empty_npy_test_input(capfd, onnx_dir):
    (onnx_dir / "x.npy").write_bytes(b"")
    line = transform(capfd, onnx_dir, "--mlir", onnx_dir / "m.mlir", "--test_input", onnx_dir / "x.npy")
    assert line.startswith(f"error: cannot read test input '{onnx_dir / 'x.npy'}': ")


def test_model_transform_test_input_of_strings(capfd, onnx_dir):
    np.savez(onnx_dir / "bad.npz", x=np.array([["a", "b", "c", "d"]]))
    line = transform(capfd, onnx_dir, "--mlir", onnx_dir / "m.mlir", "--test_input", onnx_dir / "bad.npz")
    assert line == "error: test input for 'x' has dtype <U1; expected numbers (bool, int or float)"


def test_model_transform_test_input_the_model_cannot_take_writes_nothing(capfd, tmp_path):
    gather_onnx(tmp_path / "m.onnx")
    np.savez(tmp_path / "i.npz", i=np.array([0, 1, 7]))
    line = transform(capfd, tmp_path, "--mlir", tmp_path / "m.mlir", "--test_input", tmp_path / "i.npz",
                     "--input_types", "int64")
    assert "index 7 is out of bounds" in line


@pytest.mark.parametrize("flag, value, message", [
    ("--mlir", "{dir}", "error: cannot write --mlir '{dir}': it is a directory"),
    ("--test_result", "{dir}", "error: cannot write --test_result '{dir}': it is a directory"),
    ("--test_result", "{root}/nodir/r.npz", "error: cannot write '{root}/nodir/r.npz': directory '{root}/nodir' does not exist"),
    ("--scale", "nan", "error: --scale 'nan' is not a comma-separated list of (finite) numbers"),
    ("--mean", "inf,0,0", "error: --mean 'inf,0,0' is not a comma-separated list of (finite) numbers"),
    ("--tolerance", "nan,0.9", "error: --tolerance: tolerance must be two numbers 'cos,euclid', got 'nan,0.9'"),
    ("--threads", "0", "error: argument --threads: expected a positive integer, got '0' (see model_transform --help)"),
], ids=["mlir-dir", "result-dir", "result-nodir", "scale-nan", "mean-inf", "tolerance-nan", "threads-0"])
def test_model_transform_bad_flags_found_before_writing(capfd, onnx_dir, flag, value, message):
    (onnx_dir / "adir").mkdir()
    fmt = {"dir": onnx_dir / "adir", "root": onnx_dir}
    flags = {"--mlir": onnx_dir / "m.mlir", "--test_input": onnx_dir / "in.npz"}
    flags[flag] = value.format(**fmt)
    line = transform(capfd, onnx_dir, *[x for kv in flags.items() for x in kv])
    assert line == message.format(**fmt)


@pytest.mark.parametrize("name", ["", "a/b", ".."])
def test_model_transform_model_name_must_be_a_plain_name(capfd, onnx_dir, name):
    line = fails(capfd, onnx_dir, "model_transform", "--model_name", name, "--model_def", onnx_dir / "m.onnx",
                 "--mlir", onnx_dir / "m.mlir")
    assert line.startswith(f"error: --model_name {name!r} must be a plain name")


def test_model_transform_unwritable_place_gives_one_line_and_no_files(capfd, onnx_dir):
    # /proc accepts no new files, even for root; the step times must not be printed before the error.
    line = transform(capfd, onnx_dir, "--mlir", "/proc/m.mlir")
    assert line.startswith("error: cannot open '/proc/m")


def test_model_transform_unwritable_test_result_leaves_the_mlir_untouched(capfd, onnx_dir):
    line = transform(capfd, onnx_dir, "--mlir", onnx_dir / "m.mlir", "--test_input", onnx_dir / "in.npz",
                     "--test_result", "/proc/r.npz")
    assert line == "error: cannot open '/proc/r.npz': No such file or directory"


# ---- npz_tool compare


@pytest.mark.parametrize("text", ["nan,nan", "0.9,inf"])
def test_tolerance_must_be_finite(capfd, small, text):
    with pytest.raises(ValueError):
        parse_tolerance(text)
    line = fails(capfd, small, "npz_tool", "compare", small / "in.npz", small / "in.npz", "--tolerance", text)
    assert line == f"error: tolerance must be two numbers 'cos,euclid', got '{text}'"


# ---- damaged headers, huge shapes, outputs that would replace inputs, symlink loops


def _npy_header(shape) -> bytes:
    header = f"{{'descr': '<f4', 'fortran_order': False, 'shape': {shape!r}, }}".encode().ljust(117) + b"\n"
    return np.lib.format.MAGIC_PREFIX + b"\x01\x00" + len(header).to_bytes(2, "little") + header


def test_npz_entry_whose_header_claims_more_data_than_it_holds(capfd, small):
    bad = zip_without_arrays(small / "bad.npz", "x.npy", _npy_header((100_000_000_000,)))
    line = fails(capfd, small, "model_runner", "--input", bad, "--model", small / "m.mlir", "--output", small / "out.npz")
    assert line == (f"{bad}: error: cannot read as .npz: entry 'x' is damaged: its header says shape [100000000000] "
                    "(400000000000 bytes) but it holds 0 bytes")


def test_npy_test_input_whose_header_claims_more_data_than_it_holds(capfd, onnx_dir):
    (onnx_dir / "x.npy").write_bytes(_npy_header((100_000_000_000,)))
    line = transform(capfd, onnx_dir, "--mlir", onnx_dir / "m.mlir", "--test_input", onnx_dir / "x.npy")
    assert line.startswith(f"error: cannot read test input '{onnx_dir / 'x.npy'}': ")


def test_input_shapes_beyond_int64(capfd, tmp_path):
    relu_onnx(tmp_path / "m.onnx", dims=("N", 4))
    line = transform(capfd, tmp_path, "--mlir", tmp_path / "m.mlir", "--input_shapes", "[[99999999999999999999999,4]]")
    assert line == "error: --input_shapes: shape [99999999999999999999999, 4] has more than 2^63-1 elements"
    line = transform(capfd, tmp_path, "--mlir", tmp_path / "m.mlir", "--input_shapes", "[[4294967296,4294967296]]")
    assert "more than 2^63-1 elements" in line


def test_mlir_cut_weights_would_replace_the_source_weights(capfd, small):
    # `-o w.mlir` would write its weights to w_weight.npz; make that the npz the source names.
    (small / "m.mlir").write_text(SMALL.replace('"w.npz"', '"cut_weight.npz"'))
    (small / "w.npz").rename(small / "cut_weight.npz")
    line = fails(capfd, small, "mlir_cut", "--mlir", small / "m.mlir", "--output_names", "y", "-o", small / "cut.mlir")
    assert line.startswith(f"error: the cut module's weights would replace '{small / 'cut_weight.npz'}'")


@pytest.mark.parametrize("flag", ["--input", "--model"])
def test_model_runner_output_that_would_replace_an_input(capfd, small, flag):
    target = {"--input": small / "in.npz", "--model": small / "m.mlir"}[flag]
    argv = {"--input": small / "in.npz", "--model": small / "m.mlir", "--output": target}
    line = fails(capfd, small, "model_runner", *[x for kv in argv.items() for x in kv])
    assert line == f"error: --output '{target}' would overwrite the {flag} file; choose another name"


def test_mlir_cut_and_bmodel_checker_outputs_that_would_replace_an_input(capfd, small):
    m, x = small / "m.mlir", small / "in.npz"
    line = fails(capfd, small, "mlir_cut", "--mlir", m, "--output_names", "y", "-o", m)
    assert line == f"error: -o '{m}' would overwrite the input .mlir {m}; choose another name"
    (small / "m_cut.mlir").symlink_to(m)  # the default output, m_cut.mlir, is the input through a symlink
    line = fails(capfd, small, "mlir_cut", "--mlir", m, "--output_names", "y")
    assert line == f"error: the output '{small / 'm_cut.mlir'}' would overwrite the input .mlir {m}; choose another name"
    line = fails(capfd, small, "bmodel_checker", small / "m.bmodel", x, "--report", x)  # refused before any reading
    assert line == f"error: --report '{x}' would overwrite {x}; choose another name"


def test_model_transform_outputs_that_would_replace_inputs_or_each_other(capfd, onnx_dir):
    line = transform(capfd, onnx_dir, "--mlir", onnx_dir / "m.onnx")
    assert line == f"error: --mlir '{onnx_dir / 'm.onnx'}' would overwrite --model_def '{onnx_dir / 'm.onnx'}'; choose other names"
    line = transform(capfd, onnx_dir, "--mlir", onnx_dir / "m.mlir", "--test_input", onnx_dir / "in.npz",
                     "--test_result", onnx_dir / "m.mlir")
    assert line.startswith("error: --test_result ") and "would overwrite --mlir" in line


def test_symlink_loops_are_bad_input(capfd, small):
    (small / "loop").symlink_to(small / "loop")
    fails(capfd, small, "model_runner", "--input", small / "loop", "--model", small / "m.mlir", "--output", small / "out.npz")
    fails(capfd, small, "model_transform", "--model_name", "m", "--model_def", small / "loop", "--mlir", small / "m2.mlir")
    fails(capfd, small, "mlir_cut", "--mlir", small / "loop", "--output_names", "y")


# ---- tpuc-opt


FOLDS = """module attributes {module.weight_file = "w.npz"} {
  func.func @main() -> tensor<3x2xf32> {
    %k = "top.Weight"() : () -> tensor<2x3xf32> loc("k")
    %1 = "top.Permute"(%k) {order = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32> loc("k_T")
    return %1 : tensor<3x2xf32>
  }
}
"""


def test_tpuc_opt_output_that_cannot_be_written_writes_no_weights(capfd, tmp_path):
    (tmp_path / "m.mlir").write_text(FOLDS)
    np.savez(tmp_path / "w.npz", k=np.arange(6, dtype=np.float32).reshape(2, 3))
    (tmp_path / "out.mlir").symlink_to(tmp_path / "nodir" / "out.mlir")  # the npz can be written, the .mlir not
    line = fails(capfd, tmp_path, "tpuc-opt", tmp_path / "m.mlir", "--fold-constants", "-o", tmp_path / "out.mlir")
    assert line == f"error: cannot open '{tmp_path / 'out.mlir'}': No such file or directory"  # the -o given
    assert not (tmp_path / "out_weight.npz").exists()


def test_tpuc_opt_read_error_names_the_input(capfd, tmp_path):
    line = fails(capfd, tmp_path, "tpuc-opt", "/proc/self/mem")
    assert line == "error: cannot open '/proc/self/mem': Input/output error"

"""What every command does besides its job: `--help` at once, internal errors reported as such
(with the hint, and the traceback under `--debug`), write errors naming the path the user gave,
and model_transform's steps, `--debug` origin file and pixel formats (docs/tools.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto
from onnx import helper as h

from tpudsl.cli import (
    bmodel_checker, mlir_cut, model_deploy, model_runner, model_tool, model_transform, npz_tool, run_calibration, run_qtable,
    run_sensitive_layer, tpuc_opt,
)
from tpudsl.cli.errors import REPORT_HINT
from tpudsl.frontend import onnx_ops
from tpudsl.frontend.preprocess import PIXEL_FORMATS
from tpudsl.ir import module as module_api
from tpudsl.ir.module import load_module

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {"tpuc-opt": tpuc_opt, "model_transform": model_transform, "model_runner": model_runner,
            "npz_tool": npz_tool, "mlir_cut": mlir_cut, "model_tool": model_tool,
            "model_deploy": model_deploy, "run_calibration": run_calibration,
            "run_qtable": run_qtable, "run_sensitive_layer": run_sensitive_layer, "bmodel_checker": bmodel_checker}
# What `--help` must not import: each costs a tenth of a second or (onnx) half a second.
HEAVY = ("numpy", "onnx", "onnxruntime", "lark", "xdsl.dialects.builtin", "xdsl.passes", "tpudsl.dialects",
         "tpudsl.ir.module", "tpudsl.interp", "tpudsl.frontend", "tpudsl.passes")
HELP_PROBE = """
import sys
from tpudsl.cli.{module} import main
try:
    main(["--help"])
except SystemExit as e:
    print("exit", e.code, file=sys.stderr)
print("heavy", *[m for m in {heavy!r} if m in sys.modules], file=sys.stderr)
"""


@pytest.mark.parametrize("command", COMMANDS)
def test_help_imports_nothing_heavy(command):
    """`--help` answers before onnx, numpy, lark or xDSL's dialects are imported (a check of what is
    imported, not of time, so that a loaded machine cannot make it flaky)."""
    code = HELP_PROBE.format(module=COMMANDS[command].__name__.rsplit(".", 1)[1], heavy=HEAVY)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert r.stdout.startswith(f"usage: {command}"), r.stdout + r.stderr
    assert r.stderr.splitlines() == ["exit 0", "heavy"], r.stderr


RUN_PROBE = """
import sys
from tpudsl.cli.{module} import main
try:
    main({argv!r})
except SystemExit as e:
    print("exit", e.code, file=sys.stderr)
print("not needed", *[m for m in {unneeded!r} if m in sys.modules], file=sys.stderr)
"""
# Imports a run does not need, each about a tenth of a second of every start in the lit suite
# (docs/testing.md): xDSL's dialects for npz_tool; lark without pass options; numpy for a run that
# reads no weight data (parse, verify, infer shapes, rewrites that need no weights, print); the Tpu
# op table for a Top module.
TOP_ONLY_UNNEEDED = ("lark", "numpy", "tpudsl.dialects.tpu")
LEAN_RUNS = {
    "npz_tool compare": ("npz_tool", ["compare", "{npz}", "{npz}"], ("xdsl.dialects.builtin", "tpudsl.ir.module")),
    "tpuc-opt --shape-infer": ("tpuc_opt", ["{mlir}", "--shape-infer", "-o", "{out}"], TOP_ONLY_UNNEEDED),
    "tpuc-opt": ("tpuc_opt", ["{mlir}", "--mlir-print-debuginfo", "-o", "{out}"], TOP_ONLY_UNNEEDED),
    "tpuc-opt --canonicalize": ("tpuc_opt", ["{mlir}", "--canonicalize", "-o", "{out}"], TOP_ONLY_UNNEEDED),
}
TOP_RELU = """module attributes {{module.weight_file = "{npz}"}} {{
  func.func @main(%arg0: tensor<1x3xf32>) -> tensor<1x3xf32> {{
    %0 = "top.Input"(%arg0) : (tensor<1x3xf32>) -> tensor<1x3xf32> loc("x")
    %1 = "top.Relu"(%0) : (tensor<1x3xf32>) -> tensor<1x3xf32> loc("y")
    return %1 : tensor<1x3xf32>
  }}
}}
"""


@pytest.mark.parametrize("run", LEAN_RUNS)
def test_a_run_imports_only_what_it_needs(run, tmp_path):
    """npz_tool compare starts without xDSL's dialects, tpuc-opt without pass options without lark,
    and on a Top module that names no weight file it can read, without numpy (a check of what is
    imported, as above: the lit suite starts these about 400 times)."""
    np.savez(tmp_path / "a.npz", x=np.ones(3, np.float32))
    (tmp_path / "m.mlir").write_text(TOP_RELU.format(npz=tmp_path / "missing.npz"))
    module, args, unneeded = LEAN_RUNS[run]
    argv = [a.format(npz=tmp_path / "a.npz", mlir=tmp_path / "m.mlir", out=tmp_path / "o.mlir") for a in args]
    code = RUN_PROBE.format(module=module, argv=argv, unneeded=unneeded)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert r.stderr.splitlines()[-2:] == ["exit 0", "not needed"], r.stdout + r.stderr
    if module == "tpuc_opt":  # it did the work
        assert '"top.Relu"(%0) : (tensor<1x3xf32>) -> tensor<1x3xf32> loc(#loc' in (tmp_path / "o.mlir").read_text()


def relu_model(path: Path, channels: int = 3) -> Path:
    graph = h.make_graph([h.make_node("Relu", ["x"], ["y"], name="/act/relu")], "g",
                         [h.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, 2, 2])],
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, 2, 2])])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]), path)
    return path


def run_main(command: str, argv: list, capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        COMMANDS[command].main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def broken_converter(node, conv):
    return {}["kernel"]  # a converter bug: a KeyError on a node its schema allows


def test_a_converter_bug_is_an_internal_error_naming_the_node(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(onnx_ops.CONVERTERS, "Relu", broken_converter)
    argv = ["--model_name", "m", "--model_def", relu_model(tmp_path / "m.onnx"), "--mlir", tmp_path / "m.mlir"]
    status, out, err = run_main("model_transform", argv, capsys)
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] == f"error: internal error in the Relu converter, at node '/act/relu': KeyError: 'kernel' ({REPORT_HINT})"
    assert "Traceback" not in err and "malformed" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]
    status, out, err = run_main("model_transform", [*argv, "--debug"], capsys)
    assert status == 2 and "Traceback (most recent call last)" in err and 'return {}["kernel"]' in err
    assert err.splitlines()[-1].startswith("error: internal error in the Relu converter, at node '/act/relu': KeyError")


def crash(*args, **kwargs):
    raise ZeroDivisionError("a bug")


@pytest.mark.parametrize("command, target, argv", [
    ("model_runner", "model_inference", ["--input", "in.npz", "--model", "m.mlir", "--output", "out.npz"]),
    ("npz_tool", "cmd_stats", ["stats", "in.npz"]),
    ("mlir_cut", "cut_module", ["--mlir", "m.mlir", "--output_names", "y"]),
])
def test_an_unexpected_exception_is_an_internal_error_in_every_command(tmp_path, monkeypatch, capsys, command, target, argv):
    """run_cli reports any exception that is not bad input as an internal error with the report
    hint (exit 2); `--debug` prints its traceback first."""
    monkeypatch.chdir(tmp_path)
    Path("m.mlir").write_text(TOP)
    np.savez("in.npz", x=np.ones((1, 4), np.float32))
    monkeypatch.setattr(COMMANDS[command], target, crash)
    status, out, err = run_main(command, argv, capsys)
    assert (status, out, err) == (2, "", f"error: internal error: ZeroDivisionError: a bug ({REPORT_HINT})\n")
    status, out, err = run_main(command, [*argv, "--debug"], capsys)
    assert status == 2 and err.startswith("Traceback (most recent call last):\n") and 'raise ZeroDivisionError("a bug")' in err
    assert err.splitlines()[-1] == f"error: internal error: ZeroDivisionError: a bug ({REPORT_HINT})"


TOP = """func.func @main(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = "top.Input"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("x")
  %1 = "top.Relu"(%0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("y")
  return %1 : tensor<1x4xf32>
}
"""
GOOD = """func.func @main(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %0 = "top.Relu"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}
"""


class FullDisk:
    """A file whose writes fail as on a full disk (an OSError that names no file)."""

    def __init__(self, fd, mode):
        self.f = open(fd, mode)  # noqa: SIM115  (closed in __exit__)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.f.close()

    def write(self, data):
        raise OSError(28, "No space left on device")


def failing_replace(src, dst):
    raise PermissionError(13, "Permission denied", src, dst)  # names the temporary file first


@pytest.mark.parametrize("patch, reason", [("os.replace", "Permission denied"), ("os.fdopen", "No space left on device")])
def test_a_write_error_names_the_output_as_given_never_a_temporary_file(tmp_path, monkeypatch, capsys, patch, reason):
    monkeypatch.chdir(tmp_path)
    Path("in.mlir").write_text(GOOD)
    Path("out.mlir").write_text("OLD")
    monkeypatch.setattr(module_api.os, patch.split(".")[1], failing_replace if patch == "os.replace" else FullDisk)
    status, out, err = run_main("tpuc-opt", ["in.mlir", "--shape-infer", "-o", "out.mlir"], capsys)
    assert (status, out, err) == (1, "", f"error: cannot open 'out.mlir': {reason}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.mlir", "out.mlir"]  # no temporary file left
    assert Path("out.mlir").read_text() == "OLD"


def test_pixel_format_help_names_every_format_top_input_accepts():
    assert tuple(model_transform.PIXEL_FORMATS_HELP.split(", ")) == PIXEL_FORMATS


CHANNELS = {"gray": 1, "rgba": 4, "gbrg": 1, "grbg": 1, "bggr": 1, "rggb": 1}


@pytest.mark.parametrize("pixel_format", PIXEL_FORMATS)
def test_model_transform_records_every_pixel_format_on_top_input(tmp_path, capsys, pixel_format):
    channels = CHANNELS.get(pixel_format, 3)
    argv = ["--model_name", "m", "--model_def", relu_model(tmp_path / "m.onnx", channels), "--mlir", tmp_path / "m.mlir",
            "--pixel_format", pixel_format, "--mean", ",".join(["1"] * channels)]
    status, _, err = run_main("model_transform", argv, capsys)
    assert status == 0, err
    text = (tmp_path / "m.mlir").read_text()
    assert f'pixel_format = "{pixel_format}"' in text and f"mean = [{', '.join(['1.000000e+00'] * channels)}]" in text


def test_rgba_images_are_read_in_rgba_order_and_bayer_images_are_an_error(tmp_path, capsys):
    from PIL import Image

    rgba = np.arange(16, dtype=np.uint8).reshape(2, 2, 4) * 10 + 5
    Image.fromarray(rgba, "RGBA").save(tmp_path / "img.png")
    argv = ["--model_name", "m", "--model_def", relu_model(tmp_path / "m.onnx", 4), "--mlir", tmp_path / "m.mlir",
            "--pixel_format", "rgba", "--scale", "0.5", "--test_input", tmp_path / "img.png"]
    status, _, err = run_main("model_transform", argv, capsys)
    assert status == 0, err
    got = np.load(tmp_path / "m_in_f32.npz")["x"]
    np.testing.assert_array_equal(got, rgba.transpose(2, 0, 1)[None].astype(np.float32) * 0.5)  # NCHW, RGBA
    relu_model(tmp_path / "b.onnx", 1)
    status, _, err = run_main("model_transform", ["--model_name", "b", "--model_def", tmp_path / "b.onnx", "--mlir",
                                                  tmp_path / "b.mlir", "--pixel_format", "rggb", "--test_input",
                                                  tmp_path / "img.png"], capsys)
    assert status == 1 and err.splitlines()[-1] == (
        f"error: --pixel_format rggb: making raw Bayer data from image '{tmp_path / 'img.png'}' is not modelled; "
        "give the test input as .npy or .npz")
    assert not (tmp_path / "b.mlir").exists()


def test_debug_keeps_the_origin_module_which_tpuc_opt_turns_into_the_result(tmp_path, capsys):
    """--debug writes NAME_origin.mlir (before the passes) with its npz; TPU-MLIR's Top command line
    on it gives the module model_transform wrote (but for the weight file's name)."""
    model = named_net_model(tmp_path / "net.onnx")
    status, _, err = run_main("model_transform", ["--model_name", "net", "--model_def", model, "--mlir",
                                                  tmp_path / "net.mlir", "--debug"], capsys)
    assert status == 0, err
    assert f"model_transform: write {tmp_path / 'net_origin.mlir'} (--debug) ..." in err.splitlines()
    origin = load_module(tmp_path / "net_origin.mlir")  # it and its weights belong together
    assert origin.module.attributes["module.weight_file"].data == "net_top_f32_all_origin_weight.npz"
    status, _, err = run_main("tpuc-opt", [tmp_path / "net_origin.mlir", "--struct-optimize", "--shape-infer",
                                           "--canonicalize", "--extra-optimize", "-o", tmp_path / "replay.mlir"], capsys)
    assert status == 0, err
    replay = (tmp_path / "replay.mlir").read_text().replace("replay_weight.npz", "net_top_f32_all_weight.npz")
    assert replay.replace(str(tmp_path / "net_origin.mlir"), "") == (tmp_path / "net.mlir").read_text().replace(
        str(tmp_path / "net_origin.mlir"), "")


def named_net_model(path: Path) -> Path:
    from test_frontend_graph import named_net

    onnx.save(named_net(), path)
    return path


def test_tpuc_opt_help_and_docs_name_only_passes_and_flags_that_exist(capsys):
    """Every `--name` in `tpuc-opt --help` and on a `tpuc-opt ...` line of docs/tpuc-opt.md is one
    of its flags or a registered pass."""
    import re

    from tpudsl.passes import PASSES

    status, help_text, _ = run_main("tpuc-opt", ["--help"], capsys)
    assert status == 0
    flags = {s for a in tpuc_opt._argument_parser()._actions for s in a.option_strings}
    known = flags | set(tpuc_opt._PIPELINE_FLAGS) | {f"--{name}" for name in PASSES} | {"--<pass>"}
    doc_lines = [line for line in (ROOT / "docs" / "tpuc-opt.md").read_text().splitlines() if line.startswith("tpuc-opt ")]
    named = set(re.findall(r"(?<![\w-])--(?:<pass>|[a-z][\w-]*)", help_text + "\n".join(doc_lines)))
    assert doc_lines and {"--init", "--deinit", "--struct-optimize", "--extra-optimize"} <= named
    assert named - known == set()

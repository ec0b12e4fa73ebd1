"""tpuc-opt reads the weight npz a module names and writes changed weights next to its output
(docs/tpuc-opt.md, Weights). The folded values are checked against numpy, not the interpreter."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from tpudsl.cli.tpuc_opt import main
from tpudsl.ir.module import load_module

# k_T = k transposed and s = k + a fold to weights; y = x + k_T reads an input and stays.
MODULE = """module attributes {{module.chip = "ALL", module.name = "m", module.platform = "ONNX", module.state = "TOP_F32", module.weight_file = "{weights}"}} {{
  func.func @main(%arg0: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<2x3xf32>) {{
    %0 = "top.Input"(%arg0) : (tensor<3x2xf32>) -> tensor<3x2xf32> loc("x")
    %k = "top.Weight"() : () -> tensor<2x3xf32> loc("k")
    %a = "top.Weight"() : () -> tensor<2x3xf32> loc("a")
    %1 = "top.Permute"(%k) {{order = [1, 0]}} : (tensor<2x3xf32>) -> tensor<3x2xf32> loc("k_T")
    %2 = "top.Add"(%0, %1) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32> loc("y")
    %3 = "top.Add"(%k, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("s")
    return %2, %3 : tensor<3x2xf32>, tensor<2x3xf32>
  }}
}}
"""
K = np.arange(6, dtype=np.float32).reshape(2, 3)
A = np.full((2, 3), 0.5, np.float32)


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as exit_info:
        main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


def write_model(d: Path, weights: str = "m_weight.npz", arrays: dict | None = None) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / "m.mlir").write_text(MODULE.format(weights=weights))
    np.savez(d / weights, **({"k": K, "a": A} if arrays is None else arrays))
    return d / "m.mlir"


def test_folded_weights_are_written_next_to_the_output(tmp_path, capsys):
    src = write_model(tmp_path / "in")
    out = tmp_path / "out" / "folded.mlir"
    out.parent.mkdir()
    assert run([src, "--fold-constants", "-o", out], capsys) == (0, "", "")
    with np.load(out.parent / "folded_weight.npz") as npz:
        assert sorted(npz.files) == ["k_T", "s"]  # k and a are no longer used
        np.testing.assert_array_equal(npz["k_T"], K.T)
        np.testing.assert_array_equal(npz["s"], K + A)
    mod = load_module(out)  # the output and its npz belong together (locations were printed)
    assert mod.module.attributes["module.weight_file"].data == "folded_weight.npz"
    with np.load(tmp_path / "in" / "m_weight.npz") as npz:  # the input's npz is left alone
        assert sorted(npz.files) == ["a", "k"]


def test_unchanged_weights_are_not_written_and_stay_found(tmp_path, capsys):
    src = write_model(tmp_path / "in")
    out = tmp_path / "elsewhere" / "o.mlir"
    out.parent.mkdir()
    assert run([src, "--shape-infer", "--mlir-print-debuginfo", "-o", out], capsys) == (0, "", "")
    assert not (out.parent / "o_weight.npz").exists()
    assert 'module.weight_file = "../in/m_weight.npz"' in out.read_text()
    np.testing.assert_array_equal(load_module(out).weights["k"], K)


def test_unchanged_weights_may_go_to_stdout(tmp_path, capsys):
    code, out, err = run([write_model(tmp_path), "--shape-infer"], capsys)
    assert (code, err) == (0, "") and 'module.weight_file = "m_weight.npz"' in out


def test_changed_weights_need_an_output_file(tmp_path, capsys):
    code, out, err = run([write_model(tmp_path), "--fold-constants"], capsys)
    assert (code, out) == (1, "")
    assert err == "error: the passes changed the weights; use -o FILE so they can be written\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.mlir", "m_weight.npz"]


def test_changed_weights_never_replace_the_npz_the_input_still_names(tmp_path, capsys):
    src = write_model(tmp_path, weights="o_weight.npz")
    code, out, err = run([src, "--fold-constants", "-o", tmp_path / "o.mlir"], capsys)
    assert (code, out) == (1, "")
    assert err.startswith("error: the changed weights would replace") and err.endswith("choose another -o name\n")
    assert not (tmp_path / "o.mlir").exists()
    with np.load(tmp_path / "o_weight.npz") as npz:
        assert sorted(npz.files) == ["a", "k"]


def test_rewriting_in_place_replaces_both_files(tmp_path, capsys):
    src = write_model(tmp_path, weights="m_weight.npz")
    assert run([src, "--fold-constants", "-o", src], capsys) == (0, "", "")
    mod = load_module(src)
    assert sorted(mod.weights) == ["k_T", "s"]


@pytest.mark.parametrize("make", ["missing", "directory", "unreadable"])
def test_an_unreadable_weight_file_is_an_error_for_a_pass_that_needs_weights(tmp_path, capsys, make):
    """A named npz that cannot be read makes a pass that reads weight data fail naming the file
    (it would silently do nothing); a pass that reads none runs, and the module is unchanged."""
    src = tmp_path / "m.mlir"
    src.write_text(MODULE.format(weights="w.npz"))
    if make == "directory":
        (tmp_path / "w.npz").mkdir()
    elif make == "unreadable":
        (tmp_path / "w.npz").write_bytes(b"")
        (tmp_path / "w.npz").chmod(0)
        if os.access(tmp_path / "w.npz", os.R_OK):
            pytest.skip("running as root: permissions do not stop reading")
    reason = {"missing": "No such file or directory", "directory": "it is a directory", "unreadable": "Permission denied"}[make]
    for flag in ("--fold-constants", "--canonicalize", "--fuse-conv-bn", "--scalar-to-const", "--extra-optimize"):
        code, out, err = run([src, flag, "-o", tmp_path / "o.mlir"], capsys)
        assert (code, out) == (1, "")
        assert err == (f"{src}: error: pass '{flag[2:]}' needs the weight data, but cannot read weight file "
                       f"'{tmp_path / 'w.npz'}' named by module.weight_file: {reason}\n")
        assert not (tmp_path / "o.mlir").exists()
    code, out, err = run([src, "--shape-infer", "--struct-optimize", "--cast-cleanup"], capsys)
    assert (code, err) == (0, "")
    assert '"top.Permute"' in out and 'module.weight_file = "w.npz"' in out


def test_an_npz_that_does_not_match_the_module_is_an_error_at_the_weight(tmp_path, capsys):
    src = write_model(tmp_path, arrays={"k": K})
    code, out, err = run([src, "--fold-constants", "-o", tmp_path / "o.mlir"], capsys)
    assert (code, out) == (1, "")
    assert err == f"{src}:5:10: error: 'top.Weight' op weight 'a' is missing from '{tmp_path / 'm_weight.npz'}'\n"
    assert not (tmp_path / "o.mlir").exists()


def test_weights_changed_in_two_split_chunks_are_an_error(tmp_path, capsys):
    src = write_model(tmp_path)
    src.write_text(src.read_text() + "// -----\n" + src.read_text())
    code, out, err = run([src, "--split-input-file", "--fold-constants", "-o", tmp_path / "o.mlir"], capsys)
    assert (code, out) == (1, "")
    assert err == "error: the passes changed the weights of 2 chunks; one output has one weight file\n"
    assert not (tmp_path / "o.mlir").exists() and not (tmp_path / "o_weight.npz").exists()


@pytest.mark.parametrize("flags, message", [
    (["--init=weight_in_mem=True", "--canonicalize"],
     "init weight_in_mem=true: no weights of this module are in memory (tpuc-opt reads them from module.weight_file; drop the option)"),
    (["--init=freq=1000", "--canonicalize"], "pass 'init' has no option 'freq'; its options: weight_in_mem"),
    (["--canonicalize", "--init"], "pass 'init' must come first: it loads the weights the other passes use"),
    (["--deinit", "--canonicalize"], "pass 'deinit' must come last: it saves the weights the other passes use"),
    (["--init", "--init"], "pass 'init' must come first: it loads the weights the other passes use"),
])
def test_init_and_deinit_options_and_places_are_checked(tmp_path, capsys, flags, message):
    """TPU-MLIR's init options that tpudsl does not model (freq, level) are errors naming the option;
    init and deinit anywhere but first and last would read or save the weights at the wrong time."""
    code, out, err = run([write_model(tmp_path), *flags, "-o", tmp_path / "o.mlir"], capsys)
    assert (code, out) == (1, "")
    assert err.rstrip("\n").endswith(f"error: {message}")
    assert not (tmp_path / "o.mlir").exists()


def test_weights_in_memory_are_used_and_kept_by_init_and_deinit(tmp_path):
    """In process (as model_transform runs its passes), `init weight_in_mem=true` takes the weights
    the TopModule holds and `deinit no_save_weight=true` leaves the changed ones there: no file."""
    from tpudsl.dialects import make_context
    from tpudsl.rewrites.fold_constants import FoldConstantsPass
    from tpudsl.rewrites.init_deinit import DeinitPass, InitPass

    mod = load_module(write_model(tmp_path))
    (tmp_path / "m_weight.npz").unlink()  # nothing may be read from disk
    for p in (InitPass(weight_in_mem=True), FoldConstantsPass(), DeinitPass(no_save_weight=True)):
        p.apply(make_context(), mod.module)
    np.testing.assert_array_equal(mod.weights["k_T"], K.T)
    np.testing.assert_array_equal(mod.weights["s"], K + A)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.mlir"]

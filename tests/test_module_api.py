"""The module API: the TPU-MLIR skeleton, weights in and out of the npz, and every way loading fails."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f32

from tpudsl.dialects.opdef import create, loc_name
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import TopModule, load_module, new_top_module, save_module, tensor_type_of, write_atomically

T14 = TensorType(f32, [1, 4])


def small_model() -> TopModule:
    """input -> Add(input, bias) -> Mul(_, scale): two weights, one output."""
    mod = new_top_module("net", [T14])
    bias = mod.add_weight("bias", np.arange(4, dtype=np.float32).reshape(1, 4))
    scale = mod.add_weight("scale", np.full((1, 4), 2.0, dtype=np.float32))
    block = mod.main_func().body.block
    add = create("top.Add", [block.args[0], bias.results[0]], [T14], loc="add")
    mul = create("top.Mul", [add.results[0], scale.results[0]], [T14], loc="out")
    block.add_ops([add, mul])
    mod.set_outputs([mul.results[0]])
    return mod


def test_new_top_module_has_tpu_mlir_module_attributes(tmp_path):
    mod = small_model()
    save_module(mod, tmp_path / "net.mlir")
    text = (tmp_path / "net.mlir").read_text()
    assert (
        'module attributes {module.chip = "ALL", module.name = "net", module.platform = "ONNX", '
        'module.state = "TOP_F32", module.weight_file = "net_top_f32_all_weight.npz"} {'
    ) in text
    assert "func.func @main(%arg0: tensor<1x4xf32> loc(unknown)) -> tensor<1x4xf32> {" in text
    assert (mod.state, mod.chip) == ("TOP_F32", "ALL")


def test_save_then_load_gives_back_ops_names_and_arrays(tmp_path):
    save_module(small_model(), tmp_path / "net.mlir")
    assert sorted(os.listdir(tmp_path)) == ["net.mlir", "net_top_f32_all_weight.npz"]
    mod = load_module(tmp_path / "net.mlir")
    assert [loc_name(op) for op in mod.main_func().body.block.ops] == ["bias", "scale", "add", "out", ""]
    bias, scale = mod.weight_ops()
    np.testing.assert_array_equal(mod.weight_of(bias), [[0, 1, 2, 3]])
    np.testing.assert_array_equal(mod.weight_of(scale), [[2, 2, 2, 2]])
    assert mod.path == tmp_path / "net.mlir"


def test_add_weight_makes_names_unique(tmp_path):
    mod = small_model()
    first = mod.add_weight("bias", np.zeros(3, np.float32))
    second = mod.add_weight("bias", np.zeros(3, np.float32))
    assert (loc_name(first), loc_name(second)) == ("bias_1", "bias_2")
    assert set(mod.weights) == {"bias", "scale", "bias_1", "bias_2"}


def test_only_weights_still_used_by_a_weight_op_are_saved(tmp_path):
    mod = small_model()
    mod.weights["stale"] = np.zeros(2, np.float32)
    save_module(mod, tmp_path / "net.mlir", weight_path=tmp_path / "w" / ".." / "custom.npz")
    with np.load(tmp_path / "custom.npz") as npz:
        assert sorted(npz.files) == ["bias", "scale"]
    assert 'module.weight_file = "custom.npz"' in (tmp_path / "net.mlir").read_text()


def test_weight_names_with_slashes_survive_the_npz(tmp_path):
    mod = new_top_module("m", [T14])
    w = mod.add_weight("/encoder/layers.0/Add_output_0", np.ones((1, 4), np.float32))
    block = mod.main_func().body.block
    add = create("top.Add", [block.args[0], w.results[0]], [T14], loc="y")
    block.add_op(add)
    mod.set_outputs([add.results[0]])
    save_module(mod, tmp_path / "m.mlir")
    loaded = load_module(tmp_path / "m.mlir")
    assert list(loaded.weights) == ["/encoder/layers.0/Add_output_0"]


def write_model(tmp_path: Path, weights: dict[str, np.ndarray], weight_file: str = "w.npz") -> Path:
    """A hand-written model with two weights at known lines (3 and 4), and its npz."""
    mlir = tmp_path / "model.mlir"
    mlir.write_text(
        f'module attributes {{module.state = "TOP_F32", module.weight_file = "{weight_file}"}} {{\n'
        "  func.func @main(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {\n"
        '    %0 = "top.Weight"() : () -> tensor<1x4xf32> loc("w_a")\n'
        '    %1 = "top.Weight"() : () -> tensor<4xf32> loc("w_b")\n'
        '    %2 = "top.Add"(%arg0, %0, %1) : (tensor<1x4xf32>, tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32> loc("sum")\n'
        "    return %2 : tensor<1x4xf32>\n"
        "  }\n"
        "}\n"
    )
    if weights:
        np.savez(tmp_path / weight_file, **weights)
    return mlir


def test_a_weight_missing_from_the_npz_is_named_at_its_position(tmp_path):
    mlir = write_model(tmp_path, {"w_a": np.zeros((1, 4), np.float32)})
    with pytest.raises(TpudslError) as info:
        load_module(mlir)
    assert str(info.value) == f"{mlir}:4:10: error: 'top.Weight' op weight 'w_b' is missing from '{tmp_path / 'w.npz'}'"


def test_a_weight_of_the_wrong_shape_is_named_with_both_shapes(tmp_path):
    mlir = write_model(tmp_path, {"w_a": np.zeros((4, 1), np.float32), "w_b": np.zeros(4, np.float32)})
    with pytest.raises(TpudslError) as info:
        load_module(mlir)
    assert str(info.value) == (
        f"{mlir}:3:10: error: 'top.Weight' op weight 'w_a' has shape 4x1 in '{tmp_path / 'w.npz'}', "
        "but its type is tensor<1x4xf32>"
    )


def test_a_missing_npz_is_an_error_naming_it(tmp_path):
    mlir = write_model(tmp_path, {})
    with pytest.raises(TpudslError) as info:
        load_module(mlir)
    assert str(info.value) == f"{mlir}: error: cannot read weight file '{tmp_path / 'w.npz'}': No such file or directory"


def test_a_corrupt_npz_is_an_error_naming_it(tmp_path):
    mlir = write_model(tmp_path, {})
    (tmp_path / "w.npz").write_bytes(b"not a zip file")
    with pytest.raises(TpudslError, match=r"model.mlir: error: cannot read weight file '.*w.npz'"):
        load_module(mlir)


def test_weights_without_a_weight_file_attribute_are_an_error(tmp_path):
    mlir = write_model(tmp_path, {})
    mlir.write_text(mlir.read_text().replace(', module.weight_file = "w.npz"', ""))
    with pytest.raises(TpudslError) as info:
        load_module(mlir)
    assert str(info.value) == f"{mlir}: error: module has top.Weight ops but no module.weight_file attribute"


def test_a_module_that_does_not_verify_is_an_error_at_the_op(tmp_path):
    mlir = write_model(tmp_path, {"w_a": np.zeros((1, 4), np.float32), "w_b": np.zeros(4, np.float32)})
    text = mlir.read_text()
    for old, new in [('tensor<1x4xf32> loc("sum")', 'tensor<2x4xf32> loc("sum")'),
                     ("%2 : tensor<1x4xf32>", "%2 : tensor<2x4xf32>"),
                     ("-> tensor<1x4xf32> {", "-> tensor<2x4xf32> {")]:
        text = text.replace(old, new)
    mlir.write_text(text)
    with pytest.raises(TpudslError, match=rf"^{mlir}:5:10: error: 'top.Add' op \"sum\" "):
        load_module(mlir)


def test_loading_a_missing_mlir_raises_oserror_for_the_cli_to_report(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_module(tmp_path / "absent.mlir")


def test_a_failed_save_leaves_both_old_files_untouched(tmp_path):
    mod = small_model()
    mod.weights.pop("scale")  # a top.Weight whose data is gone: saving must fail before writing
    (tmp_path / "net.mlir").write_text("old mlir\n")
    (tmp_path / "net_top_f32_all_weight.npz").write_bytes(b"old npz")
    with pytest.raises(TpudslError, match="weight 'scale' has no data"):
        save_module(mod, tmp_path / "net.mlir")
    assert (tmp_path / "net.mlir").read_text() == "old mlir\n"
    assert (tmp_path / "net_top_f32_all_weight.npz").read_bytes() == b"old npz"


def test_write_atomically_keeps_the_old_file_when_writing_fails(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old\n")

    def fail(f):
        f.write(b"partial")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_atomically(target, fail)
    assert target.read_text() == "old\n"
    assert os.listdir(tmp_path) == ["out.txt"]


def test_write_atomically_gives_new_files_the_umask_mode(tmp_path):
    old = os.umask(0o022)
    try:
        write_atomically(tmp_path / "new.txt", lambda f: f.write(b"x"))
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o644


@pytest.mark.parametrize(
    "dtype, text",
    [("float32", "tensor<2x3xf32>"), ("float16", "tensor<2x3xf16>"), ("int8", "tensor<2x3xi8>"),
     ("uint8", "tensor<2x3xui8>"), ("int32", "tensor<2x3xi32>"), ("bool", "tensor<2x3xi1>")],
)
def test_tensor_type_of_uses_mlir_element_types(dtype, text):
    assert str(tensor_type_of(np.zeros((2, 3), dtype=dtype))) == text


def test_tensor_type_of_rejects_dtypes_a_weight_cannot_hold():
    with pytest.raises(TpudslError, match="complex128"):
        tensor_type_of(np.zeros(2, dtype=np.complex128))


def test_main_func_and_module_attributes_are_errors_when_absent():
    mod = new_top_module("x", [])
    del mod.module.attributes["module.state"]
    with pytest.raises(TpudslError, match="module has no string attribute module.state"):
        _ = mod.state
    mod.module.body.block.erase_op(mod.main_func())
    with pytest.raises(TpudslError, match="module has no func.func @main"):
        mod.main_func()


def test_a_pass_finds_the_weights_of_its_module_through_top_module_of(tmp_path):
    from xdsl.dialects.builtin import ModuleOp

    from tpudsl.ir.module import top_module_of

    mod = small_model()
    assert top_module_of(mod.module) is mod
    save_module(mod, tmp_path / "net.mlir")
    loaded = load_module(tmp_path / "net.mlir")
    assert top_module_of(loaded.module) is loaded and "bias" in top_module_of(loaded.module).weights
    assert top_module_of(ModuleOp([])) is None


def test_a_missing_weight_is_one_error_line_from_a_command_that_loads_weights(tmp_path):
    """model_runner loads the module with its weights: the same message, exit 1, no traceback."""
    import subprocess
    import sys

    mlir = write_model(tmp_path, {"w_a": np.zeros((1, 4), np.float32)})
    np.savez(tmp_path / "in.npz", arg0=np.zeros((1, 4), np.float32))
    tool = Path(__file__).resolve().parent.parent / "tools" / "model_runner.py"
    proc = subprocess.run(
        [sys.executable, str(tool), "--input", str(tmp_path / "in.npz"), "--model", str(mlir),
         "--output", str(tmp_path / "out.npz")],
        capture_output=True, text=True, timeout=120,
    )
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == f"{mlir}:4:10: error: 'top.Weight' op weight 'w_b' is missing from '{tmp_path / 'w.npz'}'\n"
    assert not (tmp_path / "out.npz").exists()

"""TPU-MLIR's flags of model_transform, run_calibration, run_qtable, run_sensitive_layer, model_runner,
bmodel_checker, npz_tool, mlir_cut and model_deploy (its implemented flags: test_model_deploy_flags.py)
(docs/tools.md, "TPU-MLIR's flags"): each implemented flag has its effect, checked against a separately
written reference; each refused one is one exact line, exit 1, nothing written."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from cli_support import run_main, table_rows
from frontend_support import error_lines, make_model
from onnx import helper as h

from tpudsl.cli.calibration_run import sample_loader
from tpudsl.ir.module import load_module


def written(path: Path) -> set[str]:
    return {p.name for p in path.iterdir()}


def relu_model(tmp_path: Path, shape=(1, 3, 8, 8)) -> None:
    onnx.save(make_model([h.make_node("Relu", ["data"], ["y"])], {"data": list(shape)}, ["y"]), tmp_path / "m.onnx")


def transform(tmp_path: Path, *args: str):
    return run_main("model_transform", "--model_name", "m", "--model_def", "m.onnx", "--mlir", "m.mlir", *args, cwd=tmp_path)


def save_rgb(path: Path, pixels: np.ndarray) -> None:
    from PIL import Image

    Image.fromarray(pixels, mode="RGB").save(path)


def halve(pixels: np.ndarray) -> np.ndarray:
    """A downscale by exactly 2: half-pixel bilinear samples at 2i + 0.5, the mean of each 2x2 block."""
    p = pixels.astype(np.float64)
    return (p[0::2, 0::2] + p[0::2, 1::2] + p[1::2, 0::2] + p[1::2, 1::2]) / 4


def letterbox_reference(pixels: np.ndarray, size: int, pad_value: int, center: bool) -> np.ndarray:
    """TPU-MLIR's letterbox of an image twice as wide as high into size x size (scale 1/2)."""
    small = halve(pixels)
    canvas = np.full((size, size, 3), float(pad_value))
    top = (size - small.shape[0]) // 2 if center else 0
    canvas[top : top + small.shape[0]] = small
    return canvas


@pytest.mark.parametrize("flags, center", [((), True), (("--pad_type", "center"), True), (("--pad_type", "normal"), False)])
def test_letterbox_pad_type_and_value(tmp_path, flags, center):
    pixels = np.random.default_rng(5).integers(0, 256, (8, 16, 3), dtype=np.uint8)
    save_rgb(tmp_path / "img.png", pixels)
    relu_model(tmp_path)
    r = transform(tmp_path, "--test_input", "img.png", "--pixel_format", "rgb", "--keep_aspect_ratio",
                  "--pad_value", "114", *flags)
    assert r.returncode == 0, r.stderr
    got = np.load(tmp_path / "m_in_f32.npz")["data"][0].transpose(1, 2, 0)
    np.testing.assert_allclose(got, letterbox_reference(pixels, 8, 114, center), rtol=1e-6)


def test_short_side_scale_crops_and_calibration_reads_it_back(tmp_path):
    pixels = np.random.default_rng(6).integers(0, 256, (16, 8, 3), dtype=np.uint8)
    save_rgb(tmp_path / "img.png", pixels)
    relu_model(tmp_path, (1, 3, 4, 4))
    r = transform(tmp_path, "--test_input", "img.png", "--pixel_format", "rgb", "--keep_aspect_ratio",
                  "--keep_ratio_mode", "short_side_scale", "--pad_value", "7", "--mean", "1,2,3")
    assert r.returncode == 0, r.stderr
    want = halve(pixels)[2:6] - [1, 2, 3]  # scale 1/2 gives 8x4, its center 4x4
    got = np.load(tmp_path / "m_in_f32.npz")["data"]
    np.testing.assert_allclose(got[0].transpose(1, 2, 0), want, rtol=1e-6)
    text = (tmp_path / "m.mlir").read_text()
    assert 'keep_ratio_mode = "short_side_scale"' in text and 'pad_type = "center"' in text and "pad_value = 7" in text
    # run_calibration preprocesses its image samples from what top.Input records: the same tensor.
    loaded = sample_loader(load_module(tmp_path / "m.mlir"))(str(tmp_path / "img.png"))
    np.testing.assert_array_equal(loaded["data"], got)


def test_not_inference_converts_only(tmp_path):
    relu_model(tmp_path)
    np.savez(tmp_path / "in.npz", data=np.ones((1, 3, 8, 8), np.float32))
    r = transform(tmp_path, "--test_input", "in.npz", "--not_inference", "--cache_skip")
    assert r.returncode == 0, r.stderr
    assert written(tmp_path) == {"m.onnx", "in.npz", "m.mlir", "m_top_f32_all_weight.npz"}
    assert "run the Top interpreter" not in r.stderr and "npz compare" not in r.stdout
    # Without it (and --cache_skip changes nothing): the validation run and its files.
    r = transform(tmp_path, "--test_input", "in.npz", "--cache_skip")
    assert r.returncode == 0 and "npz compare PASSED." in r.stdout
    assert {"m_in_f32.npz", "m_top_outputs.npz", "m_ref_outputs.npz"} <= written(tmp_path)


def test_accepted_values_of_checked_flags(tmp_path):
    relu_model(tmp_path)
    r = transform(tmp_path, "--add_postprocess", "", "--onnx_sim", "", "--replace_topk_indices", "False",
                  "--debug_cmd", "", "--dynamic_shape_input_names", "")
    assert r.returncode == 0, r.stderr
    assert "m.mlir" in written(tmp_path)


REFUSED = {
    "model_transform": [
        (["--add_postprocess", "bnr"], "error: model_transform: --add_postprocess bnr: add-postprocess: type=bnr is not "
         "supported: top.DepackRaw is not modelled (supported: type=yolov3, yolov3_tiny, yolov5, yolov8, yolov11 or ssd)"),
        (["--onnx_sim", "skip_fuse_bn"], "error: model_transform: --onnx_sim skip_fuse_bn is not supported: tpudsl runs no "
         "onnx-simplifier, whose fusions skip_fuse_bn would change (supported: --onnx_sim '')"),
        (["--dynamic"], "error: model_transform: --dynamic is not supported: tpudsl compiles static shapes (give them "
         "with --input_shapes) (supported: without --dynamic)"),
        (["--dump_final_opt", "True"], "error: model_transform: --dump_final_opt True is not supported: tpudsl runs no "
         "onnx-simplifier, so there is no final optimized .onnx to save (supported: without --dump_final_opt)"),
        (["--model_data", "m.caffemodel"], "error: model_transform: --model_data m.caffemodel is not supported: tpudsl "
         "converts ONNX models only (a .caffemodel is Caffe's) (supported: without --model_data)"),
        (["--replace_topk_indices", "true"], "error: model_transform: --replace_topk_indices true is not supported: "
         "replacing TopK's indices is not modelled (supported: --replace_topk_indices False or --replace_topk_indices "
         "false or --replace_topk_indices 0 or --replace_topk_indices no)"),
        (["--pad_value", "300"], "error: --pad_value 300 is not a pixel value (0 to 255)"),
        (["--keep_ratio_mode", "stretch"], "error: --keep_ratio_mode 'stretch' is not one of letterbox, short_side_scale"),
        (["--pad_type", "left"], "error: --pad_type 'left' is not one of normal, center"),
    ],
}


@pytest.mark.parametrize("args, message", REFUSED["model_transform"], ids=lambda a: a[0] if isinstance(a, list) else "")
def test_model_transform_refuses(tmp_path, args, message):
    relu_model(tmp_path)
    r = transform(tmp_path, *args)
    assert r.returncode == 1, r.stderr
    assert error_lines(r.stderr) == [message]
    assert written(tmp_path) == {"m.onnx"}


def test_model_transform_refuses_other_frameworks(tmp_path):
    (tmp_path / "m.pt").write_bytes(b"")
    r = run_main("model_transform", "--model_name", "m", "--model_def", "m.pt", "--mlir", "m.mlir", cwd=tmp_path)
    assert r.returncode == 1
    assert r.stderr.splitlines() == ["error: model_transform: --model_def m.pt is not supported: tpudsl converts ONNX "
                                     "models and Top modules only (supported: a .onnx or .mlir file)"]
    assert written(tmp_path) == {"m.pt"}


def conv_bn_model(tmp_path: Path) -> None:
    """Conv + BatchNormalization + Relu: the Top passes fuse and fold, so the origin module differs from the result."""
    rng = np.random.default_rng(9)
    weights = {"w": rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "s": rng.random(4).astype(np.float32) + 0.5,
               "b": rng.standard_normal(4).astype(np.float32), "mu": rng.standard_normal(4).astype(np.float32),
               "var": rng.random(4).astype(np.float32) + 0.5}
    nodes = [h.make_node("Conv", ["data", "w"], ["c"], pads=[1, 1, 1, 1]),
             h.make_node("BatchNormalization", ["c", "s", "b", "mu", "var"], ["n"]), h.make_node("Relu", ["n"], ["y"])]
    onnx.save(make_model(nodes, {"data": [1, 3, 8, 8]}, ["y"], weights), tmp_path / "m.onnx")


def test_top_mlir_model_def_runs_the_top_passes(tmp_path):
    """TPU-MLIR's MlirTransformer: a --debug origin module given as --model_def gives what the ONNX model gave."""
    conv_bn_model(tmp_path)
    assert transform(tmp_path, "--debug").returncode == 0
    again = tmp_path / "again"
    again.mkdir()
    for f in ("m_origin.mlir", "m_top_f32_all_origin_weight.npz"):
        (again / f).write_bytes((tmp_path / f).read_bytes())
    assert (again / "m_origin.mlir").read_text() != (tmp_path / "m.mlir").read_text()
    r = run_main("model_transform", "--model_name", "m", "--model_def", "m_origin.mlir", "--mlir", "m.mlir", cwd=again)
    assert r.returncode == 0, r.stderr
    assert (again / "m.mlir").read_text() == (tmp_path / "m.mlir").read_text()
    ours, want = np.load(again / "m_top_f32_all_weight.npz"), np.load(tmp_path / "m_top_f32_all_weight.npz")
    assert ours.files == want.files and all(np.array_equal(ours[k], want[k]) for k in want.files)
    # What the Top module fixes already, or a module of another name, is refused by name; nothing is written.
    before = written(again)
    for args, message in [
        (["--model_name", "x", "--model_def", "m_origin.mlir", "--mlir", "x.mlir"],
         "error: --model_name x is not the module.name of m_origin.mlir (m)"),
        (["--model_name", "m", "--model_def", "m_origin.mlir", "--mlir", "n.mlir", "--input_shapes", "[[1,3,8,8]]"],
         "error: model_transform: --input_shapes is not supported with a .mlir --model_def: the Top module's inputs, "
         "outputs and preprocessing are fixed and there is no original model to validate against (supported: without "
         "--input_shapes)"),
        (["--model_name", "m", "--model_def", "m.mlir", "--mlir", "m2.mlir"],
         "error: the weight file 'm_top_f32_all_weight.npz' would overwrite the weights of --model_def 'm.mlir'; "
         "choose another --mlir directory"),
    ]:
        r = run_main("model_transform", *args, cwd=again)
        assert (r.returncode, error_lines(r.stderr)) == (1, [message])
    assert written(again) == before


@pytest.fixture(scope="module")
def top_model(tmp_path_factory):
    """A converted Relu model with two npz samples."""
    d = tmp_path_factory.mktemp("top")
    relu_model(d, (1, 2, 4, 4))
    assert transform(d).returncode == 0
    samples = d / "samples"
    samples.mkdir()
    rng = np.random.default_rng(3)
    for i in range(2):
        np.savez(samples / f"s{i}.npz", data=rng.standard_normal((1, 2, 4, 4)).astype(np.float32))
    return d


def calibrate(d: Path, *args: str):
    return run_main("run_calibration", "m.mlir", "--dataset", "samples", "--quiet", *args, cwd=d)


@pytest.mark.parametrize("cali_method, method", [("use_max", "minmax"), ("use_kl", "kld")])
def test_cali_method_is_tpu_mlirs_name_of_the_method(top_model, cali_method, method):
    assert calibrate(top_model, "--cali_method", cali_method, "--calibration_table", "a_table",
                     "--processor", "bm1688").returncode == 0
    assert calibrate(top_model, "--method", method, "-o", "b_table").returncode == 0
    assert table_rows(top_model / "a_table") == table_rows(top_model / "b_table")
    if method == "minmax":  # and against numpy: the threshold of minmax is max |x| over the samples
        xs = [np.load(p)["data"] for p in sorted((top_model / "samples").iterdir())]
        name, threshold, *_ = table_rows(top_model / "a_table")[0]
        assert name == "data" and float(threshold) == pytest.approx(max(float(np.abs(x).max()) for x in xs), abs=1e-6)


def test_debug_cmd_dump_list_writes_the_samples_used(top_model):
    assert calibrate(top_model, "--input_num", "1", "--debug_cmd", "dump_list", "-o", "c_table").returncode == 0
    assert (top_model / "selected_image_list.txt").read_text() == f"samples{os.sep}s0.npz\n"
    assert "sample number: 1" in (top_model / "c_table").read_text()
    (top_model / "selected_image_list.txt").unlink()


CALIBRATION_REFUSED = [
    (["--search", "search_qtable"], "error: run_calibration: --search search_qtable is not supported: the "
     "mixed-precision search is run_qtable (supported: --search False or --search search_threshold)"),
    (["--kurtosis_analysis"], "error: run_calibration: --kurtosis_analysis is not supported: kurtosis analysis is not "
     "modelled (supported: without --kurtosis_analysis)"),
    (["--debug_cmd", "disable_lg"], "error: run_calibration: --debug_cmd disable_lg is not supported: of TPU-MLIR's "
     "debug commands only dump_list is modelled (supported: --debug_cmd '' or --debug_cmd dump_list)"),
]


@pytest.mark.parametrize("args, message", CALIBRATION_REFUSED, ids=lambda a: a[0] if isinstance(a, list) else "")
def test_run_calibration_refuses(top_model, args, message):
    before = written(top_model)
    r = calibrate(top_model, *args, "-o", "refused_table")
    assert (r.returncode, r.stderr.splitlines()) == (1, [message])
    assert written(top_model) == before


def test_run_qtable_refuses(top_model):
    r = run_main("run_qtable", "m.mlir", "--dataset", "samples", "--calibration_table", "x", "--processor", "bm1684x",
                 "--debug_cmd", "dump_list", "-o", "q", cwd=top_model)
    assert (r.returncode, r.stderr.splitlines()) == (1, [
        "error: run_qtable: --debug_cmd dump_list is not supported: TPU-MLIR's debug commands are not modelled "
        "(supported: --debug_cmd '')"])
    assert "q" not in written(top_model)


def test_model_runner_default_output_and_refusals(top_model, tmp_path):
    x = np.random.default_rng(4).standard_normal((1, 2, 4, 4)).astype(np.float32)
    np.savez(tmp_path / "in.npz", data=x)
    model = top_model / "m.mlir"
    r = run_main("model_runner", "--input", "in.npz", "--model", model, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "_output.npz")["y"], np.maximum(x, 0))
    r = run_main("model_runner", "--input", "in.npz", "--model", model, "--output", "o.npz", "--cuda", cwd=tmp_path)
    assert (r.returncode, r.stderr.splitlines()) == (1, [
        "error: model_runner: --cuda is not supported: tpudsl runs on the CPU (supported: without --cuda)"])
    assert "o.npz" not in written(tmp_path)


def test_npz_tool_refuses(tmp_path):
    np.savez(tmp_path / "a.npz", x=np.zeros(3, np.float32))
    r = run_main("npz_tool", "cali_test", "a.npz", "--calibration_table", "t", cwd=tmp_path)
    assert (r.returncode, r.stderr.splitlines()) == (1, [
        "error: npz_tool: cali_test is not supported: it quantizes tensors with a calibration table's thresholds and "
        "writes requant.npz; deploy the INT8 model (model_deploy) and compare its tensors instead (supported: compare, "
        "dump, stats, statistic, get_shape, extract, remove, rename, merge, insert, reshape, permute, tranpose, to_dat, "
        "to_bin, to_npy, bf16_to_fp32, fp16_to_fp32)"])
    for refused in ("visualize_diff", "int8_to_fp32"):
        r = run_main("npz_tool", refused, "a.npz", "a.npz", cwd=tmp_path)
        assert r.returncode == 1 and r.stderr.startswith(f"error: npz_tool: {refused} is not supported: it ")
    r = run_main("npz_tool", "compare", "a.npz", "a.npz", "--per_axis_compare", "1", cwd=tmp_path)
    assert (r.returncode, r.stderr.splitlines()) == (1, [
        "error: npz_tool compare: --per_axis_compare 1 is not supported: comparison along one axis is not modelled "
        "(supported: --per_axis_compare -1)"])
    r = run_main("npz_tool", "compare", "a.npz", "a.npz", "--int8_tensor_close", "1", "--per_axis_compare", "-1", cwd=tmp_path)
    assert r.returncode == 0 and "npz compare PASSED." in r.stdout
    assert written(tmp_path) == {"a.npz"}


@pytest.mark.parametrize("flags, message", [
    (["--output_names", "y", "--mode", "bt"], "--mode bt needs --num, a positive number of ops"),
    (["--output_names", "y", "--mode", "bt", "--num", "0"], "--mode bt needs --num, a positive number of ops"),
    (["--output_names", "y", "--input_names", "data", "--mode", "bt", "--num", "1"],
     "--mode bt takes --output_names only: it finds the inputs itself"),
    (["--output_names", "y", "--mode", "ft", "--num", "1"], "--mode ft takes --input_names only: it finds the outputs itself"),
    (["--output_names", "y", "--num", "2"], "--num is read by --mode bt and ft only"),
])
def test_mlir_cut_mode_flags_that_do_not_fit(top_model, flags, message):
    """TPU-MLIR's rules of --mode (it asserts them): bt traces from outputs, ft from inputs."""
    before = written(top_model)
    r = run_main("mlir_cut", "--mlir", "m.mlir", *flags, cwd=top_model)
    assert (r.returncode, r.stderr.splitlines()) == (1, [f"error: {message}"])
    assert written(top_model) == before


def test_npz_tool_file_utilities(tmp_path):
    rng = np.random.default_rng(8)
    a = {"x": rng.standard_normal((2, 3)).astype(np.float32), "i": np.arange(5, dtype=np.int8),
         "z": rng.standard_normal((1, 4, 1)).astype(np.float16)}
    np.savez(tmp_path / "a.npz", **a)
    r = run_main("npz_tool", "get_shape", "a.npz", "z", cwd=tmp_path)
    assert (r.returncode, r.stdout) == (0, "[1,4,1]\n")
    r = run_main("npz_tool", "extract", "a.npz", "b.npz", "z,x", cwd=tmp_path)
    assert (r.returncode, r.stdout) == (0, "extract z\nextract x\n")
    b = np.load(tmp_path / "b.npz")
    assert b.files == ["z", "x"] and all(np.array_equal(b[k], a[k]) and b[k].dtype == a[k].dtype for k in b.files)
    r = run_main("npz_tool", "to_dat", "a.npz", "a.bin", cwd=tmp_path)
    assert r.returncode == 0
    assert (tmp_path / "a.bin").read_bytes() == b"".join(np.ascontiguousarray(v).tobytes() for v in a.values())
    r = run_main("npz_tool", "rename", "a.npz", "x", "y", cwd=tmp_path)
    assert r.returncode == 0
    renamed = np.load(tmp_path / "a.npz")
    assert renamed.files == ["i", "z", "y"] and np.array_equal(renamed["y"], a["x"])
    # Bad input: one line, exit 1, nothing written or changed.
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    for args, message in [
        (["extract", "a.npz", "c.npz", "nope"], "error: 'a.npz' has no tensor 'nope' (it holds: i, z, y)"),
        (["rename", "a.npz", "i", "z"], "error: 'a.npz' already holds a tensor 'z'; rename would replace it"),
        (["get_shape", "a.npz", "x"], "error: 'a.npz' has no tensor 'x' (it holds: i, z, y)"),
    ]:
        r = run_main("npz_tool", *args, cwd=tmp_path)
        assert (r.returncode, r.stderr.splitlines()) == (1, [message])
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_mlir_cut_accepts_mode_io(top_model, tmp_path):
    r = run_main("mlir_cut", "--mlir", top_model / "m.mlir", "--output_names", "y", "--mode", "io", "-o", "cut.mlir",
                 cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert 'loc("y")' in (tmp_path / "cut.mlir").read_text()


def every_checked_flag():
    """(tool, argv before the flag, the row) for every row of every tool's CHECKED table."""
    from tpudsl.cli import (bmodel_checker, model_deploy, model_runner, model_transform, npz_tool, run_calibration,
                            run_qtable, run_sensitive_layer)

    tools = {
        "model_transform": (model_transform.CHECKED, ["--model_name", "m", "--model_def", "m.onnx", "--mlir", "m.mlir"]),
        "run_calibration": (run_calibration.CHECKED, ["m.mlir", "--dataset", "samples", "-o", "t"]),
        "run_qtable": (run_qtable.CHECKED, ["m.mlir", "--dataset", "samples", "--calibration_table", "t", "--processor",
                                            "bm1684x", "-o", "q"]),
        "run_sensitive_layer": (run_sensitive_layer.CHECKED, ["m.mlir", "--dataset", "samples", "--calibration_table",
                                                              "t", "--processor", "bm1684x", "-o", "q"]),
        "model_runner": (model_runner.CHECKED, ["--input", "in.npz", "--model", "m.mlir", "--output", "o.npz"]),
        "npz_tool compare": (npz_tool.COMPARE_CHECKED, ["compare", "a.npz", "a.npz"]),
        "model_deploy": (model_deploy.CHECKED, ["--mlir", "m.mlir", "--processor", "bm1684x", "--model", "m.bmodel"]),
        "bmodel_checker": (bmodel_checker.CHECKED, ["m.bmodel", "ref.npz"]),
    }
    return [(tool, argv, row) for tool, (rows, argv) in tools.items() for row in rows]


@pytest.mark.parametrize("tool, argv, row", every_checked_flag(), ids=lambda v: v.flag if hasattr(v, "flag") else "")
def test_every_checked_flag_is_refused_by_name(tmp_path, tool, argv, row):
    """Every row is wired: its flag with a value it does not accept is one line naming the tool and
    the flag, exit status 1, before any file is read (none exists here) or written."""
    switch = row.accepted == (False,)
    given = [row.flag] if switch else [row.flag, "bogus"]
    r = run_main(tool.split()[0], *argv, *given, cwd=tmp_path)
    shown = row.flag if switch else f"{row.flag} bogus"
    assert r.returncode == 1
    assert r.stderr.splitlines() == [f"error: {tool}: {shown} is not supported: {row.why} (supported: "
                                     + (f"without {row.flag})" if switch or not row.accepted else
                                        " or ".join(f"{row.flag} {a if a != '' else repr(a)}" for a in row.accepted) + ")")]
    assert written(tmp_path) == set()

"""run_qtable on a model with one tensor INT8 cannot hold, checked by model_deploy (the previous level).

The model: conv0 -> relu -> conv1 -> conv2 -> relu -> conv3. conv1's output channel 0 is 500
times the others (its weights are), and conv2 reads that channel with weights 500 times smaller,
so the model's output depends on the small channels. At the int8 scale the big channel sets
(th / 127), the small channels round to a few levels: conv1's result and conv2's operand must
stay float, the others need not. model_transform fuses each Relu into its Conv (the op keeps the
Relu's name): the layers are relu0, conv1, relu2 (conv2 + relu2) and conv3. The search must find exactly the layers whose int8 form touches
that tensor; model_deploy INT8 with the written qtable passes a 0.99 output cosine against Top,
and without it fails (a search that kept nothing, or the wrong layers, fails one of the two).
"""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest

from tests.cli_support import deploy_dir_int8, run_main, table_rows
from tests.models.builder import GraphBuilder
from tpudsl.cli import model_transform
from tpudsl.cli.run_calibration import main as run_calibration
from tpudsl.cli.qtable_search import Int8Search
from tpudsl.cli.run_qtable import main as run_qtable
from tpudsl.dialects import make_context
from tpudsl.interp import run_module
from tpudsl.ir.module import load_module
from tpudsl.passes import pass_class

OUTLIER = 500.0


def _outlier_model() -> onnx.ModelProto:
    g = GraphBuilder("outlier", seed=3)
    x = g.input("input", (1, 3, 8, 8))
    y = g.relu(g.conv(x, "conv0", 3, 8, 3), "relu0")
    y = g.conv(g.conv(y, "conv1", 8, 8, 1), "conv2", 8, 8, 1)
    g.output(g.conv(g.relu(y, "relu2"), "conv3", 8, 4, 3))

    def plant(name: str, w: np.ndarray) -> None:
        if name in ("conv1.weight", "conv1.bias"):
            w[0] *= OUTLIER
        elif name == "conv2.weight":
            w[:, 0] /= OUTLIER

    g.edit_weights(plant)
    return g.model()


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("qtable")
    onnx.save(_outlier_model(), d / "m.onnx")
    (d / "data").mkdir()
    rng = np.random.default_rng(0)
    for i in range(4):
        np.savez(d / "data" / f"{i}.npz", input=rng.standard_normal((1, 3, 8, 8)).astype(np.float32))
    model_transform.run(["--model_name", "m", "--model_def", str(d / "m.onnx"), "--mlir", str(d / "m.mlir")])
    with pytest.raises(SystemExit) as e:
        run_calibration([str(d / "m.mlir"), "--dataset", str(d / "data"), "--method", "minmax", "--quiet",
                         "-o", str(d / "table")])
    assert e.value.code == 0
    return d


# 0.99: both layers are below --min_layer_cos; 0.5: none is, the greedy step adds them worst first
@pytest.mark.parametrize("min_layer_cos", ["0.99", "0.5"])
def test_search_keeps_the_outlier_layers_float_and_model_deploy_agrees(model, capsys, min_layer_cos):
    with pytest.raises(SystemExit) as e:
        run_qtable([str(model / "m.mlir"), "--dataset", str(model / "data"), "--calibration_table",
                    str(model / "table"), "--processor", "bm1684x", "--input_num", "3", "--fp_type", "F32",
                    "--min_layer_cos", min_layer_cos,
                    "--loss_table", str(model / "loss"), "-o", str(model / "qtable")])
    assert e.value.code == 0
    err = capsys.readouterr().err
    assert "run_qtable: wrote" in err
    assert ("+ 'conv1' in F32" in err) == (min_layer_cos == "0.5")
    assert sorted(table_rows(model / "qtable")) == [["conv1", "F32"], ["relu2", "F32"]]
    losses = re.findall(r"^No\.(\d+) *: Layer: (\S+) +Cos: (\d\.\d{6})$", (model / "loss").read_text(), re.M)
    assert [int(row[0]) for row in losses] == list(range(4))
    assert {row[1] for row in losses[:2]} == {"conv1", "relu2"}  # worst first
    assert sorted(row[1] for row in losses) == ["conv1", "conv3", "relu0", "relu2"]
    cosines = [float(row[2]) for row in losses]
    assert cosines == sorted(cosines) and cosines[1] < 0.99 <= cosines[2]

    r = deploy_dir_int8(model, "table", "3.npz", "0.99,0.5", "--quantize_table", "qtable")
    assert r.returncode == 0, r.stderr  # reaches 0.99 on a sample the search did not see
    r = deploy_dir_int8(model, "table", "3.npz", "0.99,0.5")
    assert r.returncode == 1 and "Tpu check failed at tensor 'conv3'" in r.stderr, r.stderr


@pytest.mark.parametrize("change, message", [
    (("--calibration_table", "MISSING"), "cannot read calibration table"),
    (("--processor", "bm9999"), "unknown chip 'bm9999'"),
    (("--expected_cos", "0"), r"--expected_cos must be in \(0, 1\], not 0"),
    (("--expected_cos", "1.5"), r"--expected_cos must be in \(0, 1\], not 1.5"),
    (("--min_layer_cos", "-1"), r"--min_layer_cos must be in \(0, 1\]"),
    (("--fp_type", "BF16", "--expected_cos", "1"), r"every layer in BF16 reaches only cosine 0\.\d+ < --expected_cos 1 "),
])
def test_bad_input_is_one_line_and_nothing_is_written(model, tmp_path, capsys, change, message):
    args = {"--calibration_table": str(model / "table"), "--processor": "bm1684x", "--input_num": "1"}
    for flag, value in zip(change[::2], change[1::2]):
        args[flag] = str(tmp_path / "missing_table") if value == "MISSING" else value
    with pytest.raises(SystemExit) as e:
        run_qtable([str(model / "m.mlir"), "--dataset", str(model / "data"), "--quiet",
                    *[a for kv in args.items() for a in kv], "--loss_table", str(tmp_path / "loss"),
                    "-o", str(tmp_path / "qtable")])
    err = capsys.readouterr().err
    assert e.value.code == 1 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert re.search(message, err), err
    assert list(tmp_path.iterdir()) == []


def _deploy_cosine(d, qtable_lines: list[str], asymmetric: bool) -> float:
    """The cosine model_deploy's lowering (the passes, the qtable read from a file) reaches on the
    search's samples (the first 3 in name order): per output the mean over samples, then the least."""
    (d / "q_check").write_text("".join(f"{line}\n" for line in qtable_lines))
    top, tpu = load_module(d / "m.mlir"), load_module(d / "m.mlir")
    ctx = make_context()
    pass_class("import-calibration-table")(file=str(d / "table"), asymmetric=asymmetric).apply(ctx, tpu.module)
    pass_class("processor-assign")(chip="bm1684x", mode="INT8").apply(ctx, tpu.module)
    pass_class("convert-top-to-tpu")(qtable=str(d / "q_check"), asymmetric=asymmetric).apply(ctx, tpu.module)
    per_output: dict[str, list[float]] = {}
    for i in range(3):
        feed = dict(np.load(d / "data" / f"{i}.npz"))
        want, got = run_module(top.module, top.weights, feed), run_module(tpu.module, tpu.weights, feed)
        for name, w in want.items():
            a, b = np.asarray(got[name], np.float64).ravel(), np.asarray(w, np.float64).ravel()
            per_output.setdefault(name, []).append(float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))))
    return min(float(np.mean(c)) for c in per_output.values())


def test_asymmetric_search_quantizes_as_model_deploy_asymmetric_will(model):
    """Every cosine the search reports (each layer alone in INT8, the final qtable) is the one
    model_deploy --asymmetric's lowering gives with that qtable; the symmetric lowering gives other
    cosines, so a search that ignored --asymmetric fails here."""
    with pytest.raises(SystemExit) as e:
        run_qtable([str(model / "m.mlir"), "--dataset", str(model / "data"),
                    "--calibration_table", str(model / "table"), "--processor", "bm1684x", "--input_num", "3",
                    "--fp_type", "F32", "--asymmetric", "--quiet",
                    "--loss_table", str(model / "loss_asym"), "-o", str(model / "qtable_asym")])
    assert e.value.code == 0
    loss_text = (model / "loss_asym").read_text()
    assert loss_text.startswith("# chip: bm1684x  mix_mode: F32  int8: asymmetric\n")
    losses = re.findall(r"^No\.\d+ *: Layer: (\S+) +Cos: (\d\.\d{6})$", loss_text, re.M)
    layers = [layer for layer, _ in losses]
    moved = 0
    for layer, cos in losses:
        others = [f"{other} F32" for other in layers if other != layer]
        assert float(cos) == pytest.approx(_deploy_cosine(model, others, asymmetric=True), abs=1e-6), layer
        moved += abs(_deploy_cosine(model, others, asymmetric=False) - float(cos)) > 1e-5
    assert moved >= 2  # the symmetric lowering is measurably another one on most layers
    lines = (model / "qtable_asym").read_text().splitlines()
    reached = float(re.match(r"^# output cosine (\d\.\d{6}) vs Top \(asymmetric INT8\)$", lines[1]).group(1))
    kept = [line for line in lines if not line.startswith("#")]
    assert kept and reached >= 0.99
    assert reached == pytest.approx(_deploy_cosine(model, kept, asymmetric=True), abs=1e-6)


@pytest.mark.parametrize("layers, message", [
    ("nope", "--global_compare_layers: 'nope' is not a tensor of the module"),
    ("conv0", "--global_compare_layers: 'conv0' is not a tensor of the module"),  # fused into relu0 by model_transform
    ("conv1:0.5,relu2:0.6", "--global_compare_layers: the weights sum to 1.1, not 1"),
    ("conv1:x", "--global_compare_layers: 'conv1:x': the weight 'x' is not a number"),
    ("conv1:-0.5,relu2:1.5", "--global_compare_layers: 'conv1:-0.5': a weight must be a finite number >= 0, not -0.5"),
    ("conv1:0.5,relu2", "--global_compare_layers: 'relu2' has no weight while other layers have one"),
    ("conv1,conv1", "--global_compare_layers: 'conv1' is named twice"),
    ("conv1,", "--global_compare_layers 'conv1,' has an empty layer name"),
])
def test_bad_compare_layers_are_one_line_and_nothing_is_written(model, tmp_path, capsys, layers, message):
    with pytest.raises(SystemExit) as e:
        run_qtable([str(model / "m.mlir"), "--dataset", str(model / "data"), "--calibration_table", str(model / "table"),
                    "--processor", "bm1684x", "--input_num", "1", "--quiet", "--global_compare_layers", layers,
                    "--loss_table", str(tmp_path / "loss"), "-o", str(tmp_path / "qtable")])
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert e.value.code == 1 and len(lines) == 1 and lines[0].startswith(f"error: {message}"), err
    assert list(tmp_path.iterdir()) == []


def test_named_layers_replace_the_outputs(model, tmp_path):
    """--global_compare_layers relu0 scores relu0 instead of conv3 (TPU-MLIR's meaning: the named
    tensors, not the outputs as well): conv1 and relu2, which come after relu0, cannot lower its
    cosine, so the search keeps nothing float where it keeps both when the output is scored."""
    with pytest.raises(SystemExit) as e:
        run_qtable([str(model / "m.mlir"), "--dataset", str(model / "data"), "--calibration_table", str(model / "table"),
                    "--processor", "bm1684x", "--input_num", "3", "--fp_type", "F32", "--quiet",
                    "--global_compare_layers", "relu0", "--loss_table", str(tmp_path / "loss"),
                    "-o", str(tmp_path / "qtable")])
    assert e.value.code == 0
    assert table_rows(tmp_path / "qtable") == []
    losses = dict(re.findall(r"Layer: (\S+) +Cos: (\d\.\d{6})$", (tmp_path / "loss").read_text(), re.M))
    assert losses["conv1"] == losses["relu2"] == losses["conv3"] == "1.000000"
    assert float(losses["relu0"]) < 1.0


def test_a_named_tensor_the_int8_lowering_fuses_away_is_an_error(tmp_path):
    """A Clip wider than its input's range (one threshold for both, calibrated) is dropped by the
    INT8 lowering and `c` gives its name to the Conv: `c` is a tensor of Top, not of the INT8
    module, so naming it fails before any search (run_qtable) or correction (--bc), nothing written."""
    g = GraphBuilder("clip", seed=1)
    bounds = [g.const(name, np.array(v, np.float32)) for name, v in (("lo", -100.0), ("hi", 100.0))]
    g.output(g.conv(g.node("Clip", [g.conv(g.input("input", (1, 3, 8, 8)), "c", 3, 4, 3), *bounds], "clip"),
                    "out", 4, 2, 1))
    onnx.save(g.model(), tmp_path / "m.onnx")
    (tmp_path / "data").mkdir()
    sample = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)
    np.savez(tmp_path / "data" / "0.npz", input=sample)
    model_transform.run(["--model_name", "m", "--model_def", str(tmp_path / "m.onnx"),
                         "--mlir", str(tmp_path / "m.mlir")])
    r = run_main("run_calibration", "m.mlir", "--dataset", "data", "--quiet", "-o", "table", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    written = set(tmp_path.iterdir())
    message = ("error: --global_compare_layers: 'c' is not a tensor of the lowered module (its op is fused into "
               "another): name the fused op's tensor")
    for command, *argv in (
            ("run_qtable", "--calibration_table", "table", "--processor", "bm1684x", "-o", "qtable"),
            ("run_calibration", "--bc", "--processor", "bm1684x", "--expected_cos", "1", "-o", "table_bc")):
        r = run_main(command, "m.mlir", "--dataset", "data", "--quiet", "--global_compare_layers", "c", *argv,
                     cwd=tmp_path)
        assert r.returncode == 1 and r.stderr.strip() == message, (command, r.stderr)
        assert set(tmp_path.iterdir()) == written


def test_runs_whose_cosine_is_not_a_number_do_not_pass(model, monkeypatch, capsys):
    """INT8 runs holding NaN (an F16 overflow's inf gives the same) have no cosine: scored NaN,
    every `cos < threshold` test was False, the search kept nothing float and wrote a qtable, the
    worst outcome taken for a pass. Scored -1 (model_score.WORST), every layer goes float and,
    as even that run is NaN here, the search fails writing nothing."""
    real_runs = Int8Search.runs

    def nan_int8(self, top, which):
        runs = real_runs(self, top, which)
        return runs if which == "float" else [{n: np.full_like(a, np.nan) for n, a in run.items()} for run in runs]

    monkeypatch.setattr(Int8Search, "runs", nan_int8)
    with pytest.raises(SystemExit) as e:
        run_qtable([str(model / "m.mlir"), "--dataset", str(model / "data"),
                    "--calibration_table", str(model / "table"), "--processor", "bm1684x", "--input_num", "1",
                    "--fp_type", "F32", "--quiet", "--loss_table", str(model / "loss_nan"),
                    "-o", str(model / "qtable_nan")])
    assert e.value.code == 1
    assert capsys.readouterr().err == ("error: every layer in F32 reaches only cosine -1.000000 < --expected_cos "
                                       "0.99 (the calibration table or the float type limits it); nothing written\n")
    assert not (model / "loss_nan").exists() and not (model / "qtable_nan").exists()

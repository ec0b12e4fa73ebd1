"""run_sensitive_layer on a model with two layers made sensitive on purpose, checked against
onnxruntime with each layer's output fake-quantized (a QuantizeLinear/DequantizeLinear pair), each
method's run_calibration table, and model_deploy (the next level).

The model: conv_b (1x1) -> Clip(-3, 3) -> conv_a (3x3) -> Slice(channels 1..7) -> conv_c (3x3).
- conv_b copies input channel 3 to its channel 0; one sample holds a single 1000 there, so conv_b's
  range is ~1000 for one value of 32768: minmax's threshold rounds every other value to 0, and the
  Clip downstream removes the outlier anyway: percentile9999 is the right method, minmax the worst.
- conv_a's channel 0 is 500 times the others (its weights are) and the Slice drops it: the model's
  output depends on the small channels, which every threshold that holds channel 0 rounds away
  (kld, which clips channel 0, hurts least): conv_a is the most sensitive layer whatever the method.
The given table is run_calibration's percentile9999 one (the input's threshold then ignores the outlier)
with conv_b's threshold set to minmax's: the Clip, measured after conv_b, must read conv_b at the
threshold the search chose for it (TPU-MLIR updates its table layer by layer), not at the given one.
"""

from __future__ import annotations

import functools
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

from tests import test_threshold_tune as tuning
from tests.cli_support import deploy_dir_int8, table_rows
from tests.models.builder import GraphBuilder
from tpudsl.cli import model_transform
from tpudsl.cli.run_calibration import main as run_calibration
from tpudsl.cli.run_sensitive_layer import main as run_sensitive_layer
from tpudsl.lowering.calibration_table import read_table

ROOT = Path(__file__).resolve().parents[1]
# run_sensitive_layer's methods, in TPU-MLIR's order (max, percentile9999, kl, mse)
METHODS = ("minmax", "percentile9999", "kld", "mse")
LAYERS = ("conv_b", "clip", "conv_a", "conv_c")
INFERENCE_NUM = 3
LOSS_LINE = re.compile(r"^No\.(\d+) *: Layer: (\S+) +Loss: (\d\.\d{6}) Method: (\S+) +Threshold: (\S+) Type: (\S+) (.*)$", re.M)


def _model() -> onnx.ModelProto:
    g = GraphBuilder("sensitive", seed=1)
    x = g.input("input", (1, 4, 32, 32))
    y = g.conv(x, "conv_b", 4, 4, 1)
    y = g.node("Clip", [y, g.const("lo", np.array(-3, np.float32)), g.const("hi", np.array(3, np.float32))], "clip")
    y = g.conv(y, "conv_a", 4, 8, 3)
    y = g.node("Slice", [y, g.const("starts", np.array([1])), g.const("ends", np.array([8])),
                         g.const("axes", np.array([1]))], "slice")
    g.output(g.conv(y, "conv_c", 7, 4, 3))

    def plant(name: str, w: np.ndarray) -> None:
        if name == "conv_b.weight":  # input channel 3 reaches conv_b's channel 0 only
            w[:, 3] = 0
            w[0, 3] = 1
        elif name in ("conv_a.weight", "conv_a.bias"):
            w[0] *= 500

    g.edit_weights(plant)
    return g.model()


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("sensitive")
    onnx.save(_model(), d / "m.onnx")
    (d / "data").mkdir()
    rng = np.random.default_rng(0)
    for i in range(8):
        x = rng.standard_normal((1, 4, 32, 32)).astype(np.float32)
        if i == 0:
            x[0, 3, 5, 7] = 1000.0
        np.savez(d / "data" / f"{i}.npz", input=x)
    model_transform.run(["--model_name", "m", "--model_def", str(d / "m.onnx"), "--mlir", str(d / "m.mlir")])
    for method in METHODS:  # the test's reference thresholds
        _exit_code(run_calibration, [str(d / "m.mlir"), "--dataset", str(d / "data"), "--input_num", "8",
                                     "--method", method, "--quiet", "-o", str(d / f"table_{method}")])
    conv_b_max = next(line for line in (d / "table_minmax").read_text().splitlines() if line.startswith("conv_b "))
    (d / "given").write_text("".join(f"{conv_b_max if line.startswith('conv_b ') else line}\n"
                                     for line in (d / "table_percentile9999").read_text().splitlines()))
    return d


def _exit_code(main, argv) -> int:
    with pytest.raises(SystemExit) as e:
        main(argv)
    return e.value.code


def _search(d, out, *extra: str) -> int:
    return _exit_code(run_sensitive_layer, [
        str(d / "m.mlir"), "--dataset", str(d / "data"), "--calibration_table", str(d / "given"),
        "--processor", "bm1684x", "--input_num", "8", "--inference_num", str(INFERENCE_NUM), "--tune_num", "0",
        "--new_cali_table", str(out / "new_table"), "--loss_table", str(out / "losses"), "-o", str(out / "qtable"),
        *extra])


def _fake_quantized(layer: str, threshold: float) -> onnx.ModelProto:
    """The model with `layer`'s output quantized to int8 at `threshold` and back (onnxruntime's QDQ)."""
    m = _model()
    at = next(i for i, node in enumerate(m.graph.node) if node.output[0] == layer)
    m.graph.node[at].output[0] = f"{layer}_float"
    m.graph.initializer.extend([numpy_helper.from_array(np.array(threshold / 127, np.float32), "qdq_scale"),
                                numpy_helper.from_array(np.array(0, np.int8), "qdq_zero")])
    m.graph.node.insert(at + 1, helper.make_node("QuantizeLinear", [f"{layer}_float", "qdq_scale", "qdq_zero"], [f"{layer}_q"]))
    m.graph.node.insert(at + 2, helper.make_node("DequantizeLinear", [f"{layer}_q", "qdq_scale", "qdq_zero"], [layer]))
    return m


def _run(model: onnx.ModelProto, feed: dict) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feed)[0].astype(np.float64).ravel()


def _independent_loss(d, layer: str, threshold: float) -> float:
    """1 - the output cosine (mean over the search's samples) with only `layer` fake-quantized."""
    cosines = []
    for i, want in enumerate(_float_outputs(d)):
        got = _run(_fake_quantized(layer, threshold), dict(np.load(d / "data" / f"{i}.npz")))
        cosines.append(want @ got / (np.linalg.norm(want) * np.linalg.norm(got)))
    return 1.0 - float(np.mean(cosines))


@functools.cache
def _float_outputs(d) -> list[np.ndarray]:
    return [_run(_model(), dict(np.load(d / "data" / f"{i}.npz"))) for i in range(INFERENCE_NUM)]


def test_ranks_the_sensitive_layer_first_with_each_layers_best_threshold(model, tmp_path):
    assert _search(model, tmp_path) == 0
    rows = LOSS_LINE.findall((tmp_path / "losses").read_text())
    assert [int(r[0]) for r in rows] == list(range(len(LAYERS))) and sorted(r[1] for r in rows) == sorted(LAYERS)
    losses = [float(r[2]) for r in rows]
    assert losses == sorted(losses, reverse=True)  # worst first
    assert rows[0][1] == "conv_a"
    loss_of = {r[1]: float(r[2]) for r in rows}
    assert loss_of["clip"] < 1e-3  # its input at conv_b's chosen threshold (4.6); at the given one (999): 0.86

    method_tables = {m: read_table(str(model / f"table_{m}")) for m in METHODS}
    given, new = read_table(str(model / "given")), read_table(str(tmp_path / "new_table"))
    assert {n: e.threshold for n, e in new.items() if n not in LAYERS} == \
        {n: e.threshold for n, e in given.items() if n not in LAYERS}  # only the layers' thresholds move
    worst, decisive = {}, []
    for layer in LAYERS:
        thresholds = {m: method_tables[m][layer].threshold for m in METHODS}
        independent = {m: _independent_loss(model, layer, th) for m, th in thresholds.items()}
        best = min(METHODS, key=independent.__getitem__)
        worst[layer] = independent[best]
        chosen = new[layer].threshold
        assert chosen in thresholds.values(), layer
        if all(independent[best] < 0.5 * loss for m, loss in independent.items() if thresholds[m] != thresholds[best]):
            decisive.append(layer)
            assert chosen == pytest.approx(thresholds[best], rel=1e-6), (layer, independent)
        else:  # methods within a factor 2 of each other: the choice must be one of the near-best
            assert min(loss for m, loss in independent.items() if thresholds[m] == chosen) <= independent[best] + 1e-4
    assert {"conv_b", "conv_a"} <= set(decisive)
    assert new["conv_b"].threshold == pytest.approx(method_tables["percentile9999"]["conv_b"].threshold, rel=1e-6)
    assert max(worst, key=worst.__getitem__) == "conv_a"  # the independent ranking agrees

    assert table_rows(tmp_path / "qtable") == [["conv_a", "F16"]]
    r = deploy_dir_int8(model, tmp_path / "new_table", "7.npz", "0.99,0.5", "--quantize_table", tmp_path / "qtable")
    assert r.returncode == 0, r.stderr
    r = deploy_dir_int8(model, tmp_path / "new_table", "7.npz", "0.99,0.5")
    assert r.returncode == 1 and "Tpu check failed at tensor 'conv_c'" in r.stderr, r.stderr


def test_a_table_already_good_enough_is_not_searched(model, tmp_path, capsys):
    assert _search(model, tmp_path, "--expected_cos", "0.01") == 0
    err = capsys.readouterr().err
    assert re.search(r"reaches cosine 0\.\d{6} > --expected_cos 0.01: no float layers needed, nothing written", err)
    assert list(tmp_path.iterdir()) == []


def test_the_script_reports_a_missing_dataset_in_one_line(model, tmp_path):
    """tools/run_sensitive_layer.py in a new process (the entry point itself): exit 1, one line, nothing written."""
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "run_sensitive_layer.py"), str(model / "m.mlir"),
                        "--dataset", str(tmp_path / "missing"), "--calibration_table", str(model / "table_kld"),
                        "--processor", "bm1684x", "-o", "qtable"], capture_output=True, text=True, cwd=tmp_path,
                       env={"PYTHONPATH": str(ROOT), "PATH": ""}, timeout=120)
    assert (r.returncode, r.stdout, r.stderr) == (1, "", f"error: --dataset '{tmp_path / 'missing'}' is not a directory\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("change, message", [
    (("--cali_method", "use_max"), r"run_sensitive_layer: --cali_method use_max is not supported: the search tries "
                                   r"every method"),
    (("--processor", "bm9999"), "unknown chip 'bm9999'"),
    (("--max_float_layers", "-1"), "--max_float_layers must be at least 0, not -1"),
    (("--inference_num", "0"), "--inference_num must be at least 1, not 0"),
    (("--expected_cos", "1.5"), r"--expected_cos must be in \(0, 1\], not 1.5"),
    (("--global_compare_layers", "nope:1"), "--global_compare_layers: 'nope' is not a tensor of the module"),
])
def test_bad_input_is_one_line_and_nothing_is_written(model, tmp_path, capsys, change, message):
    args = [a if a != "MISSING" else str(tmp_path / "missing") for a in change]
    assert _search(model, tmp_path, *args) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert re.search(message, err), err
    assert list(tmp_path.iterdir()) == []


def test_the_new_table_holds_each_methods_tuned_threshold(tmp_path):
    """--tune_num: threshold_tune's heavy-tailed model (input -> conv0 + relu0 -> conv1, Student-t
    samples) searched with tuning on the first 4 of 8 samples. relu0's threshold in the new table is
    the method the loss table names, tuned: test_threshold_tune's separate search (float64 loops,
    TPU-MLIR's 22 candidates and loss) from that method's untuned `run_calibration --method`
    threshold; tuning moved it (it is no method's untuned threshold)."""
    onnx.save(tuning._model(), tmp_path / "m.onnx")
    (tmp_path / "data").mkdir()
    for i in range(8):
        np.savez(tmp_path / "data" / f"{i:02d}.npz", input=tuning._heavy(i))
    model_transform.run(["--model_name", "m", "--model_def", str(tmp_path / "m.onnx"), "--mlir",
                         str(tmp_path / "m.mlir"), "--not_inference"])
    calibrate = [str(tmp_path / "m.mlir"), "--dataset", str(tmp_path / "data"), "--input_num", "8", "--quiet"]
    for method in METHODS:
        assert _exit_code(run_calibration, [*calibrate, "--method", method, "-o", str(tmp_path / method)]) == 0
    assert _exit_code(run_sensitive_layer, [
        str(tmp_path / "m.mlir"), "--dataset", str(tmp_path / "data"), "--calibration_table", str(tmp_path / "kld"),
        "--processor", "bm1684x", "--input_num", "8", "--inference_num", "1", "--tune_num", str(tuning.TUNE),
        "--expected_cos", "1", "--quiet", "--new_cali_table", str(tmp_path / "new"),
        "--loss_table", str(tmp_path / "losses"), "-o", str(tmp_path / "qtable")]) == 0
    rows = {r[1]: r for r in LOSS_LINE.findall((tmp_path / "losses").read_text())}
    new, untuned = read_table(str(tmp_path / "new")), {m: read_table(str(tmp_path / m)) for m in METHODS}
    method = rows["relu0"][3]
    entry = untuned[method]["relu0"]
    refs, consumer = tuning._consumers(tmp_path)["relu0"]  # relu0 on the tuning samples, and conv1
    want = tuning._search(refs, consumer, entry.threshold, max(-entry.min, entry.max))
    assert new["relu0"].threshold == pytest.approx(want, rel=2e-6), (method, entry)
    assert all(new["relu0"].threshold != pytest.approx(t["relu0"].threshold, rel=1e-3) for t in untuned.values())
    assert float(rows["relu0"][4]) == pytest.approx(want, rel=1e-6)  # the loss table's Threshold column
    assert (tmp_path / "new").read_text().splitlines()[3] == f"# tune number: {tuning.TUNE}"

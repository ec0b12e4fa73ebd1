"""run_calibration --tune_num (TPU-MLIR's SimpleTuner, docs/quantization.md "Threshold tuning").

The model: input -> conv0 + relu0 -> conv1. The input is Student-t (2 degrees of freedom): over
16 samples of 4096 values KLD keeps 1/16 of its range (threshold 33 of abs_max 178), clipping the
large values conv0 adds up. Checked against
- a search written here from TPU-MLIR's description (float64 loops, the weights read from the ONNX
  file): the same 22 candidates from the threshold to abs_max, the loss ||ref - out||_2 / ||ref||_1
  of the reading op with the tensor fake-quantized (round(x 127 / th) in [-128, 127]), the first
  least loss; the tuned table must hold its choices, and by that loss be no worse than the untuned;
- model_deploy's lowering and the Tpu interpreter (the next level): on samples neither run saw,
  the INT8 output is at least as close to F32 with the tuned table, and relu0 (the layer that
  reads the clipped input) strictly closer.
--search search_threshold: each method's table deployed by model_deploy's lowering; the search must
report those cosines and write the best method's table.
"""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from tests.cli_support import table_rows
from tests.models.builder import GraphBuilder
from tests.onnx_node.harness import cosine
from tpudsl.cli import model_transform
from tpudsl.cli.run_calibration import main as run_calibration
from tpudsl.dialects import make_context
from tpudsl.dialects.opdef import loc_name
from tpudsl.interp import run_module
from tpudsl.ir.module import load_module
from tpudsl.lowering.calibration_table import TableEntry
from tpudsl.lowering.threshold_tune import consumer_losses, pairs, reference_runs
from tpudsl.passes import pass_class

SHAPE = (1, 4, 32, 32)
TUNE = 4  # --tune_num: the first 4 of the 16 calibration samples
STEPS = 21  # TPU-MLIR's tune_steps


def _model() -> onnx.ModelProto:
    g = GraphBuilder("heavy", seed=1)
    x = g.input("input", SHAPE)
    y = g.relu(g.conv(x, "conv0", 4, 8, 3), "relu0")
    g.output(g.conv(y, "conv1", 8, 4, 3))
    return g.model()


def _heavy(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_t(2, SHAPE).astype(np.float32)


def _calibrate(d, out: str, *extra: str) -> None:
    with pytest.raises(SystemExit) as e:
        run_calibration([str(d / "m.mlir"), "--dataset", str(d / "data"), "--quiet", "-o", str(d / out), *extra])
    assert e.value.code == 0


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("tune")
    onnx.save(_model(), d / "m.onnx")
    (d / "data").mkdir()
    for i in range(16):
        np.savez(d / "data" / f"{i:02d}.npz", input=_heavy(i))
    model_transform.run(["--model_name", "m", "--model_def", str(d / "m.onnx"), "--mlir", str(d / "m.mlir"),
                         "--not_inference"])
    _calibrate(d, "untuned")
    _calibrate(d, "tuned", "--tune_num", str(TUNE))
    return d


def _rows(path) -> dict[str, tuple[float, float, float]]:
    return {name: (float(th), float(lo), float(hi)) for name, th, lo, hi in table_rows(path)}


# ---- the separate search: float64 loops, TPU-MLIR's description ----------------------------------

def _weights(d) -> dict[str, np.ndarray]:
    return {t.name: numpy_helper.to_array(t).astype(np.float64) for t in onnx.load(d / "m.onnx").graph.initializer}


def _conv3x3(x: np.ndarray, w: np.ndarray, b: np.ndarray, relu: bool) -> np.ndarray:
    """A 3x3 convolution, stride 1, pad 1, in float64: a sum over the 9 filter taps."""
    xp = np.pad(x[0], ((0, 0), (1, 1), (1, 1)))
    h, wd = x.shape[2:]
    y = np.zeros((w.shape[0], h, wd)) + b[:, None, None]
    for i in range(3):
        for j in range(3):
            y += np.einsum("oc,chw->ohw", w[:, :, i, j], xp[:, i:i + h, j:j + wd])
    return (np.maximum(y, 0) if relu else y)[None]


def _fake_quant(x: np.ndarray, th: float) -> np.ndarray:
    scale = 127 / th  # TPU-MLIR's import_quant_bias
    return np.clip(np.round(x * scale), -128, 127) / scale


def _loss(x_refs, consumer, th: float) -> float:
    total = 0.0
    for x in x_refs:
        want, got = consumer(x), consumer(_fake_quant(x, th))
        total += np.linalg.norm(want - got) / np.abs(want).sum()
    return total / len(x_refs)


def _search(x_refs, consumer, th: float, abs_max: float) -> float:
    if abs_max - th <= 0.01:
        return th
    tried = [th + (abs_max - th) / STEPS * i for i in range(STEPS + 1)]
    losses = [_loss(x_refs, consumer, c) for c in tried]
    best = 0
    for i in range(1, len(tried)):
        if losses[i] < losses[best]:
            best = i
    return tried[best]


def _consumers(d):
    """TPU-MLIR's pairs for this chain: input is read first by relu0 (conv0 + relu), relu0 by conv1;
    conv1, the output, by nothing. With the samples' float64 values of the tensors read."""
    w = _weights(d)
    conv0 = lambda x: _conv3x3(x, w["conv0.weight"], w["conv0.bias"], relu=True)  # noqa: E731
    conv1 = lambda x: _conv3x3(x, w["conv1.weight"], w["conv1.bias"], relu=False)  # noqa: E731
    inputs = [_heavy(i).astype(np.float64) for i in range(TUNE)]
    return {"input": (inputs, conv0), "relu0": ([conv0(x) for x in inputs], conv1)}


def test_tuned_thresholds_are_the_separate_search_s_and_never_worse(model):
    untuned, tuned = _rows(model / "untuned"), _rows(model / "tuned")
    assert tuned.keys() == untuned.keys() == {"input", "relu0", "conv1"}
    th, lo, hi = untuned["input"]
    assert th < max(-lo, hi) / 4  # KLD clips the heavy-tailed input hard
    consumers = _consumers(model)
    for name, (refs, consumer) in consumers.items():
        th, lo, hi = untuned[name]
        want = _search(refs, consumer, th, max(-lo, hi))
        assert tuned[name][0] == pytest.approx(want, rel=2e-6), name
        # by the tuning's own measure the tuned table is never worse
        assert _loss(refs, consumer, tuned[name][0]) <= _loss(refs, consumer, th) * (1 + 1e-9), name
    assert tuned["conv1"][0] == untuned["conv1"][0]  # read by no op: not tuned
    refs, consumer = consumers["input"]
    assert _loss(refs, consumer, tuned["input"][0]) < 0.5 * _loss(refs, consumer, untuned["input"][0])
    # the min/max columns are the untuned table's: only thresholds change
    assert all(tuned[n][1:] == untuned[n][1:] for n in tuned)


def test_table_format_is_tpu_mlirs_with_the_tune_number_line(model):
    untuned = (model / "untuned").read_text().splitlines()
    tuned = (model / "tuned").read_text().splitlines()
    assert tuned[3] == f"# tune number: {TUNE}"
    assert [line.split()[0] for line in tuned[1:3] + tuned[4:]] == [line.split()[0] for line in untuned[1:]]


def _int8_runs(d, table: str, feeds) -> tuple[list[dict], float]:
    """model_deploy's INT8 lowering (symmetric) of the table, run on `feeds`; and relu0's scale."""
    tpu = load_module(d / "m.mlir")
    ctx = make_context()
    pass_class("import-calibration-table")(file=str(d / table), asymmetric=False).apply(ctx, tpu.module)
    pass_class("processor-assign")(chip="bm1684x", mode="INT8").apply(ctx, tpu.module)
    pass_class("convert-top-to-tpu")().apply(ctx, tpu.module)
    relu0 = next(op for op in tpu.main_func().body.block.ops if loc_name(op) == "relu0")
    scale = relu0.results[0].type.element_type.scale
    return [run_module(tpu.module, tpu.weights, f, keep_all=True) for f in feeds], scale


def test_tuned_table_deploys_closer_to_f32(model):
    feeds = [{"input": _heavy(100 + i)} for i in range(4)]  # samples neither run saw
    top = load_module(model / "m.mlir")
    want = [run_module(top.module, top.weights, f, keep_all=True) for f in feeds]
    cos = {}
    for table in ("untuned", "tuned"):
        runs, scale = _int8_runs(model, table, feeds)
        cos[table] = (np.mean([cosine(r["conv1"], w["conv1"]) for r, w in zip(runs, want)]),
                      np.mean([cosine(r["relu0"].astype(np.float64) * scale, w["relu0"]) for r, w in zip(runs, want)]))
    assert cos["tuned"][0] >= cos["untuned"][0]
    assert cos["tuned"][1] > cos["untuned"][1] + 0.01, cos


def test_pairs_follow_tpu_mlirs_order_and_other_operands_keep_their_thresholds(tmp_path):
    """Each op tunes its computed operands no earlier op tuned, or its first one again when all were;
    weights are never tuned (SimpleTuner.run, written out for this graph). An op's other operands
    are fake-quantized at their own thresholds (tpudsl's decision, docs/quantization.md)."""
    g = GraphBuilder("pairs", seed=2)
    x = g.input("x", (1, 2, 4, 4))
    a, b = g.conv(x, "a", 2, 2, 1), g.conv(x, "b", 2, 2, 1)
    s = g.node("Add", [a, b], "s")
    g.output(g.conv(s, "c", 2, 2, 1))
    g.output(g.node("Mul", [a, a], "m"))
    onnx.save(g.model(), tmp_path / "p.onnx")
    model_transform.run(["--model_name", "p", "--model_def", str(tmp_path / "p.onnx"), "--mlir",
                         str(tmp_path / "p.mlir"), "--not_inference"])
    mod = load_module(tmp_path / "p.mlir")
    got = [(loc_name(op), t) for op, t in pairs(mod)]
    assert got == [("a", "x"), ("b", "x"), ("s", "a"), ("s", "b"), ("c", "s"), ("m", "a")]

    # Tuning a for s = a + b: a at the candidate, b at its own table threshold (not a's candidate).
    refs = reference_runs(mod, [{"x": np.random.default_rng(5).standard_normal((1, 2, 4, 4)).astype(np.float32)}])
    a, b = (refs[0][n].astype(np.float64) for n in "ab")
    table = {n: TableEntry(float(np.abs(refs[0][n]).max()), -1.0, 1.0) for n in ("x", "a", "b", "s")}
    table["b"] = TableEntry(table["b"].threshold / 3, -1.0, 1.0)  # b clips at its threshold
    candidate = table["a"].threshold / 2
    want = a + b
    got_ab = _fake_quant(a, candidate) + _fake_quant(b, table["b"].threshold)
    add = next(op for op, _ in pairs(mod) if loc_name(op) == "s")
    assert consumer_losses(mod, add, "a", [candidate], refs, table)[0] == pytest.approx(
        np.linalg.norm(want - got_ab) / np.abs(want).sum(), rel=1e-5)


def test_tune_list_and_bad_values(model, tmp_path, capsys):
    (tmp_path / "list").write_text(f"{model / 'data' / '03.npz'}\n{model / 'data' / '01.npz'}\n")
    _calibrate(model, "listed", "--tune_list", str(tmp_path / "list"), "--tune_num", "1")
    assert "# tune number: 1" in (model / "listed").read_text()
    assert _rows(model / "listed") != _rows(model / "untuned")
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        run_calibration([str(model / "m.mlir"), "--dataset", str(model / "data"), "--tune_num", "-1",
                         "-o", str(tmp_path / "never")])
    err = capsys.readouterr().err
    assert e.value.code == 1 and err == "error: run_calibration: --tune_num must be 0 or more, not -1\n"
    with pytest.raises(SystemExit) as e:
        run_calibration([str(model / "m.mlir"), "--dataset", str(model / "data"), "--tune_list", str(tmp_path / "nope"),
                         "-o", str(tmp_path / "never")])
    err = capsys.readouterr().err
    assert e.value.code == 1 and err.startswith(f"error: cannot read --tune_list '{tmp_path / 'nope'}'"), err
    assert not (tmp_path / "never").exists()


# ---- --search search_threshold ------------------------------------------------------------------

def test_search_threshold_writes_the_table_whose_int8_model_is_closest(model, capsys):
    """Each method's table deployed by model_deploy's lowering on the search's samples (the first
    --inference_num calibration samples); the search writes the best one's, the kld one tuned."""
    for method in ("minmax", "percentile9999", "mse"):
        _calibrate(model, method, "--method", method)
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        run_calibration([str(model / "m.mlir"), "--dataset", str(model / "data"), "--search", "search_threshold",
                         "--inference_num", "3", "--tune_num", str(TUNE), "-o", str(model / "searched")])
    assert e.value.code == 0
    err = capsys.readouterr().err
    feeds = [{"input": _heavy(i)} for i in range(3)]
    top = load_module(model / "m.mlir")
    want = [run_module(top.module, top.weights, f)["conv1"] for f in feeds]
    cosines = {}
    for method, table in (("kld", "tuned"), ("minmax", "minmax"), ("percentile9999", "percentile9999"), ("mse", "mse")):
        runs, _ = _int8_runs(model, table, feeds)
        cosines[method] = float(np.mean([cosine(r["conv1"], w) for r, w in zip(runs, want)]))
        reported = float(re.search(rf"search_threshold: {method}: INT8 output cosine (\S+) on 3 samples", err)[1])
        assert reported == pytest.approx(cosines[method], abs=2e-6), method
    best = max(cosines, key=cosines.__getitem__)
    assert len(set(np.round(list(cosines.values()), 4))) == 4  # the methods differ: the choice means something
    assert f"search_threshold: chose {best}\n" in err
    table = "tuned" if best == "kld" else best
    assert _rows(model / "searched") == _rows(model / table)
    assert ("# tune number" in (model / "searched").read_text()) == (best == "kld")


@pytest.mark.parametrize("args, message", [
    (["--inference_num", "3"], "--inference_num needs --search search_threshold"),
    (["--search", "search_threshold", "--method", "kld"], "--search search_threshold tries every method"),
    (["--search", "search_threshold", "--we"], "--search search_threshold with --sq, --we or --bc is not modelled"),
    (["--search", "search_threshold", "--processor", "cv183x"], "deploys for --processor: unknown chip 'cv183x'"),
])
def test_search_threshold_refusals(model, tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as e:
        run_calibration([str(model / "m.mlir"), "--dataset", str(model / "data"), *args, "-o", str(tmp_path / "t")])
    err = capsys.readouterr().err
    assert e.value.code == 1 and len(err.splitlines()) == 1 and message in err, err
    assert list(tmp_path.iterdir()) == []

"""run_calibration --bc (bias correction) against independent references:

* the corrections against TPU-MLIR's formula written here in float64 loops: per output channel,
  the mean over samples and positions of onnxruntime's F32 output of the conv minus the INT8 Tpu
  interpreter's output of it (lowered here with the first table, dequantized with the table's
  threshold / 127), added to the bias;
* the point: on a conv whose weights all sit 0.4 of a quantization step above an integer (they all
  round down, so every output is shifted by the same amount per channel), INT8's mean error and
  cosine against onnxruntime are better with --bc than without;
* the corrected F32 module gives onnxruntime's output of the original model with the corrections
  added to its bias, and nothing else changed;
* the gates (--expected_cos, --min_layer_cos), each skip rule by its message, --we then --bc, the
  refused flags.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from tests.cli_support import run_main
from tests.models.builder import GraphBuilder
from tests.models.runtime import onnx_inference
from tests.test_tpu_float import cosine, run, top_module
from tests.test_tpu_int8 import lower_int8
from tpudsl.ir.module import load_module
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.lowering.bias_correction import measure, plan_correction
from tpudsl.lowering.calibration import calibrate
from tpudsl.lowering.calibration_table import read_table, table_text

STEP = 0.01  # c1's weight quantization step per channel: its largest |w| is 127 steps


def biased_conv(off: float = 0.4, chain: bool = False, seed: int = 0) -> onnx.ModelProto:
    """input (1, 8, 8, 8) -> Conv c1 (3x3, weights (k + off) steps, one 127 steps per channel)
    [-> Conv c1b (3x3, random weights) with `chain`] -> Conv c2 (1x1)."""
    g = GraphBuilder("bc", seed)
    x = g.input("input", (1, 8, 8, 8))
    w = (g.rng.integers(-3, 4, (4, 8, 3, 3)) + off) * STEP
    w[:, 0, 0, 0] = 127 * STEP
    y = g.node("Conv", [x, g.const("c1.w", w.astype(np.float32)), g.small("c1.b", (4,))], "c1",
               kernel_shape=[3, 3], pads=[1] * 4)
    if chain:
        y = g.node("Conv", [y, g.weight("c1b.w", (4, 4, 3, 3), 36), g.small("c1b.b", (4,))], "c1b",
                   kernel_shape=[3, 3], pads=[1] * 4)
    w2 = (g.rng.standard_normal((4, 4, 1, 1)) * 0.3).astype(np.float32)
    g.output(g.node("Conv", [y, g.const("c2.w", w2), g.small("c2.b", (4,))], "c2", kernel_shape=[1, 1]))
    return g.model()


def inputs(count: int, seed: int) -> list[dict[str, np.ndarray]]:
    """Non-negative inputs (so that the rounding error sums one way); channel 0, which meets the
    127-step weights, small, so that the shifted outputs are not drowned by it."""
    rng = np.random.default_rng(seed)
    xs = [rng.random((1, 8, 8, 8), dtype=np.float32) for _ in range(count)]
    for x in xs:
        x[:, 0] *= 0.05
    return [{"input": x} for x in xs]


def model_dir(d: Path, model: onnx.ModelProto | None = None) -> Path:
    onnx.save(model or biased_conv(), d / "m.onnx")
    assert run_main("model_transform", "--model_name", "m", "--model_def", "m.onnx", "--mlir", "m.mlir",
                    "--not_inference", cwd=d).returncode == 0
    (d / "samples").mkdir()
    for i, feed in enumerate(inputs(4, seed=0)):
        np.savez(d / "samples" / f"s{i}.npz", **feed)
    return d


def bc(d: Path, *args: str):
    return run_main("run_calibration", "m.mlir", "--dataset", "samples", "--quiet", "-o", "t", *args, cwd=d)


def notes(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("run_calibration:")]


@pytest.fixture(scope="module")
def corrected(tmp_path_factory):
    """The directory after `run_calibration --bc`, and the correction c1's bias got."""
    d = model_dir(tmp_path_factory.mktemp("bc"))
    r = bc(d, "--bc")
    assert r.returncode == 0, r.stderr
    got = load_module(d / "m_bc.mlir").weights["c1.b_corrected"] - load_module(d / "m.mlir").weights["c1.b"]
    return d, r, got


def first_table(d: Path) -> Path:
    """The table of the uncorrected module (the one --bc measures with)."""
    specs = sorted(str(p) for p in (d / "samples").iterdir())
    result = calibrate(str(d / "m.mlir"), specs, lambda p: dict(np.load(p)))
    (d / "t0").write_text(table_text(result.table("kld"), 2048, len(specs)))
    return d / "t0"


def formula(d: Path, layer: str, axis: int, feeds: list[dict[str, np.ndarray]]) -> np.ndarray:
    """TPU-MLIR's correction of `layer` in float64 loops: per channel (`axis`), the mean over the
    samples and every other position of onnxruntime's output minus the INT8 Tpu interpreter's
    (lowered here with the uncorrected module's table, dequantized with threshold / 127)."""
    table = first_table(d)
    scale = read_table(str(table))[layer].threshold / 127
    tpu = load_module(d / "m.mlir")
    lower_int8(tpu, table)
    model = onnx.load(d / "m.onnx")
    sums, count = None, 0
    for feed in feeds:
        f32 = np.moveaxis(onnx_inference(model, feed, all_tensors=True)[layer].astype(np.float64), axis, 0)
        int8 = np.moveaxis(run(tpu, feed, keep_all=True)[layer].astype(np.float64) * scale, axis, 0)
        sums = np.zeros(len(f32)) if sums is None else sums
        for c in range(len(f32)):
            for f, q in zip(f32[c].ravel(), int8[c].ravel()):
                sums[c] += f - q
        count += f32[0].size
    return sums / count


def test_correction_is_the_mean_f32_minus_int8_error_per_channel(corrected):
    d, r, got = corrected
    want = formula(d, "c1", 1, inputs(4, seed=0))
    assert np.abs(want).min() > 0.05  # the weights' rounding shifts every channel
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    assert notes(r.stderr)[:3] == [
        "run_calibration: --bc: INT8 output cosine 0.915483 on 4 samples; 1 biases corrected",
        "run_calibration: --bc: 'c1' (layer cosine 0.966337, largest shift 1.094e-01) corrected: output cosine 0.993221",
        "run_calibration: --bc: output cosine 0.993221 > --expected_cos 0.99: stopped"]


def biased_matmul() -> onnx.ModelProto:
    """x (1, 6, 32) -> MatMul + Add fc (weights (k + 0.4) steps, one 127 steps) -> MatMul out."""
    g = GraphBuilder("bc_mm", 0)
    x = g.input("input", (1, 6, 32))
    w = (g.rng.integers(-3, 4, (32, 16)) + 0.4) * STEP
    w[0, 0] = 127 * STEP
    y = g.node("MatMul", [x, g.const("fc.w", w.astype(np.float32))], "fc.matmul")
    y = g.node("Add", [y, g.small("fc.b", (16,))], "fc")
    g.output(g.node("MatMul", [y, g.weight("out.w", (16, 8), 16)], "out"))
    return g.model()


def test_matmul_bias_is_corrected_along_its_last_axis(tmp_path):
    """tpudsl's extension: the same formula along a MatMul's last axis (its bias's)."""
    onnx.save(biased_matmul(), tmp_path / "m.onnx")
    assert run_main("model_transform", "--model_name", "m", "--model_def", "m.onnx", "--mlir", "m.mlir",
                    "--not_inference", cwd=tmp_path).returncode == 0
    (tmp_path / "samples").mkdir()
    rng = np.random.default_rng(1)
    small_first = np.array([0.05] + [1.0] * 31, dtype=np.float32)  # feature 0 meets the 127-step weight
    feeds = [{"input": rng.random((1, 6, 32), dtype=np.float32) * small_first} for _ in range(3)]
    for i, feed in enumerate(feeds):
        np.savez(tmp_path / "samples" / f"s{i}.npz", **feed)
    r = bc(tmp_path, "--bc", "--expected_cos", "1", "--min_layer_cos", "1")
    assert r.returncode == 0, r.stderr
    assert "run_calibration: --bc: 'fc' (layer cosine" in notes(r.stderr)[1], r.stderr
    got = load_module(tmp_path / "m_bc.mlir").weights["fc.b_corrected"] - load_module(tmp_path / "m.mlir").weights["fc.b"]
    np.testing.assert_allclose(got, formula(tmp_path, "fc", -1, feeds), rtol=1e-4, atol=1e-6)


def test_int8_is_closer_to_f32_with_bias_correction(corrected):
    d, _, _ = corrected
    model = onnx.load(d / "m.onnx")
    plain, fixed = load_module(d / "m.mlir"), load_module(d / "m_bc.mlir")
    lower_int8(plain, first_table(d))
    lower_int8(fixed, d / "t")
    errors, cosines = [], []
    for lowered in (plain, fixed):
        diffs, cos = [], []
        for feed in inputs(3, seed=7):  # not the calibration samples
            want = onnx_inference(model, feed)["c2"].astype(np.float64)
            got = run(lowered, feed)["c2"].astype(np.float64)  # the output is cast back to f32
            diffs.append(np.abs((got - want).mean(axis=(0, 2, 3))).max())
            cos.append(cosine(got, want))
        errors.append(max(diffs))
        cosines.append(float(np.mean(cos)))
    # measured: largest per-channel mean error 0.105 -> 0.0065, cosine 0.913 -> 0.9934
    assert errors[1] < 0.1 * errors[0], errors
    assert cosines[0] < 0.95 and cosines[1] > 0.99, cosines


def test_corrected_f32_module_is_the_original_plus_the_correction(corrected):
    d, _, got = corrected
    model = onnx.load(d / "m.onnx")
    shifted = onnx.load(d / "m.onnx")
    for init in shifted.graph.initializer:
        if init.name == "c1.b":
            init.CopyFrom(numpy_helper.from_array(
                (numpy_helper.to_array(init).astype(np.float64) + got).astype(np.float32), "c1.b"))
    top = load_module(d / "m_bc.mlir")
    for feed in inputs(2, seed=9):
        want = onnx_inference(shifted, feed)["c2"]
        out = run(top, feed)["c2"]
        assert np.abs(out - want).max() <= 1e-5 * max(1.0, float(np.abs(want).max()))
        assert np.abs(out - onnx_inference(model, feed)["c2"]).max() > 0.01  # the correction changed it


@pytest.mark.parametrize("args, line", [
    (["--expected_cos", "0.9"], "> --expected_cos 0.9: 0 biases corrected"),
    (["--min_layer_cos", "0.9"], "--bc: 'c1' not corrected: layer cosine 0.9"),
])
def test_gates_leave_the_biases(tmp_path, args, line):
    d = model_dir(tmp_path)
    r = bc(d, "--bc", *args)
    assert r.returncode == 0, r.stderr
    assert any(line in n for n in notes(r.stderr)), r.stderr
    assert "c1.b" in load_module(d / "m_bc.mlir").weights


def test_each_layer_is_measured_with_the_earlier_corrections_and_the_search_stops(tmp_path):
    """c1 -> c1b -> c2: c1b's error is mostly c1's shift carried through it. Measured after c1's
    correction (kept), c1b's shift is what remains, not c1's shift a second time; and with the
    default --expected_cos the search stops after c1 (TPU-MLIR's stop)."""
    d = model_dir(tmp_path, biased_conv(chain=True))
    r = bc(d, "--bc", "--min_layer_cos", "1", "--expected_cos", "1")
    assert r.returncode == 0, r.stderr
    lines = notes(r.stderr)
    assert lines[0].endswith("; 2 biases corrected") and "'c1b' (layer cosine 0.995660" in lines[2], lines
    shift = load_module(d / "m_bc.mlir").weights["c1b.b_corrected"] - load_module(d / "m.mlir").weights["c1b.b"]
    assert np.abs(shift).max() < 0.01  # measured 6.0e-3; from the uncorrected model (c1's carried shift too): 0.23
    r = bc(d, "--bc", "--min_layer_cos", "1")
    assert r.returncode == 0, r.stderr
    assert notes(r.stderr)[0].endswith("; 1 biases corrected") and "stopped" in notes(r.stderr)[2]
    assert "c1b.b" in load_module(d / "m_bc.mlir").weights


def test_a_correction_that_lowers_the_output_cosine_is_not_kept(tmp_path):
    """Unbiased weights: c1's correction is noise, and on this model (measured) it lowers the INT8
    output cosine 0.999770 -> 0.999768, so it is dropped (TPU-MLIR's revert); c1b's is kept."""
    d = model_dir(tmp_path, biased_conv(off=0.0, chain=True, seed=1))
    r = bc(d, "--bc", "--min_layer_cos", "1", "--expected_cos", "1")
    assert r.returncode == 0, r.stderr
    lines = notes(r.stderr)
    assert lines[1].startswith("run_calibration: --bc: 'c1' (layer cosine") and \
        lines[1].endswith("not corrected: the output cosine would drop to 0.999768"), lines
    weights = load_module(d / "m_bc.mlir").weights
    assert "c1.b" in weights and "c1b.b_corrected" in weights


def test_we_then_bc_in_tpu_mlirs_order(tmp_path):
    d = model_dir(tmp_path)
    r = bc(d, "--we", "--bc")
    assert r.returncode == 0, r.stderr
    lines = notes(r.stderr)
    assert lines[0] == "run_calibration: --we: 1 Conv pair(s) equalized; 'c1' -> 'c2'"
    assert lines[2].startswith("run_calibration: --bc: 'c1_equalized' (layer cosine")
    assert lines[-1] == "run_calibration: the table is for m_we_bc.mlir: give it to model_deploy --mlir"
    assert list(read_table(str(d / "t"))) == ["input", "c1_equalized_corrected", "c2"]
    assert "c1.b_equalized_corrected" in load_module(d / "m_we_bc.mlir").weights


# ---- skip rules: each on a model whose conv 'c' feeds a last conv 'out' -----------------------------


def skip_model(bias: str, relu: bool = False, shared: bool = False) -> onnx.ModelProto:
    """c: Conv with `bias` ('none', 'weight' or 'input'), Relu after it, its bias initializer shared with 'out'."""
    g = GraphBuilder("skip", 0)
    x = g.input("x", (1, 4, 6, 6))
    b = {"none": lambda: [], "weight": lambda: [g.small("c.b", (4,))], "input": lambda: [g.input("b", (4,))]}[bias]()
    y = g.node("Conv", [x, g.weight("c.w", (4, 4, 3, 3), 36), *b], "c", kernel_shape=[3, 3], pads=[1] * 4)
    if relu:
        y = g.node("Relu", [y], "r")
    b2 = b if shared else [g.small("out.b", (4,))]
    g.output(g.node("Conv", [y, g.weight("out.w", (4, 4, 1, 1), 4), *b2], "out", kernel_shape=[1, 1]))
    return g.model()


@pytest.mark.parametrize("model, op, rule", [
    (lambda: skip_model("none"), "c", "it has no bias to correct (as TPU-MLIR, none is added)"),
    (lambda: skip_model("input"), "c", "its bias 'b' is computed at run time, not a weight"),
    (lambda: skip_model("weight", shared=True), "c", "weight 'c.b' is shared with another op"),
    (lambda: skip_model("weight", relu=True), "r", "its fused activation (do_relu) clips the output, so the output's "
     "mean error is not a bias shift"),
    (lambda: skip_model("weight"), "out", "it is a model output, which keeps its name (a corrected value gets a "
     "derived one)"),
])
def test_skip_rules(model, op, rule):
    planned, skipped = plan_correction(top_module(model()))
    assert {s.op: s.rule for s in skipped}[op] == rule
    assert op not in [p.location.desc.data for p in planned]


def test_a_layer_the_int8_module_lacks_is_an_error():
    top = top_module(skip_model("weight"))
    planned, _ = plan_correction(top)
    f32 = run(top, {"x": np.zeros((1, 4, 6, 6), np.float32)}, keep_all=True)
    with pytest.raises(TpudslError, match="--bc: the INT8 module has no tensor 'c' to compare with F32's"):
        measure(planned[0], [f32], [{k: v for k, v in f32.items() if k != "c"}], lambda a, b: 1.0)


@pytest.mark.parametrize("args, message", [
    (["--bc_inference_num", "5"], "--bc_inference_num needs --bc (TPU-MLIR's search_qtable setting is run_qtable's)"),
    (["--bc", "--min_layer_cos", "0"], "--min_layer_cos must be in (0, 1], not 0"),
    (["--bc", "--bc_inference_num", "0"], "--bc_inference_num must be at least 1, not 0"),
    (["--bc", "--search", "search_threshold"], "--search search_threshold with --sq, --we or --bc is not modelled (the "
     "search deploys the module from its file; the rewritten one is written at the end)"),
    (["--global_compare_layers", "c2"], "--global_compare_layers needs --search search_threshold or --bc (what scores "
     "a model)"),
    (["--bc", "--global_compare_layers", "c2:0.5"], "error: --global_compare_layers: the weights sum to 0.5, not 1"),
    (["--search", "search_threshold", "--global_compare_layers", "c1:0.5,nope:0.5"],
     "error: --global_compare_layers: 'nope' is not a tensor of the module"),
])
def test_refused_flags(tmp_path, args, message):
    d = model_dir(tmp_path)
    before = {p.name for p in d.iterdir()}
    r = bc(d, *args)
    want = message if message.startswith("error: ") else f"error: run_calibration: {message}"
    assert (r.returncode, r.stderr.splitlines()) == (1, [want])
    assert {p.name for p in d.iterdir()} == before


def test_bc_over_a_dask_cluster(tmp_path):
    """--scheduler: the workers read the module from its path, so the corrected one is written
    before the second calibration; the same stderr, table and module as one process's run."""
    distributed = pytest.importorskip("distributed")
    d = model_dir(tmp_path)
    one = bc(d, "--bc")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        r = run_main("run_calibration", "m.mlir", "--dataset", "samples", "--quiet", "-o", "t_dask", "--bc",
                     "--rewritten_mlir", "m_dask.mlir", "--scheduler", cluster.scheduler_address, cwd=d)
    assert (one.returncode, r.returncode) == (0, 0), r.stderr
    assert notes(r.stderr.replace("m_dask.mlir", "m_bc.mlir")) == notes(one.stderr)
    tables = [(d / name).read_text().splitlines()[1:] for name in ("t", "t_dask")]  # all but the time
    assert tables[0] == tables[1] and "c1_corrected" in (d / "t_dask").read_text()
    assert (d / "m_dask.mlir").read_text().replace("m_dask_", "m_bc_") == (d / "m_bc.mlir").read_text()

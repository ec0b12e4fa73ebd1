"""run_calibration --we (weight equalization) and --sq (SmoothQuant) against independent references:

* invariance: the rewritten F32 module gives the ORIGINAL ONNX model's outputs in onnxruntime
  (models with the pairs: deliberately unbalanced ones, MobileNetV2, ResNet-18, a transformer block);
* the point of it: on a model with one output channel 100x the others (--we) or LayerNorm outlier
  channels (--sq), INT8 (symmetric, Tpu interpreter) is closer to onnxruntime's F32 output with
  the rewrite than without;
* the scales and rewritten weights against the formulas written here in float64 loops (TPU-MLIR's
  weight_equalization, the SmoothQuant paper's s_j), the activation maxima from onnxruntime;
* each skip rule, by the message naming it, with the weights left as they were;
* the command: the new module file, its table, the stderr lines, the refused flag combinations.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import numpy as np
import onnx
import pytest

from tests.cli_support import run_main
from tests.models import mobilenetv2, resnet18, transformer_block
from tests.models.builder import GraphBuilder
from tests.models.runtime import onnx_inference
from tests.test_tpu_float import cosine, run, top_module
from tests.test_tpu_int8 import lower_int8
from tpudsl.ir.module import load_module, save_module
from tpudsl.lowering.calibration import calibrate
from tpudsl.lowering.calibration_table import read_table, table_text
from tpudsl.lowering.equalize import equalize_weights
from tpudsl.lowering.smooth_quant import plan_smoothing, smooth

SAMPLES = 8


def conv_pair(group2: int = 1, big: float = 100.0, between: str | None = "Relu", output_first: bool = False,
              shared: bool = False, pool: tuple[str, dict] | None = None) -> onnx.ModelProto:
    """input -> Conv c1 (4 -> 8 channels, channel 0 `big` x the others) -> `between` -> `pool` (op, attributes;
    named p) -> Conv c2 (group2 groups, its input channel 0 `big` x smaller: the same function as a balanced pair)."""
    g = GraphBuilder("pair", 0)
    cin = 8 if shared else 4  # a shared filter fits both convs
    x = g.input("input", (1, cin, 10, 10))
    w1 = (g.rng.standard_normal((8, cin, 3, 3)) * 0.3).astype(np.float32)
    b1 = (g.rng.standard_normal(8) * 0.1).astype(np.float32)
    w1[0] *= big
    b1[0] *= big
    w2 = (g.rng.standard_normal((8, 8 // group2, 3, 3)) * 0.2).astype(np.float32)
    w2[: 8 // group2, 0] /= big
    w1_name = g.const("c1.w", w1)
    y = g.node("Conv", [x, w1_name, g.const("c1.b", b1)], "c1", kernel_shape=[3, 3], pads=[1] * 4)
    if between == "Relu6":
        y = g.relu6(y, "r1")
    elif between is not None:
        y = g.node(between, [y], "r1")
    if pool is not None:
        y = g.node(pool[0], [y], "p", **pool[1])
    w2_name = w1_name if shared else g.const("c2.w", w2)
    out = g.node("Conv", [y, w2_name, g.small("c2.b", (8,))], "c2", kernel_shape=[3, 3], pads=[1] * 4,
                 group=1 if shared else group2)
    g.output(out)
    if output_first:
        g.output(y)
    return g.model()


def ln_matmul(outlier: float = 100.0, residual: bool = False, axis: int = -1) -> onnx.ModelProto:
    """x -> LayerNormalization (gamma of channels 3 and 17 `outlier` x) -> MatMul+Add -> Relu ->
    MatMul; `residual`: the LayerNorm's output is also added to the first MatMul's (post-LN)."""
    g = GraphBuilder("ln", 0)
    x = g.input("x", (1, 16, 32))
    shape = (16, 32) if axis == -2 else (32,)
    gamma = g.rng.uniform(0.5, 1.5, shape).astype(np.float32)
    gamma[..., [3, 17]] *= outlier
    h = g.node("LayerNormalization", [x, g.const("ln.weight", gamma), g.small("ln.bias", shape)], "ln",
               axis=axis, epsilon=1e-5)
    y = g.node("MatMul", [h, g.weight("fc1.weight", (32, 32), 32)], "fc1.matmul")
    y = g.node("Add", [y, g.small("fc1.bias", (32,))], "fc1")
    if residual:
        y = g.node("Add", [y, h], "residual")
    y = g.node("Relu", [y], "r")
    g.output(g.node("MatMul", [y, g.weight("fc2.weight", (32, 16), 32)], "out"))
    return g.model()


def feeds(model: onnx.ModelProto, count: int, seed: int = 0) -> dict[str, dict[str, np.ndarray]]:
    inp = model.graph.input[0]
    shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    rng = np.random.default_rng(seed)
    return {f"s{i}": {inp.name: rng.standard_normal(shape).astype(np.float32)} for i in range(count)}


def weights_by_name(top) -> dict[str, np.ndarray]:
    return {k: v.copy() for k, v in top.used_weights().items()}


def smoothed(model: onnx.ModelProto, samples, d: Path, alpha: float | None = 0.5):
    """The Top module of `model` with its LayerNorms smoothed on `samples` (the maxima pass);
    alpha None: the scales searched."""
    top = top_module(model)
    save_module(top, d / "orig.mlir")
    planned, skipped = plan_smoothing(top)
    names = [op.location.desc.data for op in planned]
    result = calibrate(str(d / "orig.mlir"), list(samples), samples.__getitem__, need_histograms=False, mod=top,
                       channels=names, keep=names if alpha is None else ())
    return top, smooth(top, planned, result.channel_max, alpha, result.kept), skipped


def int8_cosine(top, d: Path, samples, test_feed, want: np.ndarray, output: str) -> float:
    """Calibrate `top` (KLD) on `samples`, lower it to symmetric INT8, cosine of its output with `want`."""
    save_module(top, d / "m.mlir", d / "m_weights.npz")
    result = calibrate(str(d / "m.mlir"), list(samples), samples.__getitem__)
    (d / "table").write_text(table_text(result.table("kld"), 2048, len(samples)))
    tpu = load_module(d / "m.mlir")
    lower_int8(tpu, d / "table")
    return cosine(run(tpu, test_feed)[output], want)


# ---- (a) invariance against onnxruntime on the original model ----------------------------------------


# pads on every side, so that border windows read them: -inf for MaxPool, 0 for AvgPool (counted or not)
MAXPOOL = ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
AVGPOOL = ("AveragePool", dict(kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], count_include_pad=0))
AVGPOOL_PADS_COUNTED = ("AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1))

WE_MODELS = {
    "unbalanced pair": (lambda: conv_pair(), 1),
    "relu, maxpool between": (lambda: conv_pair(pool=MAXPOOL), 1),
    "avgpool between": (lambda: conv_pair(between=None, pool=AVGPOOL), 1),
    "avgpool counting pads": (lambda: conv_pair(between=None, pool=AVGPOOL_PADS_COUNTED), 1),
    "unbalanced grouped pair": (lambda: conv_pair(group2=2), 1),
    "mobilenetv2": (lambda: mobilenetv2(input_size=32, num_classes=10, width_mult=0.25), 1),
    "resnet18": (lambda: resnet18(input_size=32, num_classes=10, width=8), 8),
}


@pytest.mark.parametrize("name", WE_MODELS)
def test_equalized_module_gives_the_onnx_models_outputs(name):
    build, pairs = WE_MODELS[name]
    model = build()
    top = top_module(model)
    done, _ = equalize_weights(top)
    assert len(done) == pairs and any(np.abs(np.log(p.scales)).max() > 0.05 for p in done)
    feed = next(iter(feeds(model, 1, seed=5).values()))
    out = model.graph.output[0].name
    want = onnx_inference(model, feed)[out]
    assert np.abs(run(top, feed)[out] - want).max() <= 1e-5 * max(1.0, float(np.abs(want).max()))


def test_mobilenetv2_depthwise_pairs_are_skipped_by_the_relu6_rule():
    """MobileNetV2's expand -> depthwise -> project: both pairs run through ReLU6, which clips at 6
    whatever the scale, so neither is equalized; the one equalized pair is a project conv that feeds
    the next block's expand conv alone (no residual)."""
    top = top_module(mobilenetv2(input_size=32, num_classes=10, width_mult=0.25))
    done, skipped = equalize_weights(top)
    rules = {s.op: s.rule for s in skipped}
    relu6 = "its fused activation: relu_limit 6 clips at a fixed value (ReLU6-like), so f(s x) != s f(x)"
    assert rules["features.2.expand.relu6"] == relu6 and rules["features.2.dw.relu6"] == relu6
    assert [(p.first, p.second) for p in done] == [("features.17.project.bn", "features.18.relu6")]


def test_smoothed_module_gives_the_onnx_models_outputs(tmp_path):
    for model in (ln_matmul(), transformer_block(seq_len=8, d_model=32, num_heads=2, d_ff=64)):
        samples = feeds(model, 4)
        top, done, skipped = smoothed(model, samples, tmp_path)
        assert done and not skipped
        feed = next(iter(feeds(model, 1, seed=5).values()))
        out = model.graph.output[0].name
        want = onnx_inference(model, feed)[out]
        assert np.abs(run(top, feed)[out] - want).max() <= 2e-5 * max(1.0, float(np.abs(want).max()))
    assert [(d.layer_norm, sorted(d.matmuls)) for d in done] == [
        ("ln1", ["attn.k", "attn.q", "attn.v"]), ("ln2", ["ffn.fc1"])]


# ---- (b) the point: INT8 closer to F32 ---------------------------------------------------------------


def equalized(model: onnx.ModelProto, samples, d: Path):
    top = top_module(model)
    equalize_weights(top)
    return top


# rewrite, model, output, the cosine without it must be below, measured without -> with
GAINS = {
    # channel 0 held the activation's whole int8 range, and c2's filter on it was 100x smaller
    "we": (equalized, conv_pair, "c2", 0.95),  # 0.942 -> 0.9998
    # the same through a pool (tpudsl's extension of TPU-MLIR's pairs)
    "we maxpool": (equalized, lambda: conv_pair(pool=MAXPOOL), "c2", 0.95),  # 0.817 -> 0.9998
    "we avgpool": (equalized, lambda: conv_pair(between=None, pool=AVGPOOL), "c2", 0.95),  # 0.840 -> 0.9997
    # LayerNorm channels 3 and 17 100x the others, all in one int8 scale before the MatMul
    "sq": (lambda model, samples, d: smoothed(model, samples, d)[0], ln_matmul, "out", 0.99),  # 0.974 -> 0.9998
    # the same with the scales searched (alpha 0.85 chosen): 0.974 -> 0.9997
    "sq searched": (lambda model, samples, d: smoothed(model, samples, d, None)[0], ln_matmul, "out", 0.99),
}


@pytest.mark.parametrize("case", GAINS)
def test_rewrite_makes_int8_closer_to_float(tmp_path, case):
    rewrite, build, output, without = GAINS[case]
    model = build()
    samples = feeds(model, SAMPLES)
    test_feed = next(iter(feeds(model, 1, seed=9).values()))
    want = onnx_inference(model, test_feed)[output]
    plain = int8_cosine(top_module(model), tmp_path, samples, test_feed, want, output)
    rewritten = int8_cosine(rewrite(model, samples, tmp_path), tmp_path, samples, test_feed, want, output)
    assert plain < without and rewritten > 0.999, (plain, rewritten)


# ---- (c) the scales and the rewritten weights against the formulas -----------------------------------


@pytest.mark.parametrize("group2", [1, 2])
def test_equalization_scales_and_weights_are_the_formula(group2):
    model = conv_pair(group2=group2)
    init = {t.name: onnx.numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}
    w1, b1, w2 = init["c1.w"], init["c1.b"], init["c2.w"]
    icg, ocg = w2.shape[1], w2.shape[0] // group2
    want = []
    for c in range(w1.shape[0]):  # TPU-MLIR's loop: range over c's row of W1 and its column of W2's group
        g, i = divmod(c, icg)
        r1 = max(abs(v) for v in w1[c].ravel())
        r2 = max(abs(v) for o in range(g * ocg, (g + 1) * ocg) for v in w2[o, i].ravel())
        want.append(r1 / (r1 * r2) ** 0.5)
    top = top_module(model)
    (pair,), _ = equalize_weights(top)
    np.testing.assert_allclose(pair.scales, want, rtol=1e-12)
    got = top.used_weights()
    s = np.array(want)
    np.testing.assert_allclose(got["c1.w_equalized"], w1 / s[:, None, None, None], rtol=1e-6)
    np.testing.assert_allclose(got["c1.b_equalized"], b1 / s, rtol=1e-6)
    for o, i in itertools.product(range(w2.shape[0]), range(icg)):
        np.testing.assert_allclose(got["c2.w_equalized"][o, i], w2[o, i] * s[(o // ocg) * icg + i], rtol=1e-6)
    assert not {"c1.w", "c1.b", "c2.w"} & set(got)


@pytest.mark.parametrize("alpha", [0.5, 0.8])
def test_smoothing_scales_and_weights_are_the_formula(tmp_path, alpha):
    model = ln_matmul()
    samples = feeds(model, 4)
    act = np.zeros(32)
    for feed in samples.values():  # max |LN output| per channel, from onnxruntime
        ln = onnx_inference(model, feed, all_tensors=True)["ln"].reshape(-1, 32).astype(np.float64)
        act = np.maximum(act, np.abs(ln).max(axis=0))
    init = {t.name: onnx.numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}
    w = init["fc1.weight"]
    want = np.array([act[j] ** alpha / max(abs(v) for v in w[j]) ** (1 - alpha) for j in range(32)])
    top, (done,), _ = smoothed(model, samples, tmp_path, alpha)
    np.testing.assert_allclose(done.scales, want, rtol=1e-5)
    got = top.used_weights()
    np.testing.assert_allclose(got["ln.weight_smoothed"], init["ln.weight"] / want, rtol=2e-5)
    np.testing.assert_allclose(got["ln.bias_smoothed"], init["ln.bias"] / want, rtol=2e-5)
    np.testing.assert_allclose(got["fc1.weight_smoothed"], w * want[:, None], rtol=2e-5)


def reference_search(xs: list[np.ndarray], w: np.ndarray) -> tuple[str, float, np.ndarray]:
    """TPU-MLIR's SmoothQuant.search_opt_scale written again from its description, float64 loops:
    alpha 0, 0.05, ..., 1 then os+ clips at (step + 1)/20 of the largest channel maximum; the error
    of a candidate s: sum over samples of mean((fake_int8(x / s) @ fake_int8_rows(w * s) - x @ w)^2),
    the activation per tensor, the weight per row; the first least error wins. (label, error, s)."""
    k = w.shape[0]
    act, wmax = np.zeros(k), np.zeros(k)
    for j in range(k):
        wmax[j] = max(abs(v) for v in w[j])
        for x in xs:
            act[j] = max(act[j], np.abs(x[..., j]).max())
    grid = []
    for i in range(21):
        alpha = 0.05 * i
        grid.append((f"alpha {alpha:.2f}", np.array([act[j] ** alpha / wmax[j] ** (1 - alpha) for j in range(k)])))
    for step in range(20):
        bound = act.max() * (step + 1) / 20
        grid.append((f"os+ clip {(step + 1) / 20:.2f}", np.array([max(1.0, act[j] / bound) for j in range(k)])))

    def fake_int8(v, limit):
        return np.clip(np.round(v / (limit / 127)), -127, 127) * (limit / 127)

    best = ("", np.inf, None)
    for label, s in grid:
        qw = np.stack([fake_int8(w[j] * s[j], wmax[j] * s[j]) for j in range(k)])
        limit = max(act[j] / s[j] for j in range(k))
        error = 0.0
        for x in xs:
            x = x.reshape(-1, k)
            error += np.mean((fake_int8(x / s, limit) @ qw - x @ w) ** 2)
        if error < best[1]:
            best = (label, error, s)
    return best


def ln_outputs(model: onnx.ModelProto, samples) -> list[np.ndarray]:
    return [onnx_inference(model, feed, all_tensors=True)["ln"].astype(np.float64) for feed in samples.values()]


def test_smoothquant_search_chooses_tpu_mlirs_candidate(tmp_path):
    """The chosen scales, on LayerNorm outlier channels, are those of the search written here, on
    onnxruntime's LayerNorm outputs (not the default alpha 0.5: the search decides)."""
    model = ln_matmul()
    samples = feeds(model, SAMPLES)
    w = onnx.numpy_helper.to_array(next(t for t in model.graph.initializer if t.name == "fc1.weight")).astype(np.float64)
    label, error, s = reference_search(ln_outputs(model, samples), w)
    top, (done,), _ = smoothed(model, samples, tmp_path, alpha=None)
    assert (done.searched.chosen.label, label != "alpha 0.50") == (label, True)
    assert done.searched.error == pytest.approx(error, rel=1e-4)
    np.testing.assert_allclose(done.scales, s, rtol=1e-5)
    assert top.used_weights()["fc1.weight_smoothed"] == pytest.approx(w * s[:, None], rel=2e-5)


# ---- (d) the skip rules ------------------------------------------------------------------------------


WE_SKIPS = {
    "relu6": (dict(between="Relu6"), "r1", "its fused activation: relu_limit 6 clips at a fixed value (ReLU6-like), "
              "so f(s x) != s f(x)"),
    "not homogeneous": (dict(between="Sigmoid"), "c1", "top.Sigmoid 'r1' between it and 'c2' is not in the table of "
                        "ops the scale passes through (top.Relu, top.LeakyRelu, top.PRelu, top.MaxPool, "
                        "top.AvgPool)"),
    "model output": (dict(output_first=True), "r1", "'r1' has 2 users (a model output counts): scaling its "
                     "channels would change what the others read"),
    "shared weight": (dict(between=None, shared=True, big=1.0), "c1", "weight 'c1.w' is shared with another op"),
}


@pytest.mark.parametrize("case", WE_SKIPS)
def test_equalization_skip_rules(case):
    kwargs, op, rule = WE_SKIPS[case]
    top = top_module(conv_pair(**kwargs))
    before = weights_by_name(top)
    done, skipped = equalize_weights(top)
    assert done == [] and [(s.op, s.rule) for s in skipped] == [(op, rule)]
    after = top.used_weights()
    assert after.keys() == before.keys() and all(np.array_equal(after[k], before[k]) for k in before)


def test_equalization_passes_through_leaky_relu():
    """LeakyRelu(s x) = s LeakyRelu(x) for s > 0: the pair is equalized and outputs are unchanged."""
    model = conv_pair(between="LeakyRelu")
    top = top_module(model)
    (pair,), skipped = equalize_weights(top)
    feed = next(iter(feeds(model, 1).values()))
    assert not skipped and pair.first == "c1"
    np.testing.assert_allclose(run(top, feed)["c2"], onnx_inference(model, feed)["c2"], atol=2e-5)


SQ_SKIPS = {  # 'r': the Relu fused into the residual Add; the frontend gives the axis as positive
    "post-LN residual": (dict(residual=True), "it also feeds top.Add 'r' (TPU-MLIR inserts a Mul for this "
                         "case; not modelled)"),
    "axis": (dict(axis=-2), "it normalizes from axis 1, not over the last axis alone, the channels smoothed"),
}


@pytest.mark.parametrize("case", SQ_SKIPS)
def test_smoothquant_skip_rules(case):
    kwargs, rule = SQ_SKIPS[case]
    planned, skipped = plan_smoothing(top_module(ln_matmul(**kwargs)))
    assert planned == [] and [(s.op, s.rule) for s in skipped] == [("ln", rule)]


# ---- the command ---------------------------------------------------------------------------------


def model_dir(d: Path, model: onnx.ModelProto) -> Path:
    """`d` with m.mlir (model_transform of `model`) and 3 samples in samples/."""
    d.mkdir(exist_ok=True)
    onnx.save(model, d / "m.onnx")
    assert run_main("model_transform", "--model_name", "m", "--model_def", "m.onnx", "--mlir", "m.mlir",
                    "--not_inference", cwd=d).returncode == 0
    (d / "samples").mkdir()
    for name, feed in feeds(model, 3).items():
        np.savez(d / "samples" / f"{name}.npz", **feed)
    return d


@pytest.fixture
def pair_dir(tmp_path):
    return model_dir(tmp_path, conv_pair())


def test_run_calibration_we_writes_a_new_module_and_its_table(pair_dir):
    original = (pair_dir / "m.mlir").read_text(), (pair_dir / "m_top_f32_all_weight.npz").read_bytes()
    r = run_main("run_calibration", "m.mlir", "--dataset", "samples", "--we", "--quiet", "-o", "t", cwd=pair_dir)
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines() == ["run_calibration: --we: 1 Conv pair(s) equalized; 'r1' -> 'c2'",
                                     "run_calibration: the table is for m_we.mlir: give it to model_deploy --mlir"]
    assert ((pair_dir / "m.mlir").read_text(), (pair_dir / "m_top_f32_all_weight.npz").read_bytes()) == original
    rewritten = load_module(pair_dir / "m_we.mlir")
    assert rewritten.path.name == "m_we.mlir" and "c1.w_equalized" in rewritten.weights
    assert list(read_table(str(pair_dir / "t"))) == ["input", "r1_equalized", "c2"]
    # the table belongs to the rewritten module: the original lacks its renamed tensor
    r = run_main("tpuc-opt".replace("-", "_"), "m.mlir", "--import-calibration-table=file=t", "-o", "x.mlir", cwd=pair_dir)
    assert r.returncode == 1 and "'r1_equalized' is not a tensor of the module" in r.stderr


@pytest.mark.parametrize("args, message", [
    (["--sq_alpha", "0.3"], "error: run_calibration: --sq_alpha needs --sq"),
    (["--sq", "--sq_alpha", "1.5"], "error: run_calibration: --sq_alpha must lie in [0, 1], not 1.5"),
    (["--rewritten_mlir", "x.mlir"], "error: run_calibration: --rewritten_mlir needs --sq, --we or --bc (nothing else "
     "rewrites the module)"),
    (["--we", "--rewritten_mlir", "m.mlir"], "error: run_calibration: --rewritten_mlir 'm.mlir' is the input module; "
     "the rewrite goes to a new file"),
])
def test_run_calibration_refuses_bad_rewrite_flags(pair_dir, args, message):
    before = {p.name for p in pair_dir.iterdir()}
    r = run_main("run_calibration", "m.mlir", "--dataset", "samples", "--quiet", "-o", "t", *args, cwd=pair_dir)
    assert (r.returncode, r.stderr.splitlines()) == (1, [message])
    assert {p.name for p in pair_dir.iterdir()} == before


def test_run_calibration_sq_and_we_rewrite_then_calibrate(tmp_path):
    """--sq --we on a model with a smoothable LayerNorm and no Conv pair: the maxima pass, the
    rewrite, and a table equal to calibrating the written module afresh."""
    model_dir(tmp_path, ln_matmul())
    samples = feeds(ln_matmul(), 3)
    r = run_main("run_calibration", "m.mlir", "--dataset", "samples", "--sq", "--sq_alpha", "0.6", "--we", "--quiet",
                 "--rewritten_mlir", "smooth.mlir", "-o", "t", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines() == [
        "run_calibration: --sq: 1 LayerNorm(s) smoothed into their MatMuls (alpha 0.6); 'ln'",
        "run_calibration: --we: 0 Conv pair(s) equalized",
        "run_calibration: the table is for smooth.mlir: give it to model_deploy --mlir"]
    assert (tmp_path / "smooth_top_f32_all_weight.npz").exists()
    table = read_table(str(tmp_path / "t"))
    assert "ln_smoothed" in table and "ln" not in table
    again = calibrate(str(tmp_path / "smooth.mlir"), [str(tmp_path / "samples" / f"{n}.npz") for n in samples],
                      lambda path: dict(np.load(path)))
    def rows(text: str) -> list[str]:
        return [line for line in text.splitlines() if not line.startswith("# genetated time")]

    assert rows((tmp_path / "t").read_text()) == rows(table_text(again.table("kld"), 2048, len(samples)))
    # two workers: the per-channel maxima merge (by maximum) to the same smoothing and table
    r = run_main("run_calibration", "m.mlir", "--dataset", "samples", "--sq", "--sq_alpha", "0.6", "--we", "--quiet",
                 "--workers", "2", "--rewritten_mlir", "smooth2.mlir", "-o", "t2", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert rows((tmp_path / "t2").read_text()) == rows((tmp_path / "t").read_text())
    # no --sq_alpha: searched, on the activations the two workers kept; stderr names the choice
    r = run_main("run_calibration", "m.mlir", "--dataset", "samples", "--sq", "--quiet", "--workers", "2",
                 "-o", "t3", cwd=tmp_path)
    w = onnx.numpy_helper.to_array(next(t for t in ln_matmul().graph.initializer if t.name == "fc1.weight"))
    label, error, _ = reference_search(ln_outputs(ln_matmul(), samples), w.astype(np.float64))
    line = r.stderr.splitlines()[0]
    assert re.fullmatch(r"run_calibration: --sq: 1 LayerNorm\(s\) smoothed into their MatMuls \(alpha searched\); "
                        rf"'ln': {label} \(INT8 MatMul MSE (\S+)\)", line), line
    assert float(line.split()[-1][:-1]) == pytest.approx(error, rel=1e-3)


def test_smoothquant_skips_a_layer_norm_without_static_shape():
    from xdsl.dialects.builtin import Float32Type, UnrankedTensorType
    from xdsl.rewriter import Rewriter

    top = top_module(ln_matmul())
    ln = next(op for op in top.module.walk() if op.name == "top.LayerNorm")
    Rewriter.replace_value_with_new_type(ln.results[0], UnrankedTensorType(Float32Type()))
    planned, skipped = plan_smoothing(top)
    assert planned == [] and [(s.op, s.rule) for s in skipped] == [
        ("ln", "its output has no static shape (run shape inference first)")]


def _no_gamma(top, ln, fc1):
    from xdsl.dialects.builtin import NoneType
    from xdsl.rewriter import InsertPoint, Rewriter

    from tpudsl.dialects.opdef import create

    none = create("top.None", [], [NoneType()], loc="none")
    Rewriter.insert_op(none, InsertPoint.before(ln))
    ln.operands[1] = none.results[0]


def _transposed(top, ln, fc1):
    from tpudsl.dialects.attrs import to_attr

    fc1.attributes["right_transpose"] = to_attr("bool", True)


# a change to the smoothable module of ln_matmul() -> the rule that stops it ('r': fc1 with its Relu fused)
SQ_MUTATED = {
    "no gamma": (_no_gamma, "it has no gamma to fold the scale into"),
    "shared gamma": (lambda top, ln, fc1: ln.operands.__setitem__(2, ln.operands[1]),
                     "weight 'ln.weight' is shared with another op"),
    "computed right": (lambda top, ln, fc1: fc1.operands.__setitem__(1, ln.operands[0]),
                       "MatMul 'r' does not read a [32, N] weight"),
    "transposed": (_transposed, "MatMul 'r' transposes an operand or batches heads"),
}


@pytest.mark.parametrize("case", SQ_MUTATED)
def test_smoothquant_skip_rules_of_operands(case):
    mutate, rule = SQ_MUTATED[case]
    top = top_module(ln_matmul())
    ops = {op.location.desc.data: op for op in top.module.walk() if op.name.startswith("top.")}
    mutate(top, ops["ln"], ops["r"])
    planned, skipped = plan_smoothing(top)
    assert planned == [] and [(s.op, s.rule) for s in skipped] == [("ln", rule)]


def test_equalization_skips_a_filter_computed_at_run_time():
    top = top_module(conv_pair())
    ops = {op.location.desc.data: op for op in top.module.walk() if op.name.startswith("top.")}
    ops["c2"].operands[1] = ops["input"].results[0]  # any computed value: the rule looks at its producer
    done, skipped = equalize_weights(top)
    assert done == [] and [(s.op, s.rule) for s in skipped] == [("r1", "'input' is computed at run time, not a weight")]


@pytest.mark.parametrize("pool", [MAXPOOL, AVGPOOL])
def test_equalization_skips_a_pool_with_a_clipping_fused_activation(pool):
    from tpudsl.dialects.attrs import to_attr

    top = top_module(conv_pair(pool=pool))
    op = next(op for op in top.module.walk() if op.name.endswith("Pool"))
    op.attributes["do_relu"], op.attributes["relu_limit"] = to_attr("bool", True), to_attr("f64", 6.0)
    done, skipped = equalize_weights(top)
    assert done == [] and [(s.op, s.rule) for s in skipped] == [
        ("r1", f"{op.name} 'p': its fused activation: relu_limit 6 clips at a fixed value (ReLU6-like), so f(s x) != s f(x)")]


def test_run_calibration_we_that_fails_writes_nothing(pair_dir):
    bad = next(iter(feeds(conv_pair(), 1).values()))["input"]
    bad[0, 0, 0, 0] = np.nan
    np.savez(pair_dir / "samples" / "s9.npz", input=bad)
    before = {p.name for p in pair_dir.iterdir()}
    r = run_main("run_calibration", "m.mlir", "--dataset", "samples", "--we", "--quiet", "-o", "t", cwd=pair_dir)
    assert r.returncode == 1 and r.stderr.startswith("error: sample 'samples/s9.npz': tensor 'input' has NaN")
    assert {p.name for p in pair_dir.iterdir()} == before


def test_run_calibration_we_and_sq_over_a_dask_cluster(pair_dir):
    """--scheduler: the rewritten module is written first and the cluster's workers (threads of an
    in-process cluster here: its CPU is that of the run) read it; for --sq without --sq_alpha they
    send back the LayerNorm outputs the search needs. The same stderr, table and module as one
    process's run."""
    distributed = pytest.importorskip("distributed")
    runs = [(pair_dir, "--we"), (model_dir(pair_dir / "ln", ln_matmul()), "--sq")]
    alone = [run_main("run_calibration", "m.mlir", "--dataset", "samples", flag, "--quiet", "-o", "t", cwd=d)
             for d, flag in runs]
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        dask = [run_main("run_calibration", "m.mlir", "--dataset", "samples", flag, "--quiet", "-o", "t_dask",
                         "--rewritten_mlir", "m_dask.mlir", "--scheduler", cluster.scheduler_address, cwd=d)
                for d, flag in runs]
    for (d, flag), one, r in zip(runs, alone, dask, strict=True):
        assert (one.returncode, r.returncode) == (0, 0), r.stderr
        assert r.stderr.replace("m_dask.mlir", f"m_{flag[2:]}.mlir") == one.stderr
        tables = [(d / name).read_text().splitlines()[1:] for name in ("t", "t_dask")]  # all but the time
        assert tables[0] == tables[1]
        module = (d / "m_dask.mlir").read_text().replace("m_dask_", f"m_{flag[2:]}_")
        assert module == (d / f"m_{flag[2:]}.mlir").read_text()
    assert "r1_equalized" in (pair_dir / "t_dask").read_text() and "alpha searched" in dask[1].stderr

"""run_qtable's score of a detection output: each part a Concat assembles is scored, not only the whole.

The model is YOLOv8's output in small: `xywh` (a Concat of two convs' boxes, values in the hundreds) and
`cls_sigmoid` (class scores of logits near -8, so about 3e-4) concatenated into `output0`. The whole's
cosine is the boxes' (INT8 keeps them): scored whole, every layer alone in INT8 passes and run_qtable keeps
nothing float, while INT8 rounds every score to 0 (the Sigmoid's step 1/127, and the output Concat's, set by
the boxes). model_deploy's Tpu check (the previous level, every tensor compared) fails without a qtable;
with the one the search writes it must pass. SSD under `--add_postprocess ssd`: the search scores loc, conf
and the priors (onnxruntime's outputs), not the `ssd_post` rows.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest

from tests.cli_support import deploy_dir_int8, run_main, table_rows
from tests.models import onnx_inference
from tests.models.builder import GraphBuilder
from tests.models.ssd import MAPS, PRIORS_A_CELL, tiny_ssd
from tests.onnx_node.harness import cosine
from tpudsl.cli.qtable_search import Int8Search, lowered_int8
from tpudsl.interp.module_interpreter import run_samples
from tpudsl.ir.module import load_module
from tpudsl.lowering.calibration_table import read_table
from tpudsl.lowering.top_to_tpu_int8 import int8_params


def _detection_head(seed: int = 5, box: float = 200.0, cls_weight: float = 0.2, cls_bias: float = -8.0,
                    feat_relu: bool = True) -> onnx.ModelProto:
    g = GraphBuilder("head", seed=seed)
    x = g.input("images", (1, 3, 8, 8))
    feat = g.conv(x, "feat", 3, 8, 3)
    if feat_relu:
        feat = g.relu(feat, "feat_relu")
    xywh = g.node("Concat", [g.conv(feat, "xy", 8, 2, 1), g.conv(feat, "wh", 8, 2, 1)], "xywh", axis=1)
    cls = g.node("Sigmoid", [g.conv(feat, "cls", 8, 3, 1)], "cls_sigmoid")
    g.output(g.node("Concat", [xywh, cls], "output0", axis=1))

    def plant(name: str, w: np.ndarray) -> None:
        if name.startswith(("xy.", "wh.")):
            w *= box  # 200: boxes in the hundreds
        elif name == "cls.weight":
            w *= cls_weight
        elif name == "cls.bias":
            w[:] = cls_bias  # -8: ultralytics' prior, few objects

    g.edit_weights(plant)
    return g.model()


def _head_dir(d, model: onnx.ModelProto, *transform: str):
    onnx.save(model, d / "m.onnx")
    (d / "data").mkdir()
    rng = np.random.default_rng(1)
    for i in range(3):
        np.savez(d / "data" / f"{i}.npz", images=rng.uniform(0, 1, (1, 3, 8, 8)).astype(np.float32))
    r = run_main("model_transform", "--model_name", "head", "--model_def", "m.onnx", "--mlir", "m.mlir", *transform,
                 cwd=d)
    assert r.returncode == 0, r.stderr
    return d


@pytest.fixture(scope="module")
def head(tmp_path_factory):
    d = _head_dir(tmp_path_factory.mktemp("head"), _detection_head())
    r = run_main("run_calibration", "m.mlir", "--dataset", "data", "--input_num", "2", "--quiet", "-o", "table", cwd=d)
    assert r.returncode == 0, r.stderr
    return d


def test_the_parts_are_the_slices_each_concat_input_fills(head):
    """The scored parts of output0 are xy, wh and cls_sigmoid (the nested Concat split too): each slice of
    Top's output0 equals the interpreter's own tensor of that input."""
    sample = dict(np.load(head / "data" / "0.npz"))
    search = Int8Search(str(head / "m.mlir"), read_table(str(head / "table")), "BM1684X", [sample], False)
    parts = search.scoring.parts["output0"]
    tensors = run_samples(search.top.module, search.top.weights, [sample], keep_all=True)[0][0]
    assert len(parts) == 3
    for part, name in zip(parts, ("xy", "wh", "cls_sigmoid"), strict=True):
        np.testing.assert_array_equal(tensors["output0"][part], tensors[name])


def _deploy(d, *extra: str):
    return deploy_dir_int8(d, "table", "2.npz", "0.9,0.5", "--compare_all", *extra)


def test_run_qtable_keeps_the_class_scores_float_and_model_deploy_passes(head):
    r = _deploy(head)
    assert r.returncode == 1 and "Tpu check failed at tensor 'cls_sigmoid'" in r.stderr, r.stderr
    r = run_main("run_qtable", "m.mlir", "--dataset", "data", "--input_num", "2", "--calibration_table", "table",
                 "--processor", "bm1684x", "--quiet", "-o", "qtable", cwd=head)
    assert r.returncode == 0, r.stderr
    floats = {row[0] for row in table_rows(head / "qtable")}
    assert "cls_sigmoid" in floats
    r = _deploy(head, "--quantize_table", "qtable")
    assert r.returncode == 0, r.stderr


@pytest.fixture(scope="module")
def ssd(tmp_path_factory):
    """A tiny SSD through model_transform --add_postprocess ssd (ssd.onnx, ssd.mlir)."""
    d = tmp_path_factory.mktemp("ssd")
    onnx.save(tiny_ssd(seed=3), d / "ssd.onnx")
    r = run_main("model_transform", "--model_name", "ssd", "--model_def", "ssd.onnx", "--mlir", "ssd.mlir",
                 "--add_postprocess", "ssd", cwd=d)
    assert r.returncode == 0, r.stderr
    return d


def test_ssd_heads_are_scored_not_its_rows(ssd):
    """Under --add_postprocess ssd the search scores mbox_loc (and each feature map's slice of it),
    mbox_conf_flatten and the priors: onnxruntime's outputs of the model without the post-processing."""
    tmp_path, model = ssd, onnx.load(ssd / "ssd.onnx")
    sample = {"images": np.random.default_rng(4).uniform(0, 1, (1, 3, 16, 16)).astype(np.float32)}
    (tmp_path / "cali").mkdir()
    np.savez(tmp_path / "cali" / "0.npz", **sample)
    r = run_main("run_calibration", "ssd.mlir", "--dataset", "cali", "--quiet", "-o", "table", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    search = Int8Search(str(tmp_path / "ssd.mlir"), read_table(str(tmp_path / "table")), "BM1684X", [sample], False)
    want = onnx_inference(model, sample)
    assert set(search.reference.runs[0]) == set(want) == {"mbox_loc", "mbox_conf_flatten", "mbox_priorbox"}
    for name, value in want.items():
        np.testing.assert_allclose(search.reference.runs[0][name], value, rtol=1e-4, atol=1e-4 * np.abs(value).max())
    starts = np.cumsum([0] + [side * side * PRIORS_A_CELL * 4 for side, _ in MAPS])
    assert [(p[1].start, p[1].stop) for p in search.scoring.parts["mbox_loc"]] == list(zip(starts, starts[1:], strict=False))
    assert search.cosine({}) > 0.9


def test_naming_the_post_processing_output_fails_before_calibration(ssd):
    """ssd_post is a tensor of the module, not of the part the search and --bc score (the heads):
    run_calibration refuses it before reading any sample (this --dataset does not exist), not
    after calibrating."""
    before = set(ssd.iterdir())
    r = run_main("run_calibration", "ssd.mlir", "--dataset", "missing", "--bc", "--processor", "bm1684x",
                 "--global_compare_layers", "ssd_post", "--quiet", "-o", "table_post", cwd=ssd)
    assert r.returncode == 1 and r.stderr.strip() == \
        "error: --global_compare_layers: 'ssd_post' is not a tensor of the module", r.stderr
    assert set(ssd.iterdir()) == before


def test_named_layers_score_their_weighted_mean(head):
    """--global_compare_layers xy:0.25,cls:0.75 scores 0.25 * cos(xy) + 0.75 * cos(cls) (each the mean over
    samples), cosines of the INT8 module's tensors (dequantized by their types' scale) with Top's, written
    here in numpy; 'xy, cls' is their plain mean. Neither is the default score (the least over output0's
    parts: the class scores', 0.0)."""
    samples = [dict(np.load(head / "data" / f"{i}.npz")) for i in range(2)]
    table = read_table(str(head / "table"))
    top = load_module(head / "m.mlir")
    int8 = lowered_int8(load_module(head / "m.mlir"), table, "BM1684X", False)
    scale = {name: s for name, (s, _) in int8_params(int8).items()}  # symmetric: zero points 0
    want = run_samples(top.module, top.weights, samples, keep_all=True)[0]
    got = run_samples(int8.module, int8.weights, samples, keep_all=True)[0]
    cos = {name: np.mean([cosine(g[name] * scale[name], w[name]) for g, w in zip(got, want, strict=True)])
           for name in ("xy", "cls")}
    assert abs(cos["xy"] - cos["cls"]) > 1e-4, cos  # so that the weights show
    weighted = Int8Search(str(head / "m.mlir"), table, "BM1684X", samples, False, compare_layers="xy:0.25,cls:0.75")
    assert weighted.cosine({}) == pytest.approx(0.25 * cos["xy"] + 0.75 * cos["cls"], abs=1e-9)
    mean = Int8Search(str(head / "m.mlir"), table, "BM1684X", samples, False, compare_layers=" xy , cls ")
    assert mean.cosine({}) == pytest.approx((cos["xy"] + cos["cls"]) / 2, abs=1e-9)
    assert Int8Search(str(head / "m.mlir"), table, "BM1684X", samples, False).cosine({}) < 0.01


def test_bias_correction_reverts_a_correction_that_lowers_a_part(tmp_path):
    """--bc keeps a correction only if the model's cosine (run_qtable's: the least over output0 and its
    parts) does not drop. On this head (boxes in the tens, class scores near 0.1, no Relu after feat),
    correcting cls does not lower output0's whole cosine (0.993794 before and after, to 6 digits: kept when
    the whole is scored, measured) but lowers its least part (the class scores', 0.923365 -> 0.923070):
    reverted."""
    d = _head_dir(tmp_path, _detection_head(seed=3, box=20.0, cls_weight=1.0, cls_bias=-2.0, feat_relu=False),
                  "--not_inference")
    r = run_main("run_calibration", "m.mlir", "--dataset", "data", "--input_num", "3", "--quiet", "-o", "table", "--bc",
                 "--min_layer_cos", "1", "--expected_cos", "1", "--bc_inference_num", "3", cwd=d)
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if "corrected" in line]
    assert lines[0].endswith("INT8 output cosine 0.922933 on 3 samples; 3 biases corrected"), lines
    assert "'cls' (layer cosine" in lines[-1] and lines[-1].endswith(
        "not corrected: the output cosine would drop to 0.923070"), lines
    weights = load_module(d / "m_bc.mlir").weights
    assert "cls.bias" in weights and "feat.bias_corrected" in weights

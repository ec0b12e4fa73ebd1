"""top.YoloDetection (the Top kernel) against a separately written decode + NMS (yolo_reference.py,
float64 loops): a fixed module that suppresses, thresholds and truncates, and a property over
random heads (a random run, then forced runs in which planted boxes make each case happen in every
example); model_transform and model_deploy on a tiny YOLO."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from hypothesis import assume
from hypothesis import strategies as st
from onnx import helper as onnx_helper

from tests.cli_support import run_main
from tests.models import onnx_inference
from tpudsl.cli.model_score import Scoring
from tpudsl.cli.qtable_search import Int8Search, lowered_int8
from tpudsl.interp.module_interpreter import run_samples
from tpudsl.ir.module import load_module
from tpudsl.lowering.calibration_table import read_table
from tests.feature_tally import FeatureTally, forced_runs, run_each
from tests.frontend_support import error_lines, make_model
from tests.yolo_reference import YOLOV3_TINY_ANCHORS, YOLOV5_ANCHORS, expected_output, yolo_post
from tpudsl.backend import isa
from tpudsl.backend.chips import CHIPS
from tpudsl.backend.cmodel import arith_detection
from tpudsl.backend.cmodel.engine import HANDLERS
from tpudsl.backend.cmodel.memory import Fault, Memory
from tpudsl.dialects import make_context
from tpudsl.interp import run_module
from tpudsl.interp.kernel import KernelAttrs
from tpudsl.interp.kernels_detection import KERNELS
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import verify_module
from tpudsl.ir.parser import parse_module

GRIDS = ((8, 8), (4, 4), (2, 2))  # a 64x64 input's stride 8, 16 and 32 heads


def yolo_module(shapes, keep_topk: int, classes: int = 2, version: str = "yolov5", net: int = 64,
                result: str | None = None, extra: str = "") -> str:
    args = ", ".join(f"%arg{i}: tensor<{'x'.join(map(str, s))}xf32>" for i, s in enumerate(shapes))
    types = [f"tensor<{'x'.join(map(str, s))}xf32>" for s in shapes]
    out = result or f"tensor<1x1x{shapes[0][0] * keep_topk}x7xf32>"
    lines = [f'    %{i} = "top.Input"(%arg{i}) : ({t}) -> {t} loc("head{i}")' for i, t in enumerate(types)]
    anchors = ", ".join(f"{a}.0" for a in YOLOV5_ANCHORS)
    lines.append(
        f'    %y = "top.YoloDetection"({", ".join(f"%{i}" for i in range(len(shapes)))}) {{anchors = [{anchors}], '
        f"class_num = {classes} : i64, keep_topk = {keep_topk} : i64, net_input_h = {net} : i64, "
        f"net_input_w = {net} : i64, nms_threshold = 5.000000e-01 : f64, obj_threshold = 5.000000e-01 : f64, "
        f'version = "{version}"{extra}}} : ({", ".join(types)}) -> {out} loc("yolo_post")')
    return (f"module {{\n  func.func @main({args}) -> {out} {{\n" + "\n".join(lines)
            + f"\n    return %y : {out}\n  }}\n}}\n")


def run_text(text: str, inputs: dict[str, np.ndarray]) -> np.ndarray:
    module = parse_module(text, "yolo.mlir", make_context())
    verify_module(module, "yolo.mlir")
    return run_module(module, {}, inputs)["yolo_post"]


def heads(seed: int, batch: int = 1, grids=GRIDS, classes: int = 2, scale: float = 2.0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [(rng.normal(size=(batch, 3 * (5 + classes), h, w)) * scale).astype(np.float32) for h, w in grids]


def anchors_of(version: str) -> list[int]:
    return YOLOV3_TINY_ANCHORS if version == "yolov3_tiny" else YOLOV5_ANCHORS


def check_against_reference(out: np.ndarray, xs, keep_topk: int, classes: int, version: str, net: int,
                            nms: float = 0.5) -> None:
    res = yolo_post(xs, anchors_of(version), classes, net, net, 0.5, nms, keep_topk, version)
    want = np.array(expected_output(res, xs[0].shape[0], keep_topk))
    got = out.reshape(-1, 7)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got[:, :2], want[:, :2])  # image and class, exactly; so the count
    np.testing.assert_allclose(got[:, 2:], want[:, 2:], rtol=2e-5, atol=2e-5)


def test_fixed_heads_suppress_threshold_and_truncate():
    xs = heads(seed=3, scale=3.0)
    res = yolo_post(xs, YOLOV5_ANCHORS, 2, 64, 64, 0.5, 0.5, 12, "yolov5")
    assert res.suppressed >= 3 and res.below_threshold >= 3 and res.truncated >= 1  # the cases this test is for
    assert res.margin > 1e-4
    # The heads in reverse order: the op reads the widest grid first whatever the operand order.
    shapes = [x.shape for x in xs][::-1]
    out = run_text(yolo_module(shapes, 12), {f"head{i}": x for i, x in enumerate(xs[::-1])})
    check_against_reference(out, xs, 12, 2, "yolov5", 64)


def test_no_box_gives_one_fake_row_per_image():
    xs = [x - 40 for x in heads(seed=1, batch=2)]  # every objectness logit far below 0
    out = run_text(yolo_module([x.shape for x in xs], 3), {f"head{i}": x for i, x in enumerate(xs)})
    rows = out.reshape(-1, 7)
    np.testing.assert_array_equal(rows[:2], [[0, -1, -1, -1, -1, -1, -1], [1, -1, -1, -1, -1, -1, -1]])
    np.testing.assert_array_equal(rows[2:], 0)


@pytest.mark.parametrize(("shapes", "extra", "message"), [
    ([(1, 21, 8, 8), (1, 20, 4, 4), (1, 21, 2, 2)], "", "head #1 has 20 channels: 3 boxes x (5 + 2 classes) are 21"),
    ([(1, 21, 8, 8), (1, 21, 4, 4)], "", "has 18 anchor values: 2 heads x 3 boxes need 12"),
    ([(1, 21, 8, 8), (1, 21, 4, 4), (1, 21, 2, 2)], ", agnostic_nms = true",
     "attribute 'agnostic_nms' = true is not supported (supported: false)"),
])
def test_the_verifier_names_what_is_wrong(shapes, extra, message):
    with pytest.raises(TpudslError, match=message.replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")):
        run_text(yolo_module(shapes, 4, extra=extra), {})


FEATURES = ("suppressed", "below_threshold", "truncated", "yolov3", "batch2", "2 heads")
GRIDS_32 = ((4, 4), (2, 2), (1, 1))  # a 32x32 input's heads (yolov3_tiny: the first two)


@st.composite
def cases(draw, version=None, batch=None, planted=False, keep_topk=None):
    """Random heads; `planted` writes boxes that force cases whatever the draws (plant_boxes)."""
    return dict(seed=draw(st.integers(0, 2**32 - 1)), batch=batch or draw(st.sampled_from((1, 2))),
                classes=draw(st.integers(2 if keep_topk == 1 else 1, 3)),
                keep_topk=keep_topk or draw(st.integers(1, 12)),
                version=version or draw(st.sampled_from(("yolov5", "yolov5", "yolov3", "yolov3_tiny"))),
                scale=draw(st.sampled_from((1.0, 2.0, 3.0))), nms=draw(st.sampled_from((0.2, 0.35, 0.5))),
                planted=planted)


def plant_boxes(xs: list[np.ndarray], classes: int) -> None:
    """In every image: two sure class-0 boxes of neighbouring cells of the 2x2 head whose IoU is 0.76
    (yolov5; 0.99 yolov3), so one of them or an earlier box is suppressed; a box whose objectness
    passes and whose score does not (its class logits -10); with 2 or more classes a sure class-1
    box in the 1x1 head (2 heads: box 1 of the 2x2 head's first cell), so that each image keeps at
    least 2 boxes."""
    f = 5 + classes
    for col in (0, 1):
        xs[1][:, :f, 0, col] = [0, 0, 5, 5, 5, 5, *[-5] * (classes - 1)]
    xs[0][:, 2 * f + 4, 3, 3], xs[0][:, 2 * f + 5:3 * f, 3, 3] = 5, -10
    if classes > 1:
        head, box = (xs[2], 0) if len(xs) > 2 else (xs[1], 1)
        head[:, box * f:(box + 1) * f, 0, 0] = [0, 0, 0, 0, 5, -5, 5, *[-5] * (classes - 2)]


# Forced runs (docs/testing.md, "floors by construction"): each case in every example of its run.
FORCED = [(cases(planted=True), ("suppressed", "below_threshold")), (cases(version="yolov3"), ("yolov3",)),
          (cases(batch=2), ("batch2",)), (cases(planted=True, keep_topk=1), ("truncated",)),
          (cases(version="yolov3_tiny"), ("2 heads",))]
EXAMPLES, EACH = 50, 6


def test_random_heads_match_the_reference():
    tally = FeatureTally(FEATURES)

    def check(case, forced):
        grids = GRIDS_32[:2] if case["version"] == "yolov3_tiny" else GRIDS_32
        xs = heads(case["seed"], case["batch"], grids, case["classes"], case["scale"])
        if case["planted"]:
            plant_boxes(xs, case["classes"])
        anchors = anchors_of(case["version"])
        res = yolo_post(xs, anchors, case["classes"], 32, 32, 0.5, case["nms"], case["keep_topk"], case["version"])
        assume(res.margin > 1e-4)  # no decision float32 rounding could flip
        attrs = KernelAttrs({"anchors": [float(a) for a in anchors], "class_num": case["classes"],
                             "keep_topk": case["keep_topk"], "net_input_h": 32, "net_input_w": 32,
                             "nms_threshold": case["nms"], "obj_threshold": 0.5, "version": case["version"]},
                            out_shapes=[(1, 1, case["batch"] * case["keep_topk"], 7)])
        out = KERNELS["top.YoloDetection"].run(xs, attrs)
        check_against_reference(out, xs, case["keep_topk"], case["classes"], case["version"], 32, case["nms"])
        # The cmodel's record arithmetic, written separately, gives the kernel's rows bit for bit.
        cmodel = arith_detection.yolo_detection(xs, np.array(anchors, float).reshape(len(xs), 3, 2),
                                                case["version"], 32, 32, case["classes"], 0.5, case["nms"],
                                                case["keep_topk"])
        np.testing.assert_array_equal(cmodel, out.reshape(-1, 7))
        seen = {name for name, happened in (
            ("suppressed", res.suppressed), ("below_threshold", res.below_threshold), ("truncated", res.truncated),
            ("yolov3", case["version"] == "yolov3"), ("batch2", case["batch"] == 2), ("2 heads", len(xs) == 2))
            if happened}
        assert seen.issuperset(forced), f"a forced example without {set(forced) - seen}: {case}"
        tally.record(seen)

    run_each(check, forced_runs(cases(), FORCED, EXAMPLES, EACH))
    tally.assert_each_in(EACH / EXAMPLES)


YOLO_HEADS = (("p5", 32), ("p3", 8), ("p4", 16))


def yolo_onnx(tmp_path, seed: int, outputs=YOLO_HEADS, net: int = 64) -> dict[str, np.ndarray]:
    """A tiny YOLO: Conv heads of a net x net image (`outputs`, name and kernel = stride: 8, 16, 32; 21
    channels: 3 boxes x (5 + 2 classes)), narrowest first; the test input is saved as in.npz."""
    rng = np.random.default_rng(seed)
    nodes, init = [], {}
    for name, k in outputs:
        init[f"{name}_w"] = (rng.normal(size=(21, 3, k, k)) * 0.2 / k).astype(np.float32)
        init[f"{name}_b"] = (rng.normal(size=21) * 1.5).astype(np.float32)
        nodes.append(onnx_helper.make_node("Conv", ["images", f"{name}_w", f"{name}_b"], [name],
                                           kernel_shape=[k, k], strides=[k, k]))
    onnx.save(make_model(nodes, {"images": [1, 3, net, net]}, [name for name, _ in outputs], init),
              tmp_path / "yolo.onnx")
    image = rng.uniform(0, 1, size=(1, 3, net, net)).astype(np.float32)
    np.savez(tmp_path / "in.npz", images=image)
    return {"images": image}


def test_model_transform_adds_yolov5_post_processing_and_validates_the_heads(tmp_path):
    yolo_onnx(tmp_path, seed=6)
    r = run_main("model_transform", "--model_name", "yolo", "--model_def", "yolo.onnx", "--mlir", "yolo.mlir",
                 "--add_postprocess", "yolov5", "--test_input", "in.npz", "--test_result", "top.npz", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "run struct-optimize, shape-infer, add-postprocess, canonicalize" in r.stderr
    # The heads are compared with onnxruntime by name; yolo_post has no onnxruntime counterpart.
    assert "only in target (1): yolo_post" in r.stdout and "3 compared" in r.stdout, r.stdout
    ref = np.load(tmp_path / "yolo_ref_outputs.npz")
    assert {"p3", "p4", "p5"} <= set(ref) and "yolo_post" not in ref
    text = (tmp_path / "yolo.mlir").read_text()
    assert 'module.postprocess = "yolov5"' in text and '"top.YoloDetection"' in text
    xs = [ref[name] for name in ("p3", "p4", "p5")]
    res = yolo_post(xs, YOLOV5_ANCHORS, 2, 64, 64, 0.5, 0.5, 200, "yolov5")
    assert res.suppressed >= 1 and res.below_threshold >= 1 and res.margin > 1e-4  # the cases this model is for
    got = np.load(tmp_path / "top.npz")["yolo_post"]
    assert got.shape == (1, 1, 200, 7)
    want = np.array(expected_output(res, 1, 200))
    np.testing.assert_array_equal(got.reshape(-1, 7)[:, :2], want[:, :2])
    np.testing.assert_allclose(got.reshape(-1, 7)[:, 2:], want[:, 2:], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("post", "message"), [
    ("yolov5", "the outputs do not look like YOLO heads: head 'y' has 3 channels, not 3 x (5 + classes)"),
    ("ssd", "the outputs are not SSD's loc, conf and priorbox: takes 3 inputs (loc, conf, priorbox), got 1 "
            "(the outputs are 'y' 1x3x8x8)"),
])
def test_model_transform_refuses_outputs_the_post_processing_does_not_take(post, message, tmp_path):
    """YOLO's (and SSD's, tests/test_ssd_detection.py) post-processing on a model without its outputs: one line."""
    onnx.save(make_model([onnx_helper.make_node("Relu", ["images"], ["y"])], {"images": [1, 3, 8, 8]}, ["y"]),
              tmp_path / "m.onnx")
    r = run_main("model_transform", "--model_name", "m", "--model_def", "m.onnx", "--mlir", "m.mlir",
                 "--add_postprocess", post, cwd=tmp_path)
    assert r.returncode == 1
    assert error_lines(r.stderr) == [f"error: add-postprocess: {message}"]
    assert {p.name for p in tmp_path.iterdir()} == {"m.onnx"}


def test_model_deploy_writes_a_bmodel_whose_cmodel_rows_equal_the_tpu_interpreter(tmp_path):
    """F32 in every mode, the Top kernel's arithmetic at the Tpu level (Top's rows exactly); the
    bmodel's rows are the Tpu interpreter's, to the ulps its conv heads differ by (the record's own
    arithmetic is bit-exact: the property above)."""
    yolo_onnx(tmp_path, seed=6)
    r = run_main("model_transform", "--model_name", "yolo", "--model_def", "yolo.onnx", "--mlir", "yolo.mlir",
                 "--add_postprocess", "yolov5", "--test_input", "in.npz", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = run_main("model_deploy", "--mlir", "yolo.mlir", "--quantize", "F32", "--processor", "bm1684x",
                 "--model", "yolo.bmodel", "--test_input", "yolo_in_f32.npz", "--test_reference",
                 "yolo_top_outputs.npz", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    tpu = np.load(tmp_path / "yolo_bm1684x_f32_tpu_outputs.npz")["yolo_post"]
    np.testing.assert_array_equal(tpu, np.load(tmp_path / "yolo_top_outputs.npz")["yolo_post"])
    r = run_main("model_runner", "--input", "yolo_in_f32.npz", "--model", "yolo.bmodel", "--output", "bm.npz",
                 cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    bm = np.load(tmp_path / "bm.npz")["yolo_post"].reshape(-1, 7)
    np.testing.assert_array_equal(bm[:, :2], tpu.reshape(-1, 7)[:, :2])
    np.testing.assert_allclose(bm[:, 2:], tpu.reshape(-1, 7)[:, 2:], rtol=1e-5)
    assert (tpu.reshape(-1, 7)[:, 2] > 0).sum() == 5  # 20 boxes above the threshold, 15 suppressed


def test_model_deploy_f16_keeps_the_detection_in_f32_and_the_bmodel_is_bit_exact(tmp_path):
    """F16 mode: the conv heads run in F16, each cast to f32 (`<head>_f32`) for tpu.YoloDetection,
    which stays F32; the cmodel's rows are the Tpu interpreter's bit for bit (the heads' F16
    arithmetic is bit-exact to the interpreter's, docs/quantization.md, and record 96 is its own)."""
    yolo_onnx(tmp_path, seed=6)
    r = run_main("model_transform", "--model_name", "yolo", "--model_def", "yolo.onnx", "--mlir", "yolo.mlir",
                 "--add_postprocess", "yolov5", "--test_input", "in.npz", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = run_main("model_deploy", "--mlir", "yolo.mlir", "--quantize", "F16", "--processor", "bm1684x",
                 "--model", "yolo.bmodel", "--test_input", "yolo_in_f32.npz", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "yolo_bm1684x_f16_tpu.mlir").read_text()
    assert 'loc("p3_f32")' in text and "tensor<1x1x200x7xf32>" in text
    tpu = np.load(tmp_path / "yolo_bm1684x_f16_tpu_outputs.npz")["yolo_post"]
    r = run_main("model_runner", "--input", "yolo_in_f32.npz", "--model", "yolo.bmodel", "--output", "bm.npz",
                 cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(np.load(tmp_path / "bm.npz")["yolo_post"], tpu)
    assert (tpu.reshape(-1, 7)[:, 2] > 0).sum() >= 1


def check_top_rows(tmp_path, res) -> None:
    """model_transform's Top rows (top.npz) against the reference's: image and class exactly, the
    rest within 1e-4."""
    top = np.load(tmp_path / "top.npz")["yolo_post"].reshape(-1, 7)
    want = np.array(expected_output(res, 1, 200))
    np.testing.assert_array_equal(top[:, :2], want[:, :2])
    np.testing.assert_allclose(top[:, 2:], want[:, 2:], rtol=1e-4, atol=1e-4)


def deploy_f32_rows(tmp_path) -> np.ndarray:
    """model_deploy F32 of yolo.mlir; the bmodel's rows (model_runner) within 1e-5 of the Tpu
    interpreter's, which are returned."""
    r = run_main("model_deploy", "--mlir", "yolo.mlir", "--quantize", "F32", "--processor", "bm1684x",
                 "--model", "yolo.bmodel", "--test_input", "yolo_in_f32.npz", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    tpu = np.load(tmp_path / "yolo_bm1684x_f32_tpu_outputs.npz")["yolo_post"].reshape(-1, 7)
    r = run_main("model_runner", "--input", "yolo_in_f32.npz", "--model", "yolo.bmodel", "--output", "bm.npz",
                 cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    bm = np.load(tmp_path / "bm.npz")["yolo_post"].reshape(-1, 7)
    np.testing.assert_array_equal(bm[:, :2], tpu[:, :2])
    np.testing.assert_allclose(bm[:, 2:], tpu[:, 2:], rtol=1e-5)
    return tpu


def test_yolov3_tiny_two_heads_through_model_transform_and_model_deploy(tmp_path):
    """yolov3_tiny: a 2-head model (stride 32 returned first); Top's rows against the reference fed
    onnxruntime's heads (widest first, the tiny anchors); the bmodel's rows (record 96 with two
    heads) within 1e-5 of the Tpu interpreter's."""
    yolo_onnx(tmp_path, seed=7, outputs=(("p5", 32), ("p4", 16)))
    r = run_main("model_transform", "--model_name", "yolo", "--model_def", "yolo.onnx", "--mlir", "yolo.mlir",
                 "--add_postprocess", "yolov3_tiny", "--test_input", "in.npz", "--test_result", "top.npz",
                 cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "2 compared" in r.stdout, r.stdout
    ref = np.load(tmp_path / "yolo_ref_outputs.npz")
    res = yolo_post([ref["p5"], ref["p4"]], YOLOV3_TINY_ANCHORS, 2, 64, 64, 0.5, 0.5, 200, "yolov3_tiny")
    assert res.suppressed >= 1 and res.below_threshold >= 1 and res.margin > 1e-4  # the cases this model is for
    check_top_rows(tmp_path, res)
    tpu = deploy_f32_rows(tmp_path)
    assert (tpu[:, 2] > 0).sum() >= 2


# TPU-MLIR's YOLOV3_ANCHORS triples (AddPostprocess.cpp), written here: the stride 8, 16 and 32 heads'.
V3_TRIPLES = ([10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119], [116, 90, 156, 198, 373, 326])


@pytest.mark.parametrize(("version", "outputs", "net", "triples", "seed"), [
    # yolov3 by stride: 20 is not a multiple of 8, triple 20 / 8 - 1 = 1; 40 is, head 1: triple 1
    # rows from the stride 20 head: its triple 0 would fail the test
    ("yolov3", (("p40", 40), ("p20", 20)), 80, (1, 1), 2),
    ("yolov5", (("p16", 16),), 64, (0,), 0),  # yolov5: its default triples in order, whatever the stride
])
def test_one_or_two_heads_take_tpu_mlirs_anchors(version, outputs, net, triples, seed, tmp_path):
    """yolov3/yolov5 with fewer than 3 heads: Top's rows against the reference fed onnxruntime's
    heads (widest first) and the anchors TPU-MLIR's rule gives (the triples named here), then
    model_deploy in F32: the bmodel (record 96 with 1 or 2 heads) within 1e-5 of the Tpu interpreter."""
    yolo_onnx(tmp_path, seed=seed, outputs=outputs, net=net)
    r = run_main("model_transform", "--model_name", "yolo", "--model_def", "yolo.onnx", "--mlir", "yolo.mlir",
                 "--add_postprocess", version, "--test_input", "in.npz", "--test_result", "top.npz", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    ref = np.load(tmp_path / "yolo_ref_outputs.npz")
    xs = [ref[name] for name, _ in sorted(outputs, key=lambda o: o[1])]  # widest grid first
    anchors = [a for t in triples for a in V3_TRIPLES[t]]
    res = yolo_post(xs, anchors, 2, net, net, 0.5, 0.5, 200, version)
    assert len(res.rows) >= 2 and res.margin > 1e-4  # boxes to compare, no decision float32 could flip
    check_top_rows(tmp_path, res)
    assert (deploy_f32_rows(tmp_path)[:, 2] > 0).sum() == len(res.rows)


@pytest.mark.parametrize(("third", "anchor12"), [((0, 1, 1), 0.0), ((0, 0, 0), 81.0)])
def test_a_yolov3_tiny_record_with_a_third_head_is_a_fault(third, anchor12):
    """Record 96's yolov3_tiny code reads two heads: a third head's fields or anchors that are not 0
    (what the code would leave unread) are a fault, not a silent two-head answer."""
    chip = CHIPS["tiny"]
    at = chip.gmem_start
    r = isa.BdcYoloDetection(at, at, third[0], at, 1, 1, 1, 1, 1, *third[1:], 2, 32, 32, 1,
                             isa.YOLO_VERSIONS["yolov3_tiny"], 0.5, 0.5, *[10.0] * 12, anchor12, *[0.0] * 5)
    with pytest.raises(Fault, match="yolov3_tiny reads 2 heads: the fields and anchors of the heads after them "
                                    "must be 0"):
        HANDLERS[isa.BdcYoloDetection](Memory(chip, 4096), r)


def test_a_record_with_a_head_after_an_absent_one_is_a_fault():
    """yolov3 and yolov5 records read the heads before the first 0 x 0 grid (1 to 3): a head after
    an absent one is a fault, not a silent one-head answer."""
    chip = CHIPS["tiny"]
    at = chip.gmem_start
    r = isa.BdcYoloDetection(at, 0, at, at, 1, 1, 1, 0, 0, 1, 1, 2, 32, 32, 1, isa.YOLO_VERSIONS["yolov3"], 0.5, 0.5,
                             *[10.0] * 6, *[0.0] * 12)
    with pytest.raises(Fault, match="yolov3 reads 1 heads: the fields and anchors of the heads after them must be 0"):
        HANDLERS[isa.BdcYoloDetection](Memory(chip, 4096), r)


def test_run_qtable_scores_the_heads_not_the_detection_rows(tmp_path):
    """run_qtable's search (Int8Search) scores --add_postprocess's heads: the rows yolo_post keeps jump where an
    int8 score crosses the threshold (a box kept or not), so their cosine says nothing of the heads, which INT8
    keeps close. The heads it scores are onnxruntime's on each sample."""
    yolo_onnx(tmp_path, seed=6)
    model = onnx.load(tmp_path / "yolo.onnx")
    r = run_main("model_transform", "--model_name", "yolo", "--model_def", "yolo.onnx", "--mlir", "yolo.mlir",
                 "--add_postprocess", "yolov5", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rng = np.random.default_rng(8)
    samples = [{"images": rng.uniform(0, 1, (1, 3, 64, 64)).astype(np.float32)} for _ in range(4)]
    (tmp_path / "cali").mkdir()
    for i, sample in enumerate(samples):
        np.savez(tmp_path / "cali" / f"{i}.npz", **sample)
    r = run_main("run_calibration", "yolo.mlir", "--dataset", "cali", "--input_num", "4", "--quiet", "-o", "cali_table",
                 cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    table = read_table(str(tmp_path / "cali_table"))
    search = Int8Search(str(tmp_path / "yolo.mlir"), table, "BM1684X", samples, asymmetric=False)
    for sample, scored in zip(samples, search.reference.runs, strict=True):
        want = onnx_inference(model, sample)
        assert set(scored) == set(want) == {"p3", "p4", "p5"}
        for name, value in want.items():
            np.testing.assert_allclose(scored[name], value, rtol=1e-4, atol=1e-4 * np.abs(value).max())
    assert search.cosine({}) > 0.99
    int8 = lowered_int8(load_module(tmp_path / "yolo.mlir"), table, "BM1684X", False)  # the whole module
    top = load_module(tmp_path / "yolo.mlir")
    rows_scoring = Scoring({"yolo_post": []}, {})
    rows = rows_scoring.cosine(run_samples(int8.module, int8.weights, samples)[0],
                               rows_scoring.reference(run_samples(top.module, top.weights, samples)[0]))
    assert rows < 0.99  # what the search scored before: 0.94 on these samples

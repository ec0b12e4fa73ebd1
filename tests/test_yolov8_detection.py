"""top.YoloDetection of version yolov8 (`--add-postprocess=type=yolov8|yolov11`) against a separately
written float64 loop (yolo_reference.yolov8_post: ultralytics' class choice, the per-class NMS):
a fixed head with planted boxes, a property over random heads (with forced runs), and
model_transform + model_deploy F32 on a tiny yolov8-shaped ONNX model."""

from __future__ import annotations

import numpy as np
import onnx
from hypothesis import assume
from hypothesis import strategies as st
from onnx import helper as onnx_helper

from tests.cli_support import run_main
from tests.feature_tally import FeatureTally, forced_runs, run_each
from tests.frontend_support import make_model
from tests.test_yolo_detection import run_text
from tests.yolo_reference import expected_output, yolov8_post
from tpudsl.backend.cmodel import arith_detection
from tpudsl.interp.kernel import KernelAttrs
from tpudsl.interp.kernels_detection import KERNELS


def v8_module(shape, keep_topk: int, nms: float = 0.5) -> str:
    t = f"tensor<{'x'.join(map(str, shape))}xf32>"
    out = f"tensor<1x1x{shape[0] * keep_topk}x7xf32>"
    return (f"module {{\n  func.func @main(%arg0: {t}) -> {out} {{\n"
            f'    %0 = "top.Input"(%arg0) : ({t}) -> {t} loc("head0")\n'
            f'    %y = "top.YoloDetection"(%0) {{anchors = [0.0], class_num = {shape[1] - 4} : i64, '
            f"keep_topk = {keep_topk} : i64, net_input_h = 64 : i64, net_input_w = 64 : i64, "
            f'nms_threshold = {nms} : f64, obj_threshold = 5.000000e-01 : f64, version = "yolov8"}} '
            f': ({t}) -> {out} loc("yolo_post")\n    return %y : {out}\n  }}\n}}\n')


def random_head(seed: int, batch: int, classes: int, boxes: int = 16) -> np.ndarray:
    """Boxes of centre 16..48 and side 4..32 pixels (so that many overlap), scores in (0, 1)."""
    rng = np.random.default_rng(seed)
    head = np.empty((batch, 4 + classes, boxes), np.float32)
    head[:, :2] = rng.uniform(16, 48, size=(batch, 2, boxes))
    head[:, 2:4] = rng.uniform(4, 32, size=(batch, 2, boxes))
    head[:, 4:] = rng.uniform(0, 1, size=(batch, classes, boxes))
    return head


def plant_boxes(head: np.ndarray) -> None:
    """In every image: boxes 0 and 1 are sure class-0 neighbours of IoU 0.6 (20 x 20, centres 5 apart:
    300 / 500), so one of them or an earlier box is suppressed; box 2's scores
    are all at most 0.4 (below the threshold); box 3 a sure box of the last class far away, with its
    class-0 score higher than the threshold but lower than its best (the class choice)."""
    classes = head.shape[1] - 4
    head[:, :4, 0], head[:, :4, 1] = (2, 2, 20, 20), (7, 2, 20, 20)
    head[:, 4:, 0:2] = 0.1
    head[:, 4, 0:2] = (0.95, 0.9)
    head[:, 4:, 2] = np.linspace(0.1, 0.4, classes)
    head[:, :4, 3] = (62, 62, 3, 3)
    head[:, 4:, 3] = np.linspace(0.6, 0.97, classes)


def check_rows(out: np.ndarray, res, images: int, keep_topk: int, tol: float = 2e-6) -> None:
    want = np.array(expected_output(res, images, keep_topk))
    got = out.reshape(-1, 7)
    np.testing.assert_array_equal(got[:, :2], want[:, :2])  # image and class, exactly; so the count
    np.testing.assert_allclose(got[:, 2:], want[:, 2:], rtol=tol, atol=tol)


def test_fixed_head_picks_the_best_class_suppresses_thresholds_and_truncates():
    head = random_head(seed=5, batch=1, classes=3, boxes=64)
    plant_boxes(head)
    res = yolov8_post(head, 0.5, 0.5, 6)
    assert res.suppressed >= 3 and res.below_threshold >= 3 and res.truncated >= 1  # the cases this test is for
    assert res.margin > 1e-4
    out = run_text(v8_module(head.shape, 6), {"head0": head})
    check_rows(out, res, 1, 6)
    # Box 3 under its best class (2) only, not under class 0 whose score also passes.
    rows = out.reshape(-1, 7)
    assert [r[1] for r in rows if (r[3], r[4]) == (62, 62)] == [2]


FEATURES = ("suppressed", "below_threshold", "truncated", "batch2")


@st.composite
def cases(draw, planted=False, batch=None, keep_topk=None):
    return dict(seed=draw(st.integers(0, 2**32 - 1)), batch=batch or draw(st.sampled_from((1, 2))),
                classes=draw(st.integers(2 if planted else 1, 3)), keep_topk=keep_topk or draw(st.integers(1, 8)),
                nms=draw(st.sampled_from((0.2, 0.35, 0.5))), planted=planted)


FORCED = [(cases(planted=True), ("suppressed", "below_threshold")), (cases(batch=2), ("batch2",)),
          (cases(planted=True, keep_topk=1), ("truncated",))]
EXAMPLES, EACH = 40, 6


def test_random_v8_heads_match_the_reference():
    tally = FeatureTally(FEATURES)

    def check(case, forced):
        head = random_head(case["seed"], case["batch"], case["classes"])
        if case["planted"]:
            plant_boxes(head)
        res = yolov8_post(head, 0.5, case["nms"], case["keep_topk"])
        assume(res.margin > 1e-4)  # no IoU float32 rounding could put on the other side of the threshold
        attrs = KernelAttrs({"anchors": [0.0], "class_num": case["classes"], "keep_topk": case["keep_topk"],
                             "net_input_h": 64, "net_input_w": 64, "nms_threshold": case["nms"],
                             "obj_threshold": 0.5, "version": "yolov8"},
                            out_shapes=[(1, 1, case["batch"] * case["keep_topk"], 7)])
        out = KERNELS["top.YoloDetection"].run([head], attrs)
        check_rows(out, res, case["batch"], case["keep_topk"])
        # The cmodel's record arithmetic, written separately, gives the kernel's rows bit for bit.
        cmodel = arith_detection.yolov8_detection(head, 0.5, case["nms"], case["keep_topk"])
        np.testing.assert_array_equal(cmodel, out.reshape(-1, 7))
        seen = {name for name, happened in (
            ("suppressed", res.suppressed), ("below_threshold", res.below_threshold), ("truncated", res.truncated),
            ("batch2", case["batch"] == 2)) if happened}
        assert seen.issuperset(forced), f"a forced example without {set(forced) - seen}: {case}"
        tally.record(seen)

    run_each(check, forced_runs(cases(), FORCED, EXAMPLES, EACH))
    tally.assert_each_in(EACH / EXAMPLES)


def yolov8_onnx(tmp_path) -> None:
    """A tiny yolov8 export: an 8x8-stride Conv of a 64x64 image as 64 boxes of 4 + 3 rows; the
    boxes sigmoid-ed and scaled to pixels (centre 0..64, side 0..32), the class scores sigmoid-ed,
    concatenated as ultralytics' head is: one output [1, 7, 64]. Small filters and zero biases
    cluster the boxes (they overlap: suppression); zero-mean class filters spread the scores around 0.5."""
    rng = np.random.default_rng(8)
    w = rng.normal(size=(7, 3, 8, 8)) * 0.02
    w[4:] = (w[4:] - w[4:].mean(axis=(1, 2, 3), keepdims=True)) * 25  # zero-mean: scores around 0.5
    w = w.astype(np.float32)
    init = {"w": w, "b": np.zeros(7, np.float32), "shape": np.array([1, 7, 64], np.int64),
            "scale": np.array([64, 64, 32, 32], np.float32).reshape(1, 4, 1),
            "s0": np.array([0], np.int64), "s4": np.array([4], np.int64), "s7": np.array([7], np.int64),
            "ax": np.array([1], np.int64)}
    node = onnx_helper.make_node
    nodes = [node("Conv", ["images", "w", "b"], ["conv"], kernel_shape=[8, 8], strides=[8, 8]),
             node("Reshape", ["conv", "shape"], ["flat"]),
             node("Slice", ["flat", "s0", "s4", "ax"], ["box_raw"]), node("Sigmoid", ["box_raw"], ["box_unit"]),
             node("Mul", ["box_unit", "scale"], ["dbox"]),
             node("Slice", ["flat", "s4", "s7", "ax"], ["cls_raw"]), node("Sigmoid", ["cls_raw"], ["cls"]),
             node("Concat", ["dbox", "cls"], ["output0"], axis=1)]
    onnx.save(make_model(nodes, {"images": [1, 3, 64, 64]}, ["output0"], init), tmp_path / "yolo8.onnx")
    np.savez(tmp_path / "in.npz", images=rng.uniform(0, 1, size=(1, 3, 64, 64)).astype(np.float32))


def test_model_transform_and_deploy_yolov8(tmp_path):
    """model_transform's Top rows against the reference fed onnxruntime's head; model_deploy F32:
    the Tpu rows equal Top's, the bmodel's (cmodel record 97) the Tpu interpreter's within 1e-5."""
    yolov8_onnx(tmp_path)
    r = run_main("model_transform", "--model_name", "yolo8", "--model_def", "yolo8.onnx", "--mlir", "yolo8.mlir",
                 "--add_postprocess", "yolov8", "--test_input", "in.npz", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "only in target (1): yolo_post" in r.stdout and "npz compare PASSED" in r.stdout, r.stdout
    assert 'module.postprocess = "yolov8"' in (tmp_path / "yolo8.mlir").read_text()
    head = np.load(tmp_path / "yolo8_ref_outputs.npz")["output0"]
    res = yolov8_post(head, 0.5, 0.5, 200)
    assert res.suppressed >= 3 and res.below_threshold >= 3 and len(res.rows) >= 2 and res.margin > 1e-4
    top = np.load(tmp_path / "yolo8_top_outputs.npz")["yolo_post"]
    check_rows(top, res, 1, 200, tol=1e-4)
    r = run_main("model_deploy", "--mlir", "yolo8.mlir", "--quantize", "F32", "--processor", "bm1684x",
                 "--model", "yolo8.bmodel", "--test_input", "yolo8_in_f32.npz", "--test_reference",
                 "yolo8_top_outputs.npz", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    tpu = np.load(tmp_path / "yolo8_bm1684x_f32_tpu_outputs.npz")["yolo_post"]
    np.testing.assert_array_equal(tpu, top)
    r = run_main("model_runner", "--input", "yolo8_in_f32.npz", "--model", "yolo8.bmodel", "--output", "bm.npz",
                 cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    bm = np.load(tmp_path / "bm.npz")["yolo_post"].reshape(-1, 7)
    np.testing.assert_array_equal(bm[:, :2], tpu.reshape(-1, 7)[:, :2])
    np.testing.assert_allclose(bm[:, 2:], tpu.reshape(-1, 7)[:, 2:], rtol=1e-5, atol=1e-5)

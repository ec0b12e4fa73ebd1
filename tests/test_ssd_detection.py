"""top.DetectionOutput (SSD's post-processing, `--add_postprocess ssd`) against a separately written
float64 reference of Caffe's DetectionOutput (decode by the priors' variances, per-class top_k and
greedy NMS, keep_top_k across classes), here in loops; a property over random priors, offsets and
scores (forced runs whose planted boxes make each case happen in every example), the cmodel's own
arithmetic bit-exact to the kernel; model_transform and model_deploy (F32, INT8) on a tiny SSD."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace

import numpy as np
import onnx
from hypothesis import assume
from hypothesis import strategies as st

from tests.cli_support import run_main
from tests.feature_tally import FeatureTally, forced_runs, run_each
from tests.models.ssd import CLASSES, tiny_ssd
from tpudsl.backend.cmodel import arith_ssd
from tpudsl.interp.kernel import KernelAttrs
from tpudsl.interp.kernels_ssd import KERNELS


@dataclass
class Reference:
    rows: list[tuple] = field(default_factory=list)  # (image, label, score, xmin, ymin, xmax, ymax)
    suppressed: int = 0  # candidates NMS dropped
    below_threshold: int = 0  # scores of a non-background class not above the confidence threshold
    cut_by_top_k: bool = False  # a class had more candidates than top_k
    truncated: bool = False  # an image kept more than keep_top_k
    margin: float = math.inf  # the closest any decision came to its threshold


def _iou(a, b) -> float:
    """Caffe's JaccardOverlap: 0 for boxes apart, else intersection / union (an inverted box's size 0)."""
    if b[0] > a[2] or b[2] < a[0] or b[1] > a[3] or b[3] < a[1]:
        return 0.0
    inter = (min(a[2], b[2]) - max(a[0], b[0])) * (min(a[3], b[3]) - max(a[1], b[1]))
    size = [(x[2] - x[0]) * (x[3] - x[1]) if x[2] >= x[0] and x[3] >= x[1] else 0.0 for x in (a, b)]
    return inter / (size[0] + size[1] - inter)


def reference(loc, conf, priorbox, background, conf_threshold, nms, top_k, keep_top_k) -> Reference:
    """loc [N, P * 4], conf [N, P * C], priorbox [1, 2, P * 4], in float64 loops."""
    res = Reference()
    images, priors = loc.shape[0], priorbox.shape[2] // 4
    corners, variance = priorbox[0, 0].reshape(priors, 4), priorbox[0, 1].reshape(priors, 4)
    for image in range(images):
        offsets, scores = loc[image].reshape(priors, 4), conf[image].reshape(priors, -1)
        boxes = []
        for p in range(priors):
            x0, y0, x1, y1 = (float(v) for v in corners[p])
            v, d = [float(x) for x in variance[p]], [float(x) for x in offsets[p]]
            cx, cy = v[0] * d[0] * (x1 - x0) + (x0 + x1) / 2, v[1] * d[1] * (y1 - y0) + (y0 + y1) / 2
            w, h = math.exp(v[2] * d[2]) * (x1 - x0), math.exp(v[3] * d[3]) * (y1 - y0)
            boxes.append((cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2))
        kept = []  # (label, score, prior)
        for label in range(scores.shape[1]):
            if label == background:
                continue
            candidates = []
            for p in range(priors):
                s = float(scores[p, label])
                res.margin = min(res.margin, abs(s - conf_threshold))
                if s > conf_threshold:
                    candidates.append((s, p))
                else:
                    res.below_threshold += 1
            candidates.sort(key=lambda c: -c[0])  # stable: equal scores in prior order
            res.cut_by_top_k |= len(candidates) > top_k
            chosen: list[tuple[float, int]] = []
            for s, p in candidates[:top_k]:
                ious = [_iou(boxes[p], boxes[q]) for _, q in chosen]
                res.margin = min([res.margin, *(abs(iou - nms) for iou in ious)])
                if any(iou > nms for iou in ious):
                    res.suppressed += 1
                else:
                    chosen.append((s, p))
            kept += [(label, s, p) for s, p in chosen]
        if len(kept) > keep_top_k:
            res.truncated = True
            best = sorted(kept, key=lambda k: -k[1])[:keep_top_k]
            kept = [k for k in kept if k in best]
        res.rows += [(image, label, s, *boxes[p]) for label, s, p in kept]
    return res


def expected_output(res: Reference, images: int, keep_top_k: int) -> np.ndarray:
    """TPU-MLIR's result: the rows, then -1; no row at all: one row per image, its number then -1."""
    out = np.full((images * keep_top_k, 7), -1.0)
    if res.rows:
        out[: len(res.rows)] = res.rows
    else:
        out[:images, 0] = range(images)
    return out


def check_rows(got: np.ndarray, want: np.ndarray, score_tolerance: float = 0.0) -> None:
    """Image and label exactly; the score (an input value) exactly unless the inputs were not the
    reference's (Top's conf against onnxruntime's: ulps apart); the corners to float32's error."""
    got = got.reshape(-1, 7)
    np.testing.assert_array_equal(got[:, :2], want[:, :2])
    np.testing.assert_allclose(got[:, 2], want[:, 2], rtol=score_tolerance, atol=0)
    np.testing.assert_allclose(got[:, 3:], want[:, 3:], rtol=1e-5, atol=1e-5)


def attrs(classes, images, background=0, conf_threshold=0.05, nms=0.5, top_k=200, keep_top_k=200) -> KernelAttrs:
    return KernelAttrs({"num_classes": classes, "background_label_id": background, "nms_threshold": nms,
                        "top_k": top_k, "code_type": "CENTER_SIZE", "keep_top_k": keep_top_k,
                        "confidence_threshold": conf_threshold, "share_location": True,
                        "variance_encoded_in_target": 0.0, "eta": 1.0},
                       out_shapes=[(1, 1, images * keep_top_k, 7)])


def test_no_box_gives_one_row_per_image_then_minus_one():
    priorbox = np.array([[[0, 0, 0.5, 0.5, 0.5, 0.5, 1, 1], [0.1, 0.1, 0.2, 0.2] * 2]], np.float32)
    loc, conf = np.zeros((2, 8), np.float32), np.full((2, 4), 0.01, np.float32)  # every score below 0.05
    out = KERNELS["top.DetectionOutput"].run([loc, conf, priorbox], attrs(2, 2, keep_top_k=3)).reshape(-1, 7)
    want = np.full((6, 7), -1.0)
    want[:2, 0] = [0, 1]
    np.testing.assert_array_equal(out, want)


FEATURES = ("suppressed", "below_threshold", "truncated", "cut_by_top_k", "batch2")


@st.composite
def cases(draw, batch=None, planted=False, keep_top_k=None, top_k=None):
    priors = draw(st.integers(5, 14))
    return dict(seed=draw(st.integers(0, 2**32 - 1)), batch=batch or draw(st.sampled_from((1, 2))), priors=priors,
                classes=draw(st.integers(2, 4)), background=draw(st.integers(0, 1)),
                top_k=top_k or draw(st.integers(3 if planted else 1, priors + 2)),
                keep_top_k=keep_top_k or draw(st.integers(1, 12)),
                nms=draw(st.sampled_from((0.3, 0.45, 0.6))), conf_threshold=draw(st.sampled_from((0.05, 0.2, 0.4))),
                planted=planted)


def inputs(case) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Priors of side 0.1 to 0.3 around three centres in [0.4, 0.6] (so that they overlap), offsets
    N(0, 1), softmax-ed scores. `planted`: in every image priors 0 and 1 are the same box with the
    same offsets, scoring 0.95 and 0.9 in the first class past the background (IoU 1: one is
    suppressed), prior 2 scores 0 there (below any threshold), prior 3 is a far, tiny box scoring
    0.85 there (kept: two boxes at least), the others at most 0.8 (so with top_k >= 3 those three
    are its first candidates)."""
    rng = np.random.default_rng(case["seed"])
    n, p, c = case["batch"], case["priors"], case["classes"]
    centre = rng.uniform(0.4, 0.6, (3, 2))[rng.integers(0, 3, p)] + rng.uniform(-0.05, 0.05, (p, 2))
    half = rng.uniform(0.05, 0.15, (p, 2))
    corners = np.concatenate([centre - half, centre + half], axis=1)
    loc = rng.normal(size=(n, p, 4))
    logits = rng.normal(size=(n, p, c)) * 2
    conf = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)
    if case["planted"]:
        label = 1 if case["background"] == 0 else 0
        corners[1], corners[3] = corners[0], (0.0, 0.0, 0.05, 0.05)
        loc[:, 1], loc[:, 3] = loc[:, 0], 0
        conf[:, 4:, label] *= 0.8
        conf[:, :4, label] = (0.95, 0.9, 0.0, 0.85)
    variances = np.tile((0.1, 0.1, 0.2, 0.2), (p, 1))
    priorbox = np.stack([corners.reshape(-1), variances.reshape(-1)])[None]
    return loc.reshape(n, -1).astype(np.float32), conf.reshape(n, -1).astype(np.float32), priorbox.astype(np.float32)


FORCED = [(cases(planted=True), ("suppressed", "below_threshold")), (cases(batch=2), ("batch2",)),
          (cases(planted=True, keep_top_k=1), ("truncated",)), (cases(planted=True, top_k=1), ("cut_by_top_k",))]
EXAMPLES, EACH = 40, 5


def test_random_inputs_match_the_reference():
    tally = FeatureTally(FEATURES)

    def check(case, forced):
        loc, conf, priorbox = inputs(case)
        keys = ("background", "conf_threshold", "nms", "top_k", "keep_top_k")
        res = reference(loc, conf, priorbox, *(case[k] for k in keys))
        assume(res.margin > 1e-4)  # no decision float32 rounding could flip
        a = attrs(case["classes"], case["batch"], *(case[k] for k in keys))
        out = KERNELS["top.DetectionOutput"].run([loc, conf, priorbox], a)
        check_rows(out, expected_output(res, case["batch"], case["keep_top_k"]))
        # The cmodel's record arithmetic, written separately, gives the kernel's rows bit for bit.
        n, p = case["batch"], case["priors"]
        cmodel = arith_ssd.detection_output(loc.reshape(n, p, 4), conf.reshape(n, p, -1), priorbox.reshape(2, p, 4),
                                            background=case["background"], top_k=case["top_k"],
                                            keep_top_k=case["keep_top_k"], nms=case["nms"],
                                            conf_threshold=case["conf_threshold"])
        np.testing.assert_array_equal(cmodel, out.reshape(-1, 7))
        seen = {name for name, happened in (
            ("suppressed", res.suppressed), ("below_threshold", res.below_threshold), ("truncated", res.truncated),
            ("cut_by_top_k", res.cut_by_top_k), ("batch2", case["batch"] == 2)) if happened}
        assert seen.issuperset(forced), f"a forced example without {set(forced) - seen}: {case}"
        tally.record(seen)

    run_each(check, forced_runs(cases(), FORCED, EXAMPLES, EACH))
    tally.assert_each_in(EACH / EXAMPLES)


SSD_OUTPUTS = ("mbox_loc", "mbox_conf_flatten", "mbox_priorbox")


def transformed_ssd(tmp_path) -> Reference:
    """model_transform --add_postprocess ssd of the tiny SSD (its onnxruntime outputs checked by
    name, ssd_post against the reference fed those outputs); the reference's run."""
    onnx.save(tiny_ssd(seed=3), tmp_path / "ssd.onnx")
    image = np.random.default_rng(3).uniform(0, 1, size=(1, 3, 16, 16)).astype(np.float32)
    np.savez(tmp_path / "in.npz", images=image)
    r = run_main("model_transform", "--model_name", "ssd", "--model_def", "ssd.onnx", "--mlir", "ssd.mlir",
                 "--add_postprocess", "ssd", "--test_input", "in.npz", "--test_result", "top.npz", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    # loc and conf are compared with onnxruntime by name; ssd_post has no onnxruntime counterpart and
    # the priors became a weight.
    assert "only in target (1): ssd_post" in r.stdout and "npz compare PASSED" in r.stdout, r.stdout
    text = (tmp_path / "ssd.mlir").read_text()
    assert 'module.postprocess = "ssd"' in text and f"num_classes = {CLASSES} : i64" in text
    ref = np.load(tmp_path / "ssd_ref_outputs.npz")
    res = reference(*(ref[name] for name in SSD_OUTPUTS), 0, 0.05, 0.5, 200, 200)
    assert res.suppressed >= 5 and len(res.rows) >= 5 and res.margin > 1e-4  # the cases this model is for
    check_rows(np.load(tmp_path / "top.npz")["ssd_post"], expected_output(res, 1, 200), score_tolerance=1e-6)
    return res


def test_model_deploy_f32_and_int8_pass_the_bmodel_check(tmp_path):
    """F32 and INT8 (the detection F32 in both, as TPU-MLIR lowers it): F32's Tpu interpreter rows
    against Top's, and the bmodel check (the cmodel's rows against the Tpu interpreter's) passes;
    INT8's cmodel rows equal the Tpu interpreter's bit for bit; the timeline names record 103."""
    res = transformed_ssd(tmp_path)
    r = run_main("model_deploy", "--mlir", "ssd.mlir", "--quantize", "F32", "--processor", "bm1684x",
                 "--model", "ssd.bmodel", "--test_input", "ssd_in_f32.npz", "--test_reference", "top.npz",
                 cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "bmodel check passed" in r.stderr
    # The Tpu Softmax's conf is Top's to ulps: the same boxes, labels and order, scores and corners close.
    tpu = np.load(tmp_path / "ssd_bm1684x_f32_tpu_outputs.npz")["ssd_post"].reshape(-1, 7)
    top = np.load(tmp_path / "top.npz")["ssd_post"].reshape(-1, 7)
    np.testing.assert_array_equal(tpu[:, :2], top[:, :2])
    np.testing.assert_allclose(tpu[:, 2:], top[:, 2:], rtol=1e-5, atol=1e-6)
    r = run_main("model_tool", "--timeline", "ssd.bmodel", "-o", "ssd.svg", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert re.search(r"<title>ssd_post: instruction \d+ BdcDetectionOutput, cycles", (tmp_path / "ssd.svg").read_text())
    (tmp_path / "cali").mkdir()
    np.savez(tmp_path / "cali" / "in.npz", images=np.load(tmp_path / "in.npz")["images"])
    r = run_main("run_calibration", "ssd.mlir", "--dataset", "cali", "--input_num", "1", "-o", "ssd_cali.txt",
                 cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = run_main("model_deploy", "--mlir", "ssd.mlir", "--quantize", "INT8", "--calibration_table", "ssd_cali.txt",
                 "--processor", "bm1684x", "--model", "ssd_int8.bmodel", "--test_input", "ssd_in_f32.npz",
                 cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "bmodel check passed: 1 outputs of the cmodel equal the Tpu interpreter's (INT8, bit-exact)" in r.stderr
    assert '"tpu.DetectionOutput"' in (tmp_path / "ssd_bm1684x_int8_sym_final.mlir").read_text()
    r = run_main("model_runner", "--input", "ssd_in_f32.npz", "--model", "ssd_int8.bmodel", "--output", "bm.npz",
                 cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = np.load(tmp_path / "bm.npz")["ssd_post"].reshape(-1, 7)
    np.testing.assert_array_equal(rows, np.load(tmp_path / "ssd_bm1684x_int8_sym_tpu_outputs.npz")["ssd_post"]
                                  .reshape(-1, 7))
    assert (rows[:, 1] >= 1).sum() >= len(res.rows) // 2  # INT8's loc and conf still detect



def test_detection_records_with_a_threshold_that_is_no_threshold_are_faults():
    """Records 103, 96 and 97 with an NMS threshold outside [0, 1] or NaN (no box would be
    suppressed: every comparison with NaN is false), or record 103 with a NaN confidence threshold
    (no score would pass), are a fault naming the field, not rows computed silently; 0.5 runs."""
    import pytest

    from tpudsl.backend import isa
    from tpudsl.backend.chips import chip_named
    from tpudsl.backend.cmodel.engine import execute
    from tpudsl.backend.cmodel.memory import Memory
    from tpudsl.ir.diagnostics import TpudslError

    chip = chip_named("tiny")
    at = [chip.gmem_start + k * 1024 for k in range(4)]  # loc, conf, priors, rows: zeros, no score passes
    ssd = isa.BdcDetectionOutput(*at, 1, 2, 2, 0, 2, 2, 0.5, 0.05)
    v8 = isa.BdcYolov8Detection(at[0], at[3], 1, 1, 2, 2, 0.5, 0.5)
    for record in (ssd, v8):
        execute(Memory(chip, 4096), [record], ["post"])
    for record, message in [(replace(ssd, nms=math.nan), "nms nan is not an IoU threshold in [0, 1]"),
                            (replace(ssd, nms=1.5), "nms 1.5 is not an IoU threshold in [0, 1]"),
                            (replace(ssd, conf_threshold=math.nan), "conf_threshold nan is not a score threshold"),
                            (replace(v8, nms=math.nan), "nms nan is not an IoU threshold in [0, 1]")]:
        with pytest.raises(TpudslError, match=re.escape(f"cmodel: bdc: {message} at instruction 0 (post)")):
            execute(Memory(chip, 4096), [record], ["post"])

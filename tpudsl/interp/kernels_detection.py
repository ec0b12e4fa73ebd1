"""Detection post-processing kernels: top.YoloDetection, as TPU-MLIR's YoloDetectionFunc_v2
computes it (GenericCpuFunc.cpp), and yolov8's decoded head with the best class of each box
(ultralytics' rule, not Yolov8DetectionFunc's row per class; docs/tpuc-opt.md, "--add-postprocess",
has the rules).

The decode is vectorised over every cell and box of a head; the greedy NMS loops over the boxes
it keeps. Arithmetic is float32 where TPU-MLIR's is (sigmoid, IoU), and float64 rounded once to
float32 where TPU-MLIR mixes in its double attributes (box centres, anchor scaling)."""

from __future__ import annotations

import numpy as np

from tpudsl.dialects.geometry.yolo import BOX_FIELDS, ROW, V8_BOX_FIELDS, head_order
from tpudsl.interp.kernel import Array, Inputs, Kernel, KernelAttrs

F32 = np.float32


def _sigmoid(x: Array) -> Array:
    return F32(1) / (F32(1) + np.exp(-x))  # exp(-x) = inf for a very negative x: sigmoid 0, as in C


def _decode_head(head: Array, anchors: Array, a: KernelAttrs) -> tuple[Array, ...]:
    """Every box of one head [N, B * (5 + classes), H, W], in TPU-MLIR's order (cell row, cell
    column, box): its objectness logit, score, class and (x, y, w, h), each [N, H * W * B]."""
    n, _, h, w = head.shape
    boxes = len(anchors)
    fields = head.reshape(n, boxes, BOX_FIELDS + a["class_num"], h, w).transpose(0, 3, 4, 1, 2)  # N, H, W, B, F
    logits = fields[..., BOX_FIELDS:]
    score = _sigmoid(fields[..., 4]) * _sigmoid(logits.max(axis=-1))
    cls = logits.argmax(axis=-1)  # the first of equal maxima, as std::max_element
    cy, cx = np.meshgrid(np.arange(h, dtype=F32), np.arange(w, dtype=F32), indexing="ij")
    cx, cy = cx[None, :, :, None], cy[None, :, :, None]
    net_w, net_h = a["net_input_w"], a["net_input_h"]
    if a["version"] == "yolov5":
        sx, sy, sw, sh = (_sigmoid(fields[..., i]) * F32(2) for i in range(4))
        x = ((cx + sx).astype(np.float64) - 0.5) * net_w / w
        y = ((cy + sy).astype(np.float64) - 0.5) * net_h / h
        bw = (sw * sw).astype(np.float64) * anchors[:, 0]
        bh = (sh * sh).astype(np.float64) * anchors[:, 1]
    else:  # yolov3 and yolov3_tiny: centres and sizes relative to the image
        x = (cx + _sigmoid(fields[..., 0])) / F32(w)
        y = (cy + _sigmoid(fields[..., 1])) / F32(h)
        bw = np.exp(fields[..., 2]).astype(np.float64) * anchors[:, 0] / net_w
        bh = np.exp(fields[..., 3]).astype(np.float64) * anchors[:, 1] / net_h
    flat = (fields[..., 4], score, cls, *(np.asarray(v, F32) for v in (x, y, bw, bh)))
    return tuple(v.reshape(n, -1) for v in flat)


def _iou(box: Array, others: Array) -> Array:
    """IoU of one (x, y, w, h) box with each of `others` [K, 4], in float32: a negative overlap
    on either axis is no intersection; union = area + area - intersection."""
    lo = np.maximum(box[:2] - box[2:] / F32(2), others[:, :2] - others[:, 2:] / F32(2))
    hi = np.minimum(box[:2] + box[2:] / F32(2), others[:, :2] + others[:, 2:] / F32(2))
    side = hi - lo
    inter = np.where((side >= 0).all(axis=1), side[:, 0] * side[:, 1], F32(0))
    return inter / (box[2] * box[3] + others[:, 2] * others[:, 3] - inter)


def _nms(boxes: Array, cls: Array, threshold: float) -> list[int]:
    """Greedy NMS over boxes sorted best first: a box is dropped when a kept box of its class
    overlaps it with IoU >= threshold."""
    alive = np.ones(len(boxes), bool)
    kept = []
    for i in range(len(boxes)):
        if not alive[i]:
            continue
        kept.append(i)
        later = np.flatnonzero(alive[i + 1 :] & (cls[i + 1 :] == cls[i])) + i + 1
        if len(later):
            alive[later[_iou(boxes[i], boxes[later]) >= threshold]] = False
    return kept


def _anchored_candidates(ins: Inputs, a: KernelAttrs) -> tuple[Array, ...]:
    """yolov3/yolov3_tiny/yolov5: every box of the heads (widest first), whether it passes (objectness logit
    and score both above the threshold), its score, class and (x, y, w, h), each [N, boxes]."""
    heads = [ins[i] for i in head_order([x.shape for x in ins])]
    anchors = np.asarray(a["anchors"], np.float64).reshape(len(heads), -1, 2)
    parts = [_decode_head(np.asarray(x, F32), anchors[k], a) for k, x in enumerate(heads)]
    logit, score, cls, *xywh = (np.concatenate(p, axis=1) for p in zip(*parts, strict=True))
    threshold = a["obj_threshold"]
    logit_threshold = F32(-np.log(1.0 / threshold - 1.0))  # a float in TPU-MLIR
    return (logit > logit_threshold) & (score.astype(np.float64) > threshold), score, cls, *xywh


def _v8_candidates(ins: Inputs, a: KernelAttrs) -> tuple[Array, ...]:
    """yolov8: the decoded head [N, 4 + classes, boxes]; a box's class is its best (the first of
    equal maxima, ultralytics' argmax), and it passes when that score is above the threshold."""
    head = np.asarray(ins[0], F32)
    scores = head[:, V8_BOX_FIELDS:]
    score = scores.max(axis=1)
    xywh = head[:, :V8_BOX_FIELDS].transpose(1, 0, 2)
    return score.astype(np.float64) > a["obj_threshold"], score, scores.argmax(axis=1), *xywh


def _yolo_detection(ins: Inputs, a: KernelAttrs) -> Array:
    candidates = _v8_candidates if a["version"] == "yolov8" else _anchored_candidates
    passed, score, cls, *xywh = candidates(ins, a)
    out = np.zeros(a.out_shapes[0], F32).reshape(-1, ROW)
    rows = []
    for image in range(passed.shape[0]):
        found = np.flatnonzero(passed[image])
        found = found[np.argsort(-score[image, found], kind="stable")]
        boxes = np.stack([v[image, found] for v in xywh], axis=1)
        for i in _nms(boxes, cls[image, found], a["nms_threshold"])[: a["keep_topk"]]:
            rows.append((image, cls[image, found[i]], score[image, found[i]], *boxes[i]))
    if rows:
        out[: len(rows)] = rows
    else:  # TPU-MLIR's "fake result" row per image
        out[: passed.shape[0]] = -1
        out[: passed.shape[0], 0] = np.arange(passed.shape[0])
    return out.reshape(a.out_shapes[0])


KERNELS = {"top.YoloDetection": Kernel(_yolo_detection)}

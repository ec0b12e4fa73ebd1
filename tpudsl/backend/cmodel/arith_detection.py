"""The cmodel's arithmetic of BdcYoloDetection (opcode 96), written from the record's definition
(isa.py) and docs/tpuc-opt.md's "--add-postprocess" rules, never imported from the interpreter:
every box is decoded as a row of one flat list (head widest first, cell row, cell column, box; or
yolov8's decoded boxes in order), then each image's boxes above the threshold are ordered by score
and suppressed greedily per class."""

from __future__ import annotations

import numpy as np

from tpudsl.backend.cmodel.arith_extra import sigmoid

F32 = np.float32
ROW = 7  # image, class, score, x, y, w, h


def _boxes(head: np.ndarray, anchors: np.ndarray, version: str, net_h: int, net_w: int, classes: int):
    """One head (n, 3 (5 + classes), gh, gw) as per-image rows in (cell row, cell column, box) order:
    objectness logit, score, class, x, y, w, h."""
    n, _, gh, gw = head.shape
    t = head.reshape(n, 3, 5 + classes, gh * gw).transpose(0, 2, 3, 1).reshape(n, 5 + classes, gh * gw * 3)
    cell = np.repeat(np.arange(gh * gw), 3)
    col, row = (cell % gw).astype(F32), (cell // gw).astype(F32)
    aw, ah = np.tile(anchors[:, 0], gh * gw), np.tile(anchors[:, 1], gh * gw)
    best = t[:, 5:].max(axis=1)
    score = sigmoid(t[:, 4]) * sigmoid(best)
    cls = np.argmax(t[:, 5:], axis=1)  # ties: the lowest class
    if version == "yolov5":
        two = [sigmoid(t[:, i]) * F32(2) for i in range(4)]
        x = ((col + two[0]).astype(np.float64) - 0.5) * net_w / gw
        y = ((row + two[1]).astype(np.float64) - 0.5) * net_h / gh
        w = (two[2] * two[2]).astype(np.float64) * aw
        h = (two[3] * two[3]).astype(np.float64) * ah
    else:  # yolov3 and yolov3_tiny
        x = (col + sigmoid(t[:, 0])) / F32(gw)
        y = (row + sigmoid(t[:, 1])) / F32(gh)
        w = np.exp(t[:, 2]).astype(np.float64) * aw / net_w
        h = np.exp(t[:, 3]).astype(np.float64) * ah / net_h
    return t[:, 4], score, cls, np.stack([np.asarray(v, F32) for v in (x, y, w, h)], axis=-1)


def _overlap(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU in float32 of box a (x, y, w, h by its centre) with each box of b."""
    half_a, half_b = a[2:] / F32(2), b[:, 2:] / F32(2)
    extent = np.minimum(a[:2] + half_a, b[:, :2] + half_b) - np.maximum(a[:2] - half_a, b[:, :2] - half_b)
    inter = extent[:, 0] * extent[:, 1]
    inter = np.where((extent[:, 0] < 0) | (extent[:, 1] < 0), F32(0), inter)
    return inter / (a[2] * a[3] + b[:, 2] * b[:, 3] - inter)


def yolo_detection(heads: list[np.ndarray], anchors: np.ndarray, version: str, net_h: int, net_w: int,
                   classes: int, obj: float, nms: float, keep_topk: int) -> np.ndarray:
    """The (n keep_topk, 7) f32 result; heads widest first, anchors (heads, 3, 2)."""
    parts = [_boxes(x, anchors[k], version, net_h, net_w, classes) for k, x in enumerate(heads)]
    logit, score, cls, xywh = (np.concatenate(p, axis=1) for p in zip(*parts, strict=True))
    gate = F32(-np.log(1.0 / obj - 1.0))
    return _kept_rows((logit > gate) & (score.astype(np.float64) > obj), score, cls, xywh, nms, keep_topk)


def yolov8_detection(head: np.ndarray, obj: float, nms: float, keep_topk: int) -> np.ndarray:
    """The (n keep_topk, 7) f32 result of one decoded head (n, 4 + classes, boxes): a box's class is
    its highest score (the lowest class of equal ones), kept above obj."""
    scores = head[:, 4:]
    best = scores.max(axis=1)
    return _kept_rows(best.astype(np.float64) > obj, best, np.argmax(scores, axis=1),
                      head[:, :4].transpose(0, 2, 1), nms, keep_topk)


def _kept_rows(passed, score, cls, xywh, nms: float, keep_topk: int) -> np.ndarray:
    """Per image: the boxes that passed, best score first (stable), greedy NMS within a class,
    the first keep_topk kept written as rows."""
    images = passed.shape[0]
    out = np.zeros((images * keep_topk, ROW), F32)
    count = 0
    for i in range(images):
        passed_i = np.nonzero(passed[i])[0]
        order = passed_i[np.argsort(-score[i][passed_i], kind="stable")]
        dropped = np.zeros(len(order), bool)
        taken = 0
        for j, box in enumerate(order):
            if dropped[j]:
                continue
            if taken < keep_topk:
                out[count] = (i, cls[i, box], score[i, box], *xywh[i, box])
                count += 1
                taken += 1
            rest = order[j + 1:]
            same = (cls[i, rest] == cls[i, box]) & ~dropped[j + 1:]
            hit = np.zeros(len(rest), bool)
            hit[same] = _overlap(xywh[i, box], xywh[i, rest[same]]) >= nms
            dropped[j + 1:] |= hit
    if count == 0:  # no box in any image: (image, -1, ..., -1) per image
        out[:images] = -1
        out[:images, 0] = np.arange(images)
    return out

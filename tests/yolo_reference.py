"""A separately written YOLO post-processing (plain Python loops, float64), the reference of
top.YoloDetection: TPU-MLIR's YoloDetectionFunc_v2 rules as docs/tpuc-opt.md states them, and for
yolov8 ultralytics' choice of a box's class with the same NMS.

onnxruntime's NonMaxSuppression is not the reference: it scores every box in every class (TPU-MLIR
keeps only the best class of a box), keeps a box whose IoU equals the threshold (TPU-MLIR drops
it) and has its own order of equal scores, so it would disagree by rule, not by error.

`margin` is how close any decision came to flipping (a score or objectness at its threshold, an
IoU at the NMS threshold): the kernel computes in float32, so a test holds it to this reference
only where the margin exceeds float32's rounding."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

YOLOV5_ANCHORS = [10, 13, 16, 30, 33, 23, 30, 61, 62, 45, 59, 119, 116, 90, 156, 198, 373, 326]
# yolov3-tiny.cfg's six anchors (darknet), the stride 16 head's three first: TPU-MLIR's 2-head defaults.
YOLOV3_TINY_ANCHORS = [10, 14, 23, 27, 37, 58, 81, 82, 135, 169, 344, 319]


def sigmoid(v: float) -> float:
    return 1.0 / (1.0 + math.exp(-v)) if v > -700 else 0.0


@dataclass
class Result:
    rows: list[tuple[float, ...]]
    margin: float = math.inf
    below_threshold: int = 0  # boxes whose objectness passed and whose score did not
    suppressed: int = 0
    truncated: int = 0  # kept boxes beyond keep_topk
    found: list[int] = field(default_factory=list)  # per image, boxes above the threshold


def iou(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """Boxes (x, y, w, h) by their centres."""
    dx = min(a[0] + a[2] / 2, b[0] + b[2] / 2) - max(a[0] - a[2] / 2, b[0] - b[2] / 2)
    dy = min(a[1] + a[3] / 2, b[1] + b[3] / 2) - max(a[1] - a[3] / 2, b[1] - b[3] / 2)
    inter = dx * dy if dx >= 0 and dy >= 0 else 0.0
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


def yolo_post(heads, anchors, classes: int, net_h: int, net_w: int, obj_threshold: float, nms_threshold: float,
              keep_topk: int, version: str = "yolov5") -> Result:
    """Rows (image, class, score, x, y, w, h) of every image's kept boxes; heads are nested
    lists or arrays [N][3 * (5 + classes)][H][W], any number of them (yolov3_tiny: 2), read widest
    first, head k's box b taking anchor pair 3 k + b."""
    if version not in ("yolov5", "yolov3", "yolov3_tiny"):
        raise ValueError(f"version {version}")
    res = Result(rows=[])
    by_width = sorted(range(len(heads)), key=lambda i: -len(heads[i][0][0][0]))
    logit_threshold = -math.log(1 / obj_threshold - 1)
    for image in range(len(heads[0])):
        boxes = []  # (score, class, x, y, w, h), in decode order
        for rank, k in enumerate(by_width):
            fmap = heads[k][image]
            rows, cols = len(fmap[0]), len(fmap[0][0])
            for cy in range(rows):
                for cx in range(cols):
                    for b in range(3):
                        f = [float(fmap[b * (5 + classes) + i][cy][cx]) for i in range(5 + classes)]
                        res.margin = min(res.margin, abs(f[4] - logit_threshold))
                        if f[4] <= logit_threshold:
                            continue
                        best = max(range(classes), key=lambda c: (f[5 + c], -c))
                        score = sigmoid(f[4]) * sigmoid(f[5 + best])
                        res.margin = min(res.margin, abs(score - obj_threshold))
                        if score <= obj_threshold:
                            res.below_threshold += 1
                            continue
                        aw, ah = anchors[2 * (3 * rank + b)], anchors[2 * (3 * rank + b) + 1]
                        if version == "yolov5":
                            x = (cx + 2 * sigmoid(f[0]) - 0.5) * net_w / cols
                            y = (cy + 2 * sigmoid(f[1]) - 0.5) * net_h / rows
                            w, h = (2 * sigmoid(f[2])) ** 2 * aw, (2 * sigmoid(f[3])) ** 2 * ah
                        else:  # yolov3, yolov3_tiny
                            x, y = (cx + sigmoid(f[0])) / cols, (cy + sigmoid(f[1])) / rows
                            w, h = math.exp(f[2]) * aw / net_w, math.exp(f[3]) * ah / net_h
                        boxes.append((score, best, x, y, w, h))
        res.found.append(len(boxes))
        boxes.sort(key=lambda box: -box[0])  # stable: equal scores stay in decode order
        gaps = [a[0] - b[0] for a, b in zip(boxes, boxes[1:], strict=False) if a[0] != b[0]]
        res.margin = min([res.margin, *gaps])  # two scores float32 may not tell apart
        _suppress(res, image, boxes, nms_threshold, keep_topk)
    return res


def _suppress(res: Result, image: int, boxes, nms_threshold: float, keep_topk: int) -> None:
    """Greedy NMS within a class over `boxes` (score, class, x, y, w, h) sorted best first: a box is
    dropped when a kept box of its class has IoU >= nms_threshold; the first keep_topk kept become rows."""
    kept = []
    for box in boxes:
        overlaps = [iou(box[2:], k[2:]) for k in kept if k[1] == box[1]]
        res.margin = min([res.margin, *(abs(v - nms_threshold) for v in overlaps)])
        if any(v >= nms_threshold for v in overlaps):
            res.suppressed += 1
        else:
            kept.append(box)
    res.truncated += max(0, len(kept) - keep_topk)
    res.rows += [(image, c, s, *xywh) for s, c, *xywh in kept[:keep_topk]]


def expected_output(res: Result, images: int, keep_topk: int) -> list[tuple[float, ...]]:
    """The op's [images * keep_topk, 7] result: the rows, then zeros; one (image, -1, ...) row per
    image when no image kept a box."""
    rows = res.rows or [(i, -1, -1, -1, -1, -1, -1) for i in range(images)]
    return rows + [(0,) * 7] * (images * keep_topk - len(rows))


def yolov8_post(head, obj_threshold: float, nms_threshold: float, keep_topk: int) -> Result:
    """The yolov8 rows of a decoded head [N][4 + classes][boxes] (x, y, w, h in pixels, then class
    scores), as ultralytics' non_max_suppression (agnostic=False, multi_label=False) picks them: a
    box's class is its highest score (the lowest class of equal ones), kept when that score is above
    the threshold; then the per-class greedy NMS above (a box dropped at IoU >= the threshold)."""
    res = Result(rows=[])
    for image in range(len(head)):
        fmap = head[image]
        classes = len(fmap) - 4
        boxes = []  # (score, class, x, y, w, h), in box order
        for k in range(len(fmap[0])):
            scores = [float(fmap[4 + c][k]) for c in range(classes)]
            best = 0
            for c in range(1, classes):
                if scores[c] > scores[best]:
                    best = c
            if scores[best] <= obj_threshold:
                res.below_threshold += 1
                continue
            boxes.append((scores[best], best, *(float(fmap[i][k]) for i in range(4))))
        res.found.append(len(boxes))
        boxes.sort(key=lambda box: -box[0])
        _suppress(res, image, boxes, nms_threshold, keep_topk)
    return res

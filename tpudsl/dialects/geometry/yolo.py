"""The layout of YOLO detection heads, as TPU-MLIR's YoloDetection reads them (GenericCpuFunc.cpp,
YoloDetectionFunc_v2), shared by the op's shape rule, `--add-postprocess` and the kernel.

A head is [N, num_boxes * (5 + class_num), H, W]: channel `box * (5 + class_num) + field` holds,
for field 0..4, the box's tx, ty, tw, th and objectness logits and, from field 5 on, its class
logits. The heads are read from the widest grid to the narrowest (stable among equal widths), and
head k's box b takes anchor pair k * num_boxes + b of `anchors` (w, h in input pixels).

Version yolov8 (ultralytics' YOLOv8/YOLOv11 export) reads one decoded head [N, 4 + class_num,
boxes] instead: rows 0..3 hold each box's centre x, y, width and height in input pixels, the rows
from 4 on its class scores (sigmoid-ed already); it takes no anchors (TPU-MLIR writes `[0]`).

The result is [1, 1, N * keep_topk, 7]: rows (image, class, score, x, y, w, h) of every image's
kept boxes one after the other, then zeros (TPU-MLIR's AddPostprocess type)."""

from __future__ import annotations

from collections.abc import Sequence

BOX_FIELDS = 5  # tx, ty, tw, th, objectness
ROW = 7  # image, class, score, x, y, w, h
V8_BOX_FIELDS = 4  # x, y, w, h of a decoded yolov8 head
V8_ANCHORS = (0.0,)  # what TPU-MLIR's AddPostprocess writes for yolov8: no anchor is read
# The head counts an anchored version takes, its first heads: yolov3 and yolov5 1 to 3 (TPU-MLIR's
# "outputs are not correct" beyond 3); TPU-MLIR gives yolov3_tiny its own anchors for 2 heads only
# (3 heads get yolov3's, 1 head anchors by stride: neither is modelled).
VERSION_HEADS = {"yolov3": (1, 2, 3), "yolov5": (1, 2, 3), "yolov3_tiny": (2,)}


class HeadError(ValueError):
    """The tensors are not YOLO heads of the op's attributes."""


def head_order(shapes: Sequence[Sequence[int]]) -> list[int]:
    """The order TPU-MLIR reads the heads in: widest grid first, ties in operand order."""
    return sorted(range(len(shapes)), key=lambda i: -shapes[i][3])


def check_heads(shapes: Sequence[Sequence[int]], class_num: int, num_boxes: int) -> None:
    """Raise HeadError unless `shapes` are YOLO heads of one batch with `num_boxes` boxes of
    `class_num` classes each."""
    if not shapes:
        raise HeadError("has no head")
    channels = num_boxes * (BOX_FIELDS + class_num)
    for i, s in enumerate(shapes):
        if len(s) != 4:
            raise HeadError(f"head #{i} is {'x'.join(map(str, s))}: a head is N x C x H x W")
        if s[1] != channels:
            raise HeadError(f"head #{i} has {s[1]} channels: {num_boxes} boxes x (5 + {class_num} classes) "
                            f"are {channels}")
        if s[0] != shapes[0][0]:
            raise HeadError(f"head #{i} has batch {s[0]}, head #0 has {shapes[0][0]}")


def check_anchors(heads: int, num_boxes: int, anchors: int) -> None:
    """Raise HeadError unless `anchors` values are a (w, h) pair per head and box."""
    if anchors != 2 * num_boxes * heads:
        raise HeadError(f"has {anchors} anchor values: {heads} heads x {num_boxes} boxes need "
                        f"{2 * num_boxes * heads} (w, h pairs)")


def check_v8_head(shapes: Sequence[Sequence[int]], class_num: int, anchors: Sequence[float]) -> None:
    """Raise HeadError unless `shapes` is one decoded yolov8 head [N, 4 + class_num, boxes] and
    `anchors` is TPU-MLIR's `[0]` (the head needs none)."""
    if len(shapes) != 1:
        raise HeadError(f"yolov8 takes one head, not {len(shapes)}")
    s = shapes[0]
    if len(s) != 3:
        raise HeadError(f"head #0 is {'x'.join(map(str, s))}: a yolov8 head is N x (4 + classes) x boxes")
    if class_num < 1 or s[1] != V8_BOX_FIELDS + class_num:
        raise HeadError(f"head #0 has {s[1]} rows: 4 + {class_num} classes are {V8_BOX_FIELDS + class_num}")
    if tuple(anchors) != V8_ANCHORS:
        raise HeadError(f"has anchors {list(anchors)}: yolov8 reads none (TPU-MLIR writes [0])")

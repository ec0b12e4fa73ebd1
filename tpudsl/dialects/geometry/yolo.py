"""The layout of YOLO detection heads, as TPU-MLIR's YoloDetection reads them (GenericCpuFunc.cpp,
YoloDetectionFunc_v2), shared by the op's shape rule, `--add-postprocess` and the kernel.

A head is [N, num_boxes * (5 + class_num), H, W]: channel `box * (5 + class_num) + field` holds,
for field 0..4, the box's tx, ty, tw, th and objectness logits and, from field 5 on, its class
logits. The heads are read from the widest grid to the narrowest (stable among equal widths), and
head k's box b takes anchor pair k * num_boxes + b of `anchors` (w, h in input pixels).

The result is [1, 1, N * keep_topk, 7]: rows (image, class, score, x, y, w, h) of every image's
kept boxes one after the other, then zeros (TPU-MLIR's AddPostprocess type)."""

from __future__ import annotations

from collections.abc import Sequence

BOX_FIELDS = 5  # tx, ty, tw, th, objectness
ROW = 7  # image, class, score, x, y, w, h


class HeadError(ValueError):
    """The tensors are not YOLO heads of the op's attributes."""


def head_order(shapes: Sequence[Sequence[int]]) -> list[int]:
    """The order TPU-MLIR reads the heads in: widest grid first, ties in operand order."""
    return sorted(range(len(shapes)), key=lambda i: -shapes[i][3])


def check_heads(shapes: Sequence[Sequence[int]], class_num: int, num_boxes: int, anchors: int) -> None:
    """Raise HeadError unless `shapes` are YOLO heads of one batch with `num_boxes` boxes of
    `class_num` classes each, and `anchors` holds a (w, h) pair per head and box."""
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
    if anchors != 2 * num_boxes * len(shapes):
        raise HeadError(f"has {anchors} anchor values: {len(shapes)} heads x {num_boxes} boxes need "
                        f"{2 * num_boxes * len(shapes)} (w, h pairs)")

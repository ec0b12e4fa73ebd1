"""top.DetectionOutput: SSD's post-processing as TPU-MLIR's DetectionOutputFunc computes it
(GenericCpuFunc.cpp, Caffe's DetectionOutput layer with share_location and CENTER_SIZE boxes;
docs/tpuc-opt.md, "--add-postprocess=type=ssd", has the rules; dialects/geometry/ssd.py the layout).

Per image and class (the background aside): the priors scoring above confidence_threshold, best
first, the first top_k of them, suppressed greedily; then the best keep_top_k of every class's
kept boxes when there are more. Arithmetic is float32 as TPU-MLIR's (its `* 0.5` of a double
rounds once: the corners are float64 differences rounded to float32)."""

from __future__ import annotations

import numpy as np

from tpudsl.dialects.geometry.ssd import BOX, ROW
from tpudsl.interp.kernel import Array, Inputs, Kernel, KernelAttrs

F32 = np.float32


def decode_boxes(loc: Array, priors: Array, variances: Array) -> tuple[Array, Array]:
    """CENTER_SIZE decode of one image's offsets [P, 4] by the priors' corners and variances [P, 4]:
    the boxes' corners [P, 4] and areas [P] (0 for an inverted box)."""
    width, height = priors[:, 2] - priors[:, 0], priors[:, 3] - priors[:, 1]
    cx = variances[:, 0] * loc[:, 0] * width + (priors[:, 0] + priors[:, 2]) * F32(0.5)
    cy = variances[:, 1] * loc[:, 1] * height + (priors[:, 1] + priors[:, 3]) * F32(0.5)
    w = np.exp(variances[:, 2] * loc[:, 2]) * width
    h = np.exp(variances[:, 3] * loc[:, 3]) * height
    half_w, half_h = w.astype(np.float64) * 0.5, h.astype(np.float64) * 0.5
    centre_x, centre_y = cx.astype(np.float64), cy.astype(np.float64)
    corners = np.stack([centre_x - half_w, centre_y - half_h, centre_x + half_w, centre_y + half_h], axis=1).astype(F32)
    inverted = (corners[:, 2] < corners[:, 0]) | (corners[:, 3] < corners[:, 1])
    area = np.where(inverted, F32(0), (corners[:, 2] - corners[:, 0]) * (corners[:, 3] - corners[:, 1]))
    return corners, area


def _nms(corners: Array, area: Array, order: Array, threshold: F32) -> list[int]:
    """Greedy NMS over the priors `order` (best first): a box is dropped when it overlaps a kept
    one with intersection (t + 1) > union-plus-intersection t, i.e. IoU > t (Caffe's ApplyNMSFast)."""
    kept: list[int] = []
    for i in order:
        if kept:
            b, k = corners[i], corners[kept]
            apart = (k[:, 0] > b[2]) | (k[:, 2] < b[0]) | (k[:, 1] > b[3]) | (k[:, 3] < b[1])
            inter = ((np.minimum(b[2], k[:, 2]) - np.maximum(b[0], k[:, 0]))
                     * (np.minimum(b[3], k[:, 3]) - np.maximum(b[1], k[:, 1])))
            if (~apart & (inter * (threshold + F32(1)) > (area[i] + area[kept]) * threshold)).any():
                continue
        kept.append(int(i))
    return kept


def _image_rows(loc: Array, conf: Array, priorbox: Array, a: KernelAttrs) -> list[tuple]:
    """One image's rows (label, score, xmin, ymin, xmax, ymax), labels ascending, each label's in NMS order."""
    corners, area = decode_boxes(loc, priorbox[0], priorbox[1])
    threshold, nms = F32(a["confidence_threshold"]), F32(a["nms_threshold"])
    found: list[tuple[int, float, int]] = []
    for label in range(conf.shape[1]):
        if label == a["background_label_id"]:
            continue
        above = np.flatnonzero(conf[:, label] > threshold)
        order = above[np.argsort(-conf[above, label], kind="stable")][: a["top_k"]]
        found += [(label, conf[p, label], p) for p in _nms(corners, area, order, nms)]
    if len(found) > a["keep_top_k"]:  # the best keep_top_k, back in label order
        best = sorted(range(len(found)), key=lambda j: -found[j][1])[: a["keep_top_k"]]
        found = [found[j] for j in sorted(best)]  # `found` is by label, each label's best first
    return [(label, score, *corners[p]) for label, score, p in found]


def _detection_output(ins: Inputs, a: KernelAttrs) -> Array:
    images, priors = ins[0].shape[0], ins[2].shape[2] // BOX
    loc = np.asarray(ins[0], F32).reshape(images, priors, BOX)
    conf = np.asarray(ins[1], F32).reshape(images, priors, -1)
    priorbox = np.asarray(ins[2], F32).reshape(2, priors, BOX)
    out = np.full((images * a["keep_top_k"], ROW), -1, F32)
    rows = [(image, *row) for image in range(images) for row in _image_rows(loc[image], conf[image], priorbox, a)]
    if rows:
        out[: len(rows)] = rows
    else:  # TPU-MLIR's "fake result" row per image: its number, then -1
        out[:images, 0] = np.arange(images)
    return out.reshape(a.out_shapes[0])


KERNELS = {"top.DetectionOutput": Kernel(_detection_output)}

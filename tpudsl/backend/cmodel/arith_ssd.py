"""The cmodel's arithmetic of BdcDetectionOutput (opcode 103), written from the record's definition
(isa.py) and docs/tpuc-opt.md's "--add-postprocess=type=ssd" rules, never imported from the
interpreter: each image's boxes decoded by column, each class's candidates suppressed through a
table of which pairs overlap beyond the threshold, then the best keep_top_k."""

from __future__ import annotations

import numpy as np

from tpudsl.dialects.geometry.ssd import ROW

F32 = np.float32


def _corners(loc: np.ndarray, prior: np.ndarray, var: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """CENTER_SIZE: centre = variance offset x prior size + prior centre, size = exp(variance
    offset) x prior size, in float32; corners = centre -/+ half the size, in float64 rounded once.
    Returns the (priors, 4) corners and the areas (0 when a corner pair is inverted)."""
    x0, y0, x1, y1 = prior.T
    pw, ph = x1 - x0, y1 - y0
    dx, dy, dw, dh = (var[:, k] * loc[:, k] for k in range(4))
    cx, cy = dx * pw + (x0 + x1) / F32(2), dy * ph + (y0 + y1) / F32(2)
    w, h = np.exp(dw) * pw, np.exp(dh) * ph
    box = np.empty((len(loc), 4), F32)
    box[:, 0] = cx.astype(np.float64) - w.astype(np.float64) / 2
    box[:, 2] = cx.astype(np.float64) + w.astype(np.float64) / 2
    box[:, 1] = cy.astype(np.float64) - h.astype(np.float64) / 2
    box[:, 3] = cy.astype(np.float64) + h.astype(np.float64) / 2
    area = (box[:, 2] - box[:, 0]) * (box[:, 3] - box[:, 1])
    area[(box[:, 2] < box[:, 0]) | (box[:, 3] < box[:, 1])] = 0
    return box, area


def _suppress(box: np.ndarray, area: np.ndarray, cand: np.ndarray, t: np.float32) -> list[int]:
    """The candidates (best first) a greedy pass keeps: `over[i, j]` when candidates i and j touch
    and intersection x (t + 1) > (area_i + area_j) x t."""
    b = box[cand]
    iw = np.minimum(b[:, None, 2], b[None, :, 2]) - np.maximum(b[:, None, 0], b[None, :, 0])
    ih = np.minimum(b[:, None, 3], b[None, :, 3]) - np.maximum(b[:, None, 1], b[None, :, 1])
    apart = ((b[None, :, 0] > b[:, None, 2]) | (b[None, :, 2] < b[:, None, 0])
             | (b[None, :, 1] > b[:, None, 3]) | (b[None, :, 3] < b[:, None, 1]))
    over = ~apart & (iw * ih * (t + F32(1)) > (area[cand][:, None] + area[cand][None, :]) * t)
    kept: list[int] = []
    for j in range(len(cand)):
        if not over[j, kept].any():
            kept.append(j)
    return [int(cand[j]) for j in kept]


def detection_output(loc: np.ndarray, conf: np.ndarray, priors: np.ndarray, background: int, top_k: int,
                     keep_top_k: int, nms: float, conf_threshold: float) -> np.ndarray:
    """The (n keep_top_k, 7) f32 rows of loc (n, priors, 4), conf (n, priors, classes) and the priors
    (2, priors, 4)."""
    images = loc.shape[0]
    out = np.full((images * keep_top_k, ROW), -1, F32)
    at = 0
    for image in range(images):
        box, area = _corners(loc[image], priors[0], priors[1])
        labels, scores, picks = [], [], []
        for c in range(conf.shape[2]):
            s = conf[image, :, c]
            cand = np.nonzero(s > F32(conf_threshold))[0]
            if c == background or not len(cand):
                continue
            cand = cand[np.argsort(-s[cand], kind="stable")][:top_k]
            for p in _suppress(box, area, cand, F32(nms)):
                labels.append(c), scores.append(s[p]), picks.append(p)
        chosen = np.arange(len(picks))
        if len(picks) > keep_top_k:  # the best keep_top_k (ties: label order), kept in label order
            chosen = np.sort(np.argsort(-np.array(scores, F32), kind="stable")[:keep_top_k])
        for j in chosen:
            out[at] = (image, labels[j], scores[j], *box[picks[j]])
            at += 1
    if at == 0:  # no box in any image: a row per image, its number then -1
        out[:images, 0] = np.arange(images)
    return out

"""A tiny SSD (Caffe's layout, the one TPU-MLIR's `--add_postprocess ssd` reads): two feature maps
of a 16x16 image, each cell with PRIORS_A_CELL priors; per map a loc conv (4 offsets a prior) and a
conf conv (CLASSES scores a prior), permuted to NHWC and flattened, concatenated over the maps;
the scores softmax-ed over the classes. Outputs: `mbox_loc` [1, P * 4], `mbox_conf_flatten`
[1, P * CLASSES] and `mbox_priorbox` [1, 2, P * 4] (Caffe's PriorBox: corners, then variances),
a constant the model returns as Caffe's SSD does."""

from __future__ import annotations

import numpy as np
import onnx

from tests.models.builder import GraphBuilder

IMAGE = 16
MAPS = ((4, 4), (2, 8))  # (feature map side, its stride)
ASPECTS = (1.0, 2.0)  # a prior of each aspect ratio (width / height) in every cell
PRIORS_A_CELL = len(ASPECTS)
CLASSES = 3  # class 0 is the background
VARIANCES = (0.1, 0.1, 0.2, 0.2)  # Caffe SSD's


def prior_boxes() -> np.ndarray:
    """Caffe's PriorBox for MAPS: per map, cell row, cell column and aspect, the corners of a box of
    side 1.5 strides (scaled by sqrt(aspect) across, 1 / sqrt(aspect) down) around the cell centre,
    as fractions of the image; then every prior's VARIANCES. [1, 2, P * 4] float32."""
    boxes = []
    for side, stride in MAPS:
        for row in range(side):
            for col in range(side):
                cx, cy = (col + 0.5) * stride / IMAGE, (row + 0.5) * stride / IMAGE
                for aspect in ASPECTS:
                    w, h = 1.5 * stride * np.sqrt(aspect) / IMAGE, 1.5 * stride / np.sqrt(aspect) / IMAGE
                    boxes.append((cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2))
    corners = np.array(boxes).reshape(-1)
    return np.stack([corners, np.tile(VARIANCES, len(boxes))])[None].astype(np.float32)


def tiny_ssd(seed: int = 0) -> onnx.ModelProto:
    g = GraphBuilder("tiny_ssd", seed)
    x = g.input("images", (1, 3, IMAGE, IMAGE))
    locs, confs = [], []
    for i, (side, stride) in enumerate(MAPS):
        feat = g.relu(g.conv(x, f"feat{i}", 3, 8, stride, stride, pad=0), f"feat{i}_relu")
        for kind, fields, out in (("loc", 4, locs), ("conf", CLASSES, confs)):
            head = g.conv(feat, f"{kind}{i}", 8, PRIORS_A_CELL * fields, 3)
            nhwc = g.node("Transpose", [head], f"{kind}{i}_perm", perm=[0, 2, 3, 1])
            shape = g.const(f"{kind}{i}_shape", np.array([1, side * side * PRIORS_A_CELL * fields]))
            out.append(g.node("Reshape", [nhwc, shape], f"{kind}{i}_flat"))
    g.output(g.node("Concat", locs, "mbox_loc", axis=1))
    conf = g.node("Concat", confs, "mbox_conf", axis=1)
    per_prior = g.node("Reshape", [conf, g.const("mbox_conf_shape", np.array([1, -1, CLASSES]))], "mbox_conf_reshape")
    scores = g.node("Softmax", [per_prior], "mbox_conf_softmax", axis=-1)
    g.output(g.node("Reshape", [scores, g.const("mbox_conf_flat_shape", np.array([1, -1]))], "mbox_conf_flatten"))
    g.output(g.node("Identity", [g.const("priorbox_data", prior_boxes())], "mbox_priorbox"))
    return g.model()

"""The inputs of SSD's detection post-processing, as TPU-MLIR's DetectionOutput reads them
(GenericCpuFunc.cpp, DetectionOutputFunc: Caffe's DetectionOutput layer), shared by the op's shape
rule, `--add-postprocess=type=ssd`, the kernel and codegen.

The operands are (loc, conf, priorbox), the outputs of Caffe's SSD head:
- loc: N images of `priors` boxes' 4 offsets (dx, dy, dw, dh), prior-major (`mbox_loc` flattened,
  [N, priors * 4]; any shape holding that many values an image);
- conf: N images of `priors` rows of `num_classes` scores (softmax-ed `mbox_conf` flattened,
  [N, priors * num_classes]);
- priorbox: [1, 2, priors * 4]: row 0 each prior's corners (xmin, ymin, xmax, ymax), row 1 its 4
  variances (Caffe's PriorBox output); the prior count is its last dimension / 4, as TPU-MLIR's.

The result is [1, 1, N * keep_top_k, 7]: rows (image, label, score, xmin, ymin, xmax, ymax) of
every image's kept boxes one after the other (labels ascending, each label's by score), then -1
rows (TPU-MLIR's output)."""

from __future__ import annotations

import math
from collections.abc import Sequence

ROW = 7  # image, label, score, xmin, ymin, xmax, ymax
BOX = 4  # a box's 4 values: loc's offsets, a prior's corners, its variances
CODE_TYPES = ("CORNER", "CENTER_SIZE", "CORNER_SIZE")  # Caffe's PriorBoxParameter CodeType


class SsdInputError(ValueError):
    """The tensors are not SSD's loc, conf and priorbox."""


def ssd_geometry(shapes: Sequence[Sequence[int]], num_classes: int | None = None) -> tuple[int, int, int]:
    """(images, priors, classes) of loc, conf and priorbox shapes; `num_classes` None: conf's
    values an image / priors. SsdInputError naming the first thing that does not fit."""
    if len(shapes) != 3:
        # Newer TPU-MLIR has a 2-input form (`onnx_nms`: boxes already decoded, conf class-major).
        unmodelled = ": TPU-MLIR's onnx_nms form (2 inputs, decoded boxes) is not modelled" if len(shapes) == 2 else ""
        raise SsdInputError(f"takes 3 inputs (loc, conf, priorbox), got {len(shapes)}{unmodelled}")
    loc, conf, prior = (tuple(s) for s in shapes)
    if len(prior) != 3 or prior[:2] != (1, 2) or prior[2] % BOX or prior[2] == 0:
        raise SsdInputError(f"priorbox has shape {list(prior)}, not [1, 2, priors * 4] (corners, then variances)")
    priors = prior[2] // BOX
    if not loc or not conf or loc[0] != conf[0]:
        raise SsdInputError(f"loc {list(loc)} and conf {list(conf)} are not of one batch")
    images = loc[0]
    if math.prod(loc) != images * priors * BOX:
        raise SsdInputError(f"loc has shape {list(loc)}: not {priors} priors x 4 offsets an image "
                            "(share_location: one box for every class)")
    per_image = math.prod(conf) // images if images else 0
    classes = num_classes if num_classes is not None else per_image // priors
    if classes < 1 or per_image != priors * classes:
        raise SsdInputError(f"conf has shape {list(conf)}: not {priors} priors x "
                            f"{classes if num_classes is not None else 'num_classes'} scores an image")
    return images, priors, classes

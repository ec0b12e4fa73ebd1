"""The cmodel's handlers of BdcYoloDetection (opcode 96), BdcYolov8Detection (97) and
BdcDetectionOutput (103), merged into engine.HANDLERS: the heads (1 to 3; yolov3_tiny's two), or
SSD's loc, conf and priors, read whole from global memory, the rows (arith_detection.py,
arith_ssd.py) written whole."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from tpudsl.backend import isa
from tpudsl.backend.cmodel import arith_detection, arith_ssd
from tpudsl.backend.cmodel.memory import Fault, Memory
from tpudsl.dialects.geometry.yolo import VERSION_HEADS

_F32 = np.dtype(np.float32)


def _yolo_detection(m: Memory, r: isa.BdcYoloDetection) -> None:
    versions = {code: name for name, code in isa.YOLO_VERSIONS.items()}
    if r.version not in versions:
        raise Fault(f"unknown yolo version code {r.version}")
    _check_detection(r)
    fields = [(r.src, r.fh0, r.fw0), (r.src1, r.fh1, r.fw1), (r.src2, r.fh2, r.fw2)]
    counts = VERSION_HEADS[versions[r.version]]  # a fixed count, or the heads before a 0 x 0 grid
    count = counts[0] if len(counts) == 1 else next((k for k in (1, 2) if fields[k][1:] == (0, 0)), 3)
    anchors = np.array([getattr(r, f"anchor{i}") for i in range(18)]).reshape(3, 3, 2)
    if any(any(f) for f in fields[count:]) or anchors[count:].any():
        raise Fault(f"{versions[r.version]} reads {count} heads: the fields and anchors of the heads after them "
                    "must be 0")
    heads = [m.read_run(at, s, _F32)
             for at, s in zip((r.src, r.src1, r.src2)[:count], isa.yolo_head_shapes(r)[:count], strict=True)]
    rows = arith_detection.yolo_detection(heads, anchors[:count], versions[r.version], r.net_h, r.net_w, r.classes,
                                          r.obj, r.nms, r.keep_topk)
    m.write_global(r.dst, (1,), rows.reshape(-1))


def _yolov8_detection(m: Memory, r: isa.BdcYolov8Detection) -> None:
    _check_detection(r)
    if r.boxes < 1:
        raise Fault(f"boxes {r.boxes}: not a detection")
    shape = (r.n, 4 + r.classes, r.boxes)
    head = m.read_run(r.src, shape, _F32)
    m.write_global(r.dst, (1,), arith_detection.yolov8_detection(head, r.obj, r.nms, r.keep_topk).reshape(-1))


def _check_detection(r: isa.BdcYoloDetection | isa.BdcYolov8Detection) -> None:
    if not 0.0 < r.obj < 1.0 or r.keep_topk < 1 or r.classes < 1:
        raise Fault(f"obj {r.obj}, keep_topk {r.keep_topk}, classes {r.classes}: not a detection")
    _check_nms(r.nms)


def _check_nms(nms: float) -> None:
    """An IoU threshold, in [0, 1]: NaN would suppress no box (every comparison false), silently."""
    if not 0.0 <= nms <= 1.0:
        raise Fault(f"nms {nms} is not an IoU threshold in [0, 1]")


def _detection_output(m: Memory, r: isa.BdcDetectionOutput) -> None:
    if min(r.n, r.priors, r.classes, r.top_k, r.keep_top_k) < 1 or not 0 <= r.background < r.classes:
        raise Fault(f"n {r.n}, priors {r.priors}, classes {r.classes}, background {r.background}, top_k {r.top_k}, "
                    f"keep_top_k {r.keep_top_k}: not a detection")
    _check_nms(r.nms)
    if math.isnan(r.conf_threshold):  # no score would pass, silently
        raise Fault("conf_threshold nan is not a score threshold")
    rows = arith_ssd.detection_output(m.read_run(r.src, (r.n, r.priors, 4), _F32),
                                      m.read_run(r.conf_at, (r.n, r.priors, r.classes), _F32),
                                      m.read_run(r.prior_at, (2, r.priors, 4), _F32), r.background, r.top_k,
                                      r.keep_top_k, r.nms, r.conf_threshold)
    m.write_global(r.dst, (1,), rows.reshape(-1))


HANDLERS: dict[type[isa.Record], Callable] = {isa.BdcYoloDetection: _yolo_detection,
                                              isa.BdcYolov8Detection: _yolov8_detection,
                                              isa.BdcDetectionOutput: _detection_output}

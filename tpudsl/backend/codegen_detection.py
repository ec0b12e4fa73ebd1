"""Codegen of tpu.YoloDetection (slicing.SELF_EMITTED: layer-group does not slice it): one
BdcYoloDetection record over its 1 to 3 f32 heads (yolov3_tiny: two; the absent ones' fields 0) in global
memory, widest first (the op's order),
or for version yolov8 one BdcYolov8Detection over its one decoded head; tpu.DetectionOutput (SSD's) is one
BdcDetectionOutput over its loc, conf and priorbox."""

from __future__ import annotations

from xdsl.ir import Operation

from tpudsl.backend import isa
from tpudsl.backend.address_assign import address_of
from tpudsl.backend.chips import Chip
from tpudsl.backend.codegen import Program
from tpudsl.backend.slicing import attrs_of, check_f32, shape_of
from tpudsl.dialects.geometry.ssd import SsdInputError, ssd_geometry
from tpudsl.dialects.geometry.yolo import V8_BOX_FIELDS, VERSION_HEADS, head_order
from tpudsl.dialects.opdef import describe
from tpudsl.ir.diagnostics import TpudslError


def check_yolo_detection(op: Operation) -> list[int]:
    """The heads' operand indices widest first; what the record does not model is an error naming it."""
    version = attrs_of(op)["version"]
    counts = (1,) if version == "yolov8" else VERSION_HEADS[version]
    if len(op.operands) not in counts:
        raise TpudslError(f"backend: {describe(op)}: {len(op.operands)} heads are not modelled "
                          f"({' or '.join(map(str, counts))})")
    check_f32(op, "BdcYolov8Detection" if version == "yolov8" else "BdcYoloDetection")
    return [0] if version == "yolov8" else head_order([shape_of(v) for v in op.operands])


def emit_yolo_detection(op: Operation, chip: Chip, prog: Program) -> None:
    order = check_yolo_detection(op)
    a = attrs_of(op)
    if a["version"] == "yolov8":
        n, rows, boxes = shape_of(op.operands[0])
        prog.records.append(isa.BdcYolov8Detection(
            address_of(op.operands[0]), address_of(op.results[0]), n, rows - V8_BOX_FIELDS, boxes,  # type: ignore[arg-type]
            a["keep_topk"], a["nms_threshold"], a["obj_threshold"]))
        return
    heads = [op.operands[i] for i in order]
    absent = isa.YOLO_HEADS - len(heads)  # fewer than 3 heads: the others' fields and anchors are 0
    grids = [d for v in heads for d in shape_of(v)[2:]] + [0, 0] * absent
    srcs = [address_of(v) for v in heads] + [0] * absent
    prog.records.append(isa.BdcYoloDetection(
        *srcs, address_of(op.results[0]), shape_of(heads[0])[0], *grids,  # type: ignore[arg-type]
        a["class_num"], a["net_input_h"], a["net_input_w"], a["keep_topk"], isa.YOLO_VERSIONS[a["version"]],
        a["nms_threshold"], a["obj_threshold"], *a["anchors"], *[0.0] * (6 * absent)))


def check_detection_output(op: Operation) -> tuple[int, int, int]:
    """(images, priors, classes); what the record does not model is an error naming it."""
    check_f32(op, "BdcDetectionOutput")
    try:
        return ssd_geometry([shape_of(v) for v in op.operands], attrs_of(op)["num_classes"])
    except SsdInputError as e:
        raise TpudslError(f"backend: {describe(op)}: {e}") from None


def emit_detection_output(op: Operation, chip: Chip, prog: Program) -> None:
    images, priors, classes = check_detection_output(op)
    a = attrs_of(op)
    loc, conf, priorbox = (address_of(v) for v in op.operands)
    prog.records.append(isa.BdcDetectionOutput(
        loc, conf, priorbox, address_of(op.results[0]), images, priors, classes,  # type: ignore[arg-type]
        a["background_label_id"], a["top_k"], a["keep_top_k"], a["nms_threshold"], a["confidence_threshold"]))

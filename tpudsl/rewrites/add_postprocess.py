"""Append detection post-processing to the model's head outputs: YOLO's (top.YoloDetection) or
SSD's (top.DetectionOutput, type=ssd).

TPU-MLIR's AddPostprocess (lib/Dialect/Top/Transforms/AddPostprocess.cpp), run by model_transform's
`--add_postprocess TYPE` between --shape-infer and --canonicalize: the function's results become
the one `yolo_post` tensor [1, 1, N * 200, 7] (image, class, score, x, y, w, h), thresholds 0.5,
the version's default anchors (yolov8/yolov11: ultralytics' one decoded output, no anchors); for ssd
the outputs loc, conf and priorbox become `ssd_post`, rows (image, label, score, xmin, ymin, xmax,
ymax), insertSsdOp's attributes. docs/tpuc-opt.md "--add-postprocess" is the table of what is
modelled as TPU-MLIR does it and what is refused."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, ModuleOp, StringAttr, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tpudsl.dialects.geometry.ssd import SsdInputError, ssd_geometry
from tpudsl.dialects.geometry.yolo import (BOX_FIELDS, V8_ANCHORS, V8_BOX_FIELDS, VERSION_HEADS, HeadError,
                                           check_heads, head_order)
from tpudsl.dialects.opdef import create_shaped, loc_name, value_name
from tpudsl.ir.diagnostics import TpudslError, check_option
from tpudsl.ir.module import unique_name

PASS = "add-postprocess"
# TPU-MLIR's defaults, widest grid (stride 8) first: (w, h) of 3 boxes a head.
YOLOV3_ANCHORS = (10, 13, 16, 30, 33, 23, 30, 61, 62, 45, 59, 119, 116, 90, 156, 198, 373, 326)
# TPU-MLIR's YOLOV3_TINY_ANCHORS: the stride 16 head's triple, then stride 32's.
YOLOV3_TINY_ANCHORS = (10, 14, 23, 27, 37, 58, 81, 82, 135, 169, 344, 319)
ANCHORS = {"yolov3": YOLOV3_ANCHORS, "yolov5": YOLOV3_ANCHORS,  # TPU-MLIR's YOLOV5_ANCHORS_DEFAULT: the same
           "yolov3_tiny": YOLOV3_TINY_ANCHORS,
           "yolov8": V8_ANCHORS, "yolov11": V8_ANCHORS}  # one decoded head, no anchors
# The op's version per type: ultralytics' YOLOv11 exports YOLOv8's head.
VERSION = {"yolov3": "yolov3", "yolov5": "yolov5", "yolov3_tiny": "yolov3_tiny", "yolov8": "yolov8",
           "yolov11": "yolov8"}
ANCHORS_A_HEAD = 6  # (w, h) of 3 boxes
KEEP_TOPK = 200
THRESHOLD = 0.5  # nms_threshold and obj_threshold
BOXES = 3
NAME = "yolo_post"
REFUSED = {
    "yolov4": "its anchors and decode",
    "yolov7": "TPU-MLIR decodes it as yolov3 (its YoloVersionAttr has no yolov7)",
    "yolov8_seg": "its mask post-processing", "yolov11_seg": "its mask post-processing",
    "bnr": "top.DepackRaw", "mmap2rgbmap": "top.Mmap2Rgbmap",
}


@dataclass(frozen=True)
class AddPostprocessPass(ModulePass):
    """Append YOLO detection post-processing (top.YoloDetection) to the model's head outputs."""

    name = "add-postprocess"

    type: str = ""  # empty: nothing to add (TPU-MLIR's default)

    def check_options(self) -> None:
        if self.type in REFUSED:
            raise TpudslError(f"{PASS}: type={self.type} is not supported: {REFUSED[self.type]} is not modelled "
                              f"(supported: type=yolov3, yolov3_tiny, yolov5, yolov8, yolov11 or ssd)")
        check_option(PASS, "type", self.type, ("", *ANCHORS, "ssd"), "not a post-processing TPU-MLIR has")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.check_options()
        if not self.type:
            return
        if "module.postprocess" in op.attributes:
            raise TpudslError(f"{PASS}: the module has post-processing already "
                              f"(module.postprocess = {getattr(op.attributes['module.postprocess'], 'data', '?')})")
        main = next((f for f in op.walk() if isinstance(f, FuncOp) and f.sym_name.data == "main"), None)
        if main is None or main.is_declaration:
            raise TpudslError(f"{PASS}: the module has no func.func @main")
        if self.type == "ssd":
            _append_ssd(main)
        else:
            _append(main, self.type)
        op.attributes["module.postprocess"] = StringAttr(self.type)


def _append(main: FuncOp, version: str) -> None:
    ret = main.body.block.last_op
    heads = list(ret.operands)
    shapes = _result_shapes(ret)
    net = _net(main)
    v8 = VERSION[version] == "yolov8"
    try:
        classes = _v8_classes(heads, shapes, net) if v8 else _classes(heads, shapes, net, version)
        anchors = ANCHORS[version] if v8 else anchors_of(version, [net[3] // shapes[i][3] for i in head_order(shapes)])
    except HeadError as e:
        raise TpudslError(f"{PASS}: the outputs do not look like YOLO heads: {e}") from None
    attrs = {"net_input_h": net[2], "net_input_w": net[3], "nms_threshold": THRESHOLD, "obj_threshold": THRESHOLD,
             "keep_topk": KEEP_TOPK, "anchors": [float(a) for a in anchors], "agnostic_nms": False,
             "version": VERSION[version], "class_num": classes}
    # Operands in TPU-MLIR's order, widest grid first (yolov8: its one head); the heads keep their names.
    operands = heads if v8 else [heads[i] for i in head_order(shapes)]
    _replace_results(main, "top.YoloDetection", operands, attrs, NAME)


# TPU-MLIR's insertSsdOp: Caffe's SSD defaults but confidence_threshold 0.05 and top_k = keep_top_k = 200.
SSD_ATTRS = {"background_label_id": 0, "nms_threshold": 0.5, "top_k": KEEP_TOPK, "code_type": "CENTER_SIZE",
             "keep_top_k": KEEP_TOPK, "confidence_threshold": 0.05, "share_location": True,
             "variance_encoded_in_target": 0.0, "eta": 1.0}
SSD_NAME = "ssd_post"


def _append_ssd(main: FuncOp) -> None:
    """The function's results loc, conf and priorbox become operands of one top.DetectionOutput.
    num_classes is conf's values an image / priors (TPU-MLIR reads conf's dimension 1, the class
    count only when conf is [N, classes, ...]: docs/tpuc-opt.md)."""
    ret = main.body.block.last_op
    shapes = _result_shapes(ret)
    try:
        images, _, classes = ssd_geometry(shapes)
    except SsdInputError as e:
        raise TpudslError(f"{PASS}: the outputs are not SSD's loc, conf and priorbox: {e} "
                          f"(the outputs are {_outputs(list(ret.operands), shapes)})") from None
    try:  # TPU-MLIR sizes the rows by the input's batch, the op's shape rule and kernel by loc's
        _check_net(_net(main), images, f"loc '{value_name(ret.operands[0])}' has")
    except HeadError as e:
        raise TpudslError(f"{PASS}: {e}") from None
    _replace_results(main, "top.DetectionOutput", list(ret.operands), {"num_classes": classes, **SSD_ATTRS},
                     SSD_NAME)


def _net(main: FuncOp) -> tuple[int, ...]:
    """The shape of the function's first input, the image (() when it has none or is unranked)."""
    first = main.function_type.inputs.data[0] if main.function_type.inputs.data else None
    return tuple(first.get_shape()) if isinstance(first, TensorType) else ()


def _result_shapes(ret) -> list[tuple[int, ...]]:
    """The shapes of the function's results (() for one that is not a tensor)."""
    return [tuple(v.type.get_shape()) if isinstance(v.type, TensorType) else () for v in ret.operands]


def _replace_results(main: FuncOp, op_name: str, operands, attrs: dict, name: str) -> None:
    """One `op_name` of these operands, named `name` (or a free derivative), becomes the function's
    one result; its rows' shape by the op's shape rule, which checks the operands against the
    attributes again."""
    ret = main.body.block.last_op
    name = unique_name(name, {loc_name(o) for o in main.walk()})
    post = create_shaped(op_name, operands, Float32Type(), attrs, name)
    Rewriter.insert_op(post, InsertPoint.before(ret))
    ret.operands = [post.results[0]]
    main.update_function_type()


def _v8_classes(heads, shapes, net) -> int:
    """The class count of one decoded yolov8 head [N, 4 + classes, boxes]; HeadError naming what is not."""
    if len(heads) != 1 or len(shapes[0]) != 3 or shapes[0][1] <= V8_BOX_FIELDS:
        raise HeadError(f"yolov8 takes one head N x (4 + classes) x boxes, the outputs are {_outputs(heads, shapes)}")
    _check_net(net, shapes[0][0])
    return shapes[0][1] - V8_BOX_FIELDS


def _outputs(heads, shapes) -> str:
    names = ", ".join(f"'{value_name(h)}' {'x'.join(map(str, s)) or h.type}" for h, s in zip(heads, shapes, strict=True))
    return names or "none"


def _check_net(net, batch: int, outputs: str = "the heads have") -> None:
    """The first input is an N x C x H x W image (TPU-MLIR reads its batch, height and width for
    every type) of the outputs' batch; HeadError naming both batches when not."""
    if len(net) != 4:
        raise HeadError("the first input is not an N x C x H x W image: no net input size")
    if batch != net[0]:
        raise HeadError(f"{outputs} batch {batch}, the input {net[0]}")


def anchors_of(version: str, strides: list[int]) -> tuple[float, ...]:
    """The anchors of heads of these strides (input width / head width), widest grid first, as
    TPU-MLIR's getYoloOperandsAndAnchors picks them: 3 heads (yolov3_tiny: 2) the type's table;
    yolov5 its default table whatever the count (its op reads the first 6 a head, widest head first);
    1 or 2 yolov3 heads "by scale": head i takes YOLOV3_ANCHORS' triple s / 8 - 1 when its stride s
    is not a multiple of 8, else triple i, and triple i again when that index exceeds the head count.
    A stride below 8 (index -1: TPU-MLIR reads before its table) is a HeadError."""
    count = len(strides)
    if version != "yolov3" or count == 3:
        return ANCHORS[version][:ANCHORS_A_HEAD * count]
    picked: list[float] = []
    for i, stride in enumerate(strides):
        triple = stride // 8 - 1 if stride % 8 else i
        if triple < 0:
            raise HeadError(f"a head of stride {stride}: TPU-MLIR's anchors by stride for {count} yolov3 head(s) "
                            "(triple s / 8 - 1 where 8 does not divide s) would read before its table")
        triple = i if triple > count else triple
        picked += YOLOV3_ANCHORS[ANCHORS_A_HEAD * triple:ANCHORS_A_HEAD * (triple + 1)]
    return tuple(picked)


def _classes(heads, shapes, net, version: str) -> int:
    """The class count of the type's YOLO heads (VERSION_HEADS: 1 to 3; yolov3_tiny 2) of the net
    input `net`; HeadError naming what is not."""
    counts = VERSION_HEADS[version]
    if len(heads) not in counts or any(len(s) != 4 for s in shapes):
        allowed = f"{counts[0]} to {counts[-1]}" if len(counts) > 1 else str(counts[0])
        raise HeadError(f"{version} takes {allowed} heads N x C x H x W, the outputs are {_outputs(heads, shapes)}")
    if shapes[0][1] % BOXES or shapes[0][1] // BOXES <= BOX_FIELDS:
        raise HeadError(f"head '{value_name(heads[0])}' has {shapes[0][1]} channels, not 3 x (5 + classes)")
    classes = shapes[0][1] // BOXES - BOX_FIELDS
    check_heads(shapes, classes, BOXES)  # anchors_of picks the anchors after; the op's shape rule checks them
    _check_net(net, shapes[0][0])
    for h, s in zip(heads, shapes, strict=True):
        if net[3] % s[3]:
            raise HeadError(f"head '{value_name(h)}' is {s[3]} wide: not a stride of the {net[3]} wide input")
    return classes

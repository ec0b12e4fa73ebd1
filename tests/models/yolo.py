"""YOLOv5s- and YOLOv8n-shaped networks as ultralytics' `export(format="onnx")` writes them.

What the exporter writes, and these graphs copy: BatchNorm folded into each Conv's weight and bias
(`fuse()` runs before export), SiLU as `x * Sigmoid(x)`, `nn.Upsample(scale_factor=2)` as a
nearest Resize whose `scales` (or `sizes`) input depends on the opset, C3 (v5) and C2f (v8, a
Split into two halves) blocks, SPPF as three chained 5x5 stride-1 MaxPools and a Concat.
YOLOv5's Detect keeps its decode in the graph: Reshape [1,3,no,H,W], Transpose to
[1,3,H,W,no], Sigmoid, Split (xy, wh, conf), `(xy * 2 + grid) * stride`, `(wh * 2) ** 2 *
anchor_grid`, Concat, Reshape [1,3HW,no], Concat over the three heads to [1,N,no]. Its head convs
(`head.m0`..`head.m2`) are the tensors sophon-demo cuts to with --output_names. YOLOv8's Detect is
anchor-free: per head Concat(box branch 4*16, class branch nc), Reshape [1,no,HW], Concat, Split,
DFL (Reshape [1,4,16,N], Transpose, Softmax, 1x1 Conv with arange weights, Reshape [1,4,N]),
dist2bbox (Split, Sub, Add, Add, Div, Sub, Concat) times the strides, class Sigmoid, output
[1,4+nc,N].

Weights are random with the ranges training leaves: each Conv's filter is He-initialized and
scaled per output channel by a folded BatchNorm (gamma / sqrt(var)), biases are the folded
beta - mean * scale, and the detect convs carry ultralytics' prior biases (objectness and class
logits around -4.6 to -8, so that the sigmoids start near zero as in a trained model).
"""

from __future__ import annotations

import math

import numpy as np
import onnx

from tests.models.builder import GraphBuilder
from tests.yolo_reference import YOLOV5_ANCHORS

# The (w, h) pairs of each head, three boxes a head, from the post-processing reference's flat list.
HEAD_ANCHORS = tuple(tuple(YOLOV5_ANCHORS[6 * i:6 * i + 6]) for i in range(3))
STRIDES = (8, 16, 32)
REG_MAX = 16  # DFL bins of YOLOv8's box branch
SCALE = np.float32(0.0039216)  # sophon-demo's --scale (1/255, as its scripts write it), mean 0


def images(seed: int, size: int, n: int = 1) -> np.ndarray:
    """`n` random RGB images, NHWC bytes (random, not photographs: the flow is checked, not a detector)."""
    return np.random.default_rng(seed).integers(0, 256, (n, size, size, 3), dtype=np.uint8)


def preprocessed(rgb: np.ndarray) -> np.ndarray:
    """sophon-demo's preprocessing from its definition: RGB planes, x * SCALE (mean 0)."""
    return rgb.transpose(0, 3, 1, 2).astype(np.float32) * SCALE


class _Yolo(GraphBuilder):
    """GraphBuilder plus ultralytics' blocks (the folded Conv, its SiLU, the exporter's Resize)."""

    def __init__(self, name: str, seed: int, opset: int, resize_form: str):
        super().__init__(name, seed)
        self.opset = opset
        self.resize_form = resize_form

    def folded_conv(self, x: str, name: str, cin: int, cout: int, k: int, stride: int = 1,
                    bias: np.ndarray | None = None, pad: int | None = None) -> str:
        """nn.Conv2d(bias=False) + BatchNorm2d as `fuse()` folds them: one Conv with a bias."""
        w = self.rng.standard_normal((cout, cin, k, k)) * math.sqrt(2.0 / (cin * k * k))
        gamma = self.rng.uniform(0.5, 1.5, cout)
        var = self.rng.uniform(0.5, 1.5, cout)
        scale = gamma / np.sqrt(var + 1e-3)  # ultralytics' BatchNorm2d eps
        if bias is None:
            beta, mean = self.rng.normal(0, 0.3, cout), self.rng.normal(0, 0.3, cout)
            bias = beta - mean * scale
        weight = self.const(f"{name}.weight", (w * scale[:, None, None, None]).astype(np.float32))
        b = self.const(f"{name}.bias", np.asarray(bias, np.float32))
        return self.node("Conv", [x, weight, b], name, kernel_shape=[k, k], strides=[stride, stride],
                         pads=[k // 2 if pad is None else pad] * 4, dilations=[1, 1], group=1)

    def cbs(self, x: str, name: str, cin: int, cout: int, k: int = 1, stride: int = 1, pad: int | None = None) -> str:
        """ultralytics' Conv: the folded conv and SiLU, which torch exports as x * Sigmoid(x)."""
        y = self.folded_conv(x, f"{name}.conv", cin, cout, k, stride, pad=pad)
        return self.node("Mul", [y, self.node("Sigmoid", [y], f"{name}.act.sigmoid")], f"{name}.act")

    def bottleneck(self, x: str, name: str, c: int, k1: int, shortcut: bool) -> str:
        y = self.cbs(self.cbs(x, f"{name}.cv1", c, c, k1), f"{name}.cv2", c, c, 3)
        return self.node("Add", [x, y], f"{name}.add") if shortcut else y

    def upsample(self, x: str, name: str, shape: tuple[int, int, int, int]) -> str:
        """nn.Upsample(None, 2, "nearest"): opset 11/12 write a constant empty roi and `scales`;
        13+ leave roi out; `sizes` is the form of an export whose sizes were computed."""
        attrs = {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}
        roi = self.const(f"{name}.roi", np.zeros(0, np.float32)) if self.opset < 13 else ""
        if self.resize_form == "sizes":
            n, c, h, w = shape
            sizes = self.const(f"{name}.sizes", np.array([n, c, 2 * h, 2 * w], np.int64))
            return self.node("Resize", [x, roi, "", sizes], name, **attrs)
        scales = self.const(f"{name}.scales", np.array([1, 1, 2, 2], np.float32))
        return self.node("Resize", [x, roi, scales], name, **attrs)

    def sppf(self, x: str, name: str, cin: int, cout: int) -> str:
        """SPPF: three chained MaxPool(5, 1, 2) and a Concat of the four."""
        y = [self.cbs(x, f"{name}.cv1", cin, cin // 2)]
        for i in range(3):
            y.append(self.node("MaxPool", [y[-1]], f"{name}.m{i}", kernel_shape=[5, 5], strides=[1, 1],
                               pads=[2, 2, 2, 2]))
        return self.cbs(self.node("Concat", y, f"{name}.cat", axis=1), f"{name}.cv2", cin * 2, cout)

    def split(self, x: str, name: str, sizes, axis: int) -> list[str]:
        """torch's split/chunk: Split with a `split` input from opset 13 on, an attribute before."""
        if self.opset >= 13:
            return super().split(x, name, sizes, axis)
        outs = [f"{name}_{i}" if i else name for i in range(len(sizes))]
        self.nodes.append(onnx.helper.make_node("Split", [x], outs, name=name, axis=axis, split=list(sizes)))
        return outs

    def softmax(self, x: str, name: str, axis: int) -> str:
        """torch's softmax(dim): before opset 13 ONNX's Softmax flattens from `axis`, so torch moves
        dim last with a Transpose, takes Softmax(axis=-1) and moves it back."""
        if self.opset >= 13:
            return self.node("Softmax", [x], name, axis=axis)
        perm = [0, 1, 2, 3]
        perm[axis], perm[-1] = 3, axis
        y = self.node("Softmax", [self.node("Transpose", [x], f"{name}.to_last", perm=perm)], f"{name}.last", axis=-1)
        return self.node("Transpose", [y], name, perm=perm)

    def shape(self, name: str, values) -> str:
        return self.shape_const(f"{name}.shape", values)


def _c3(g: _Yolo, x: str, name: str, cin: int, cout: int, n: int, shortcut: bool = True) -> str:
    """YOLOv5's C3: cv1 -> n Bottlenecks (1x1, 3x3), Concat with cv2, cv3."""
    c_ = cout // 2
    y = g.cbs(x, f"{name}.cv1", cin, c_)
    for i in range(n):
        y = g.bottleneck(y, f"{name}.m.{i}", c_, 1, shortcut)
    return g.cbs(g.node("Concat", [y, g.cbs(x, f"{name}.cv2", cin, c_)], f"{name}.cat", axis=1),
                 f"{name}.cv3", 2 * c_, cout)


def yolov5s(input_size: int = 128, width: float = 0.125, nc: int = 80, opset: int = 12,
            resize_form: str = "scales", seed: int = 0) -> onnx.ModelProto:
    """YOLOv5s (v6/v7 layout: 6x6 stem conv, C3, SPPF) with depth 1 per C3; `width` scales the
    channels of the 1.0-width model (64..1024). Output `output0` [1, N, nc + 5], decoded; the head
    convs head.m0..2 are what --output_names cuts to for --add_postprocess."""
    g = _Yolo("yolov5s", seed, opset, resize_form)
    ch = [max(4, int(c * width)) for c in (64, 128, 256, 512, 1024)]
    s = input_size
    x = g.input("images", (1, 3, s, s))
    x = g.cbs(x, "model.0", 3, ch[0], 6, 2, pad=2)  # the v6 stem that replaced Focus: Conv(6, 2, 2)
    x = g.cbs(x, "model.1", ch[0], ch[1], 3, 2)
    x = _c3(g, x, "model.2", ch[1], ch[1], 1)
    p3 = _c3(g, g.cbs(x, "model.3", ch[1], ch[2], 3, 2), "model.4", ch[2], ch[2], 1)
    p4 = _c3(g, g.cbs(p3, "model.5", ch[2], ch[3], 3, 2), "model.6", ch[3], ch[3], 1)
    x = _c3(g, g.cbs(p4, "model.7", ch[3], ch[4], 3, 2), "model.8", ch[4], ch[4], 1)
    x = g.sppf(x, "model.9", ch[4], ch[4])
    h10 = g.cbs(x, "model.10", ch[4], ch[3])
    x = g.node("Concat", [g.upsample(h10, "model.11", (1, ch[3], s // 32, s // 32)), p4], "model.12", axis=1)
    x = _c3(g, x, "model.13", 2 * ch[3], ch[3], 1, shortcut=False)
    h14 = g.cbs(x, "model.14", ch[3], ch[2])
    x = g.node("Concat", [g.upsample(h14, "model.15", (1, ch[2], s // 16, s // 16)), p3], "model.16", axis=1)
    out3 = _c3(g, x, "model.17", 2 * ch[2], ch[2], 1, shortcut=False)
    x = g.node("Concat", [g.cbs(out3, "model.18", ch[2], ch[2], 3, 2), h14], "model.19", axis=1)
    out4 = _c3(g, x, "model.20", 2 * ch[2], ch[3], 1, shortcut=False)
    x = g.node("Concat", [g.cbs(out4, "model.21", ch[3], ch[3], 3, 2), h10], "model.22", axis=1)
    out5 = _c3(g, x, "model.23", 2 * ch[3], ch[4], 1, shortcut=False)
    no = nc + 5
    boxes = []
    for i, (feat, c, stride) in enumerate(zip((out3, out4, out5), ch[2:], STRIDES, strict=True)):
        # Detect's _initialize_biases: objectness log(8 / (640 / stride)^2), classes log(0.6 / (nc - 0.99)).
        prior = np.zeros((3, no))
        prior[:, 4] = math.log(8 / (640 / stride) ** 2)
        prior[:, 5:] = math.log(0.6 / (nc - 0.99))
        prior = prior + g.rng.normal(0, 0.5, prior.shape)  # as training moves them
        head = g.folded_conv(feat, f"head.m{i}", c, 3 * no, 1, bias=prior.reshape(-1))
        boxes.append(_v5_decode(g, head, i, s // stride, no, stride))
    g.output(g.node("Concat", boxes, "output0", axis=1))
    return g.model(opset)


def _v5_decode(g: _Yolo, head: str, i: int, hw: int, no: int, stride: int) -> str:
    """Detect.forward's inference branch on one head, as exported (with its constant grids)."""
    n = f"head.{i}"
    x = g.node("Reshape", [head, g.shape(f"{n}.view", [1, 3, no, hw, hw])], f"{n}.view")
    x = g.node("Sigmoid", [g.node("Transpose", [x], f"{n}.permute", perm=[0, 1, 3, 4, 2])], f"{n}.sigmoid")
    xy, wh, conf = g.split(x, f"{n}.split", [2, 2, no - 4], axis=4)
    yv, xv = np.meshgrid(np.arange(hw), np.arange(hw), indexing="ij")
    grid = (np.stack((xv, yv), 2)[None, None] - 0.5).astype(np.float32)  # _make_grid's offset of -0.5
    anchors = np.array(HEAD_ANCHORS[i], np.float32).reshape(1, 3, 1, 1, 2)
    two = g.const(f"{n}.two", np.array(2.0, np.float32))
    xy = g.node("Mul", [g.node("Add", [g.node("Mul", [xy, two], f"{n}.xy2"), g.const(f"{n}.grid", grid)],
                                f"{n}.xy_grid"), g.const(f"{n}.stride", np.array(stride, np.float32))], f"{n}.xy")
    wh = g.node("Pow", [g.node("Mul", [wh, two], f"{n}.wh2"), two], f"{n}.wh_sq")
    wh = g.node("Mul", [wh, g.const(f"{n}.anchor_grid", np.broadcast_to(anchors, (1, 3, hw, hw, 2)).copy())],
                f"{n}.wh")
    y = g.node("Concat", [xy, wh, conf], f"{n}.cat", axis=4)
    return g.node("Reshape", [y, g.shape(f"{n}.out", [1, 3 * hw * hw, no])], f"{n}.out")


def _c2f(g: _Yolo, x: str, name: str, cin: int, cout: int, n: int, shortcut: bool) -> str:
    """YOLOv8's C2f: cv1, chunk(2) as a Split, n Bottlenecks (3x3, 3x3) on the last part, Concat, cv2."""
    c = cout // 2
    y = g.split(g.cbs(x, f"{name}.cv1", cin, 2 * c), f"{name}.chunk", [c, c], axis=1)
    for i in range(n):
        y.append(g.bottleneck(y[-1], f"{name}.m.{i}", c, 3, shortcut))
    return g.cbs(g.node("Concat", y, f"{name}.cat", axis=1), f"{name}.cv2", (2 + n) * c, cout)


def yolov8n(input_size: int = 128, width: float = 0.0625, nc: int = 80, opset: int = 17,
            resize_form: str = "scales", seed: int = 0) -> onnx.ModelProto:
    """YOLOv8n's layout with one Bottleneck per C2f; `width` scales the 1.0-width channels
    (64..1024; v8n is 0.25). Output `output0` [1, 4 + nc, N] as the exporter writes it."""
    g = _Yolo("yolov8n", seed, opset, resize_form)
    ch = [max(8, int(c * width)) for c in (64, 128, 256, 512, 1024)]
    s = input_size
    x = g.input("images", (1, 3, s, s))
    x = g.cbs(g.cbs(x, "model.0", 3, ch[0], 3, 2), "model.1", ch[0], ch[1], 3, 2)
    x = _c2f(g, x, "model.2", ch[1], ch[1], 1, True)
    p3 = _c2f(g, g.cbs(x, "model.3", ch[1], ch[2], 3, 2), "model.4", ch[2], ch[2], 1, True)
    p4 = _c2f(g, g.cbs(p3, "model.5", ch[2], ch[3], 3, 2), "model.6", ch[3], ch[3], 1, True)
    x = _c2f(g, g.cbs(p4, "model.7", ch[3], ch[4], 3, 2), "model.8", ch[4], ch[4], 1, True)
    p5 = g.sppf(x, "model.9", ch[4], ch[4])
    x = g.node("Concat", [g.upsample(p5, "model.10", (1, ch[4], s // 32, s // 32)), p4], "model.11", axis=1)
    h12 = _c2f(g, x, "model.12", ch[4] + ch[3], ch[3], 1, False)
    x = g.node("Concat", [g.upsample(h12, "model.13", (1, ch[3], s // 16, s // 16)), p3], "model.14", axis=1)
    out3 = _c2f(g, x, "model.15", ch[3] + ch[2], ch[2], 1, False)
    x = g.node("Concat", [g.cbs(out3, "model.16", ch[2], ch[2], 3, 2), h12], "model.17", axis=1)
    out4 = _c2f(g, x, "model.18", ch[2] + ch[3], ch[3], 1, False)
    x = g.node("Concat", [g.cbs(out4, "model.19", ch[3], ch[3], 3, 2), p5], "model.20", axis=1)
    out5 = _c2f(g, x, "model.21", ch[3] + ch[4], ch[4], 1, False)
    c2, c3 = max(16, ch[2] // 4, REG_MAX * 4), max(ch[2], min(nc, 100))
    flat, anchors, strides = [], [], []
    for i, (feat, c, stride) in enumerate(zip((out3, out4, out5), ch[2:], STRIDES, strict=True)):
        n, hw = f"model.22.{i}", s // stride
        box = g.cbs(g.cbs(feat, f"model.22.cv2.{i}.0", c, c2, 3), f"model.22.cv2.{i}.1", c2, c2, 3)
        box = g.folded_conv(box, f"model.22.cv2.{i}.2", c2, 4 * REG_MAX, 1, bias=np.ones(4 * REG_MAX))
        cls = g.cbs(g.cbs(feat, f"model.22.cv3.{i}.0", c, c3, 3), f"model.22.cv3.{i}.1", c3, c3, 3)
        # Detect.bias_init: class logits log(5 / nc / (640 / stride)^2), moved by training.
        prior = math.log(5 / nc / (640 / stride) ** 2) + g.rng.normal(0, 0.5, nc)
        cls = g.folded_conv(cls, f"model.22.cv3.{i}.2", c3, nc, 1, bias=prior)
        x = g.node("Concat", [box, cls], f"{n}.cat", axis=1)
        flat.append(g.node("Reshape", [x, g.shape(f"{n}.view", [1, 4 * REG_MAX + nc, hw * hw])], f"{n}.view"))
        yv, xv = np.meshgrid(np.arange(hw) + 0.5, np.arange(hw) + 0.5, indexing="ij")  # make_anchors(offset=0.5)
        anchors.append(np.stack((xv.ravel(), yv.ravel())))
        strides.append(np.full((1, hw * hw), stride))
    a = sum(x.shape[1] for x in anchors)
    x = g.node("Concat", flat, "model.22.cat", axis=2)
    box, cls = g.split(x, "model.22.split", [4 * REG_MAX, nc], axis=1)
    # DFL: softmax over the 16 bins, expectation by a 1x1 conv whose weights are 0..15.
    d = g.node("Reshape", [box, g.shape("model.22.dfl.view", [1, 4, REG_MAX, a])], "model.22.dfl.view")
    d = g.softmax(g.node("Transpose", [d], "model.22.dfl.transpose", perm=[0, 2, 1, 3]), "model.22.dfl.softmax", 1)
    arange = g.const("model.22.dfl.conv.weight", np.arange(REG_MAX, dtype=np.float32).reshape(1, REG_MAX, 1, 1))
    d = g.node("Conv", [d, arange], "model.22.dfl.conv", kernel_shape=[1, 1])
    d = g.node("Reshape", [d, g.shape("model.22.dfl.out", [1, 4, a])], "model.22.dfl.out")
    # dist2bbox(xywh=True): lt, rb = chunk(2); x1y1 = anchor - lt; x2y2 = anchor + rb.
    lt, rb = g.split(d, "model.22.chunk", [2, 2], axis=1)
    anchor = g.const("model.22.anchors", np.concatenate(anchors, 1)[None].astype(np.float32))
    x1y1 = g.node("Sub", [anchor, lt], "model.22.x1y1")
    x2y2 = g.node("Add", [anchor, rb], "model.22.x2y2")
    two = g.const("model.22.two", np.array(2.0, np.float32))
    cxy = g.node("Div", [g.node("Add", [x1y1, x2y2], "model.22.c_sum"), two], "model.22.c_xy")
    wh = g.node("Sub", [x2y2, x1y1], "model.22.wh")
    dbox = g.node("Mul", [g.node("Concat", [cxy, wh], "model.22.xywh", axis=1),
                          g.const("model.22.strides", np.concatenate(strides, 1)[None].astype(np.float32))],
                  "model.22.dbox")
    y = g.node("Concat", [dbox, g.node("Sigmoid", [cls], "model.22.cls_sigmoid")], "output0", axis=1)
    g.output(y)
    return g.model(opset)


def yolov5_decode(hw: int = 4, nc: int = 80, head: int = 2, opset: int = 12) -> onnx.ModelProto:
    """YOLOv5's Detect decode of one head alone: input `head` [1, 3 * (nc + 5), hw, hw] (the head conv's
    output), output `output0` [1, 3 * hw * hw, nc + 5]; the rank-5 ops of the whole model, cheaply."""
    g = _Yolo("yolov5_decode", 0, opset, "scales")
    x = g.input("head", (1, 3 * (nc + 5), hw, hw))
    g.output(g.node("Identity", [_v5_decode(g, x, head, hw, nc + 5, STRIDES[head])], "output0"))
    return g.model(opset)

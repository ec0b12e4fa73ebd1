"""LR-ASPP on a MobileNetV3 backbone as torch.onnx.export (opset 17) writes torchvision's
lraspp_mobilenet_v3_large (eval mode: each BatchNorm folded into its Conv's weight and bias, as the
export's eval peephole fuses them; random filters with a bias stand for the folded pair).

What the export carries that the other test models do not: the backbone built `dilated=True` (the
last stage's depthwise 5x5 convs with dilation 2 and stride 1, pads 4), squeeze-excite as
torchvision's SqueezeExcitation writes it (`scale * input`: the gate is the Mul's first operand,
HardSigmoid alpha 1/6), the LR-ASPP head (1x1 conv + ReLU on the high features, gated by
GlobalAveragePool + 1x1 conv without bias + Sigmoid, the low branch's 1x1 classifier Added to the
high one's) and both `F.interpolate(size=..., mode="bilinear", align_corners=False)` as the
symbolic writes them: a Resize with empty roi and scales, `sizes` computed from Shape ops
(`Concat(Slice(Shape(x), 0, 2), Cast(Concat(Unsqueeze(Gather(Shape(ref), 2)), ...)))`), mode
linear, half_pixel, cubic_coeff_a -0.75, nearest_mode floor. Small widths; the low features are
the output of the first block of the stride-8 stage (`stage_indices[-4]`, as torchvision picks it).
"""

from __future__ import annotations

import onnx
from onnx import TensorProto

from tests.models.builder import GraphBuilder
from tests.models.cnn import make_divisible
from tests.models.lm import dim, unsqueeze
from tests.models.mobile import squeeze_excite

# (in, kernel, expanded, out, squeeze-excite, activation, stride, dilation): MobileNetV3-Large's
# bneck_conf rows, narrowed and shortened; the last stage dilated as `dilated=True` builds it.
SMALL_V3: tuple[tuple[int, int, int, int, bool, str, int, int], ...] = (
    (8, 3, 8, 8, False, "RE", 1, 1),
    (8, 3, 24, 12, False, "RE", 2, 1),
    (12, 5, 36, 16, True, "RE", 2, 1),  # C2: output stride 8, the low features
    (16, 5, 48, 16, True, "RE", 1, 1),
    (16, 3, 48, 24, False, "HS", 2, 1),
    (24, 3, 48, 24, True, "HS", 1, 1),
    (24, 5, 72, 32, True, "HS", 2, 2),  # C4: dilated, so stride 1
    (32, 5, 96, 32, True, "HS", 1, 2),
)


def _act(g: GraphBuilder, x: str, name: str, kind: str) -> str:
    return g.node("HardSwish", [x], name) if kind == "HS" else g.relu(x, name)


def _inverted_residual(g: GraphBuilder, x: str, name: str, row) -> str:
    cin, k, expanded, cout, se, act, stride, dilation = row
    y = x
    if expanded != cin:
        y = _act(g, g.conv(y, f"{name}.block.0", cin, expanded, 1), f"{name}.block.0.act", act)
    dw = f"{name}.block.{1 if expanded != cin else 0}"
    y = g.conv(y, dw, expanded, expanded, k, 1 if dilation > 1 else stride, group=expanded, dilation=dilation)
    y = _act(g, y, f"{dw}.act", act)
    if se:
        y = squeeze_excite(g, y, f"{name}.block.se", expanded, make_divisible(expanded // 4), "HardSigmoid", g.relu)
    y = g.conv(y, f"{name}.block.project", expanded, cout, 1)
    return g.node("Add", [y, x], f"{name}.add") if stride == 1 and cin == cout else y


def _interpolate(g: GraphBuilder, x: str, ref: str, name: str) -> str:
    """F.interpolate(x, size=ref.shape[-2:], mode="bilinear", align_corners=False)."""
    hw = [unsqueeze(g, dim(g, ref, axis, f"{name}.size{axis}"), 0, f"{name}.size{axis}.unsqueeze") for axis in (2, 3)]
    size = g.node("Cast", [g.node("Concat", hw, f"{name}.size", axis=0)], f"{name}.size.cast", to=TensorProto.INT64)
    head = g.node("Slice", [g.node("Shape", [x], f"{name}.shape"), g.shape_const(f"{name}.starts", [0]),
                            g.shape_const(f"{name}.ends", [2]), g.shape_const(f"{name}.axes", [0])], f"{name}.head")
    sizes = g.node("Concat", [head, size], f"{name}.sizes", axis=0)
    return g.node("Resize", [x, "", "", sizes], name, mode="linear", coordinate_transformation_mode="half_pixel",
                  cubic_coeff_a=-0.75, nearest_mode="floor")


def lraspp_mobilenetv3(input_size: int = 64, num_classes: int = 3, inter_channels: int = 16,
                       seed: int = 0) -> onnx.ModelProto:
    """Input `input` [1, 3, S, S]; output `out` [1, classes, S, S] (the logits at the input's size)."""
    g = GraphBuilder("lraspp_mobilenet_v3", seed)
    image = g.input("input", (1, 3, input_size, input_size))
    x = g.node("HardSwish", [g.conv(image, "backbone.0.0", 3, SMALL_V3[0][0], 3, 2)], "backbone.0.2")
    stage_starts = [0] + [i + 1 for i, row in enumerate(SMALL_V3) if row[6] > 1] + [len(SMALL_V3) + 1]
    low_index = stage_starts[-4]
    low = None
    for i, row in enumerate(SMALL_V3):
        x = _inverted_residual(g, x, f"backbone.{i + 1}", row)
        if i + 1 == low_index:
            low = x
    cin, last = SMALL_V3[-1][3], 6 * SMALL_V3[-1][3]
    high = g.node("HardSwish", [g.conv(x, f"backbone.{len(SMALL_V3) + 1}.0", cin, last, 1)],
                  f"backbone.{len(SMALL_V3) + 1}.2")
    y = g.relu(g.conv(high, "classifier.cbr.0", last, inter_channels, 1), "classifier.cbr.2")
    s = g.node("GlobalAveragePool", [high], "classifier.scale.0")
    s = g.node("Sigmoid", [g.conv(s, "classifier.scale.1", last, inter_channels, 1, bias=False)], "classifier.scale.2")
    y = _interpolate(g, g.node("Mul", [y, s], "classifier.mul"), low, "classifier.interpolate")
    low_channels = SMALL_V3[low_index - 1][3]
    out = g.node("Add", [g.conv(low, "classifier.low_classifier", low_channels, num_classes, 1),
                         g.conv(y, "classifier.high_classifier", inter_channels, num_classes, 1)], "classifier.add")
    g.output(_interpolate(g, out, image, "out"))
    return g.model(17)

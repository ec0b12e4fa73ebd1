"""SqueezeNet 1.1 as torch.onnx.export (opset 13-17) writes torchvision's squeezenet1_1 (eval mode).

What the export carries that the other test models do not: fire modules (a 1x1 squeeze conv + ReLU
feeding a 1x1 and a 3x3 expand conv, each + ReLU, Concat on C), MaxPool 3x3/2 with ceil_mode=1 and
no padding (the last window hangs over the edge where (H - 3) is odd), no Dropout (absent in an eval
export), the classifier as a 1x1 conv + ReLU then GlobalAveragePool and Flatten (no Gemm). Channel
widths are torchvision's divided by `shrink`.
"""

from __future__ import annotations

import onnx

from tests.models.builder import GraphBuilder

# torchvision's squeezenet1_1 features: "M" a ceil-mode MaxPool, else a Fire (squeeze, expand1x1, expand3x3).
FEATURES_1_1 = ("M", (16, 64, 64), (16, 64, 64), "M", (32, 128, 128), (32, 128, 128), "M",
                (48, 192, 192), (48, 192, 192), (64, 256, 256), (64, 256, 256))


def _fire(g: GraphBuilder, x: str, name: str, cin: int, squeeze: int, e1: int, e3: int) -> str:
    s = g.relu(g.conv(x, f"{name}.squeeze", cin, squeeze, 1), f"{name}.squeeze_activation")
    a = g.relu(g.conv(s, f"{name}.expand1x1", squeeze, e1, 1), f"{name}.expand1x1_activation")
    b = g.relu(g.conv(s, f"{name}.expand3x3", squeeze, e3, 3), f"{name}.expand3x3_activation")
    return g.node("Concat", [a, b], f"{name}.cat", axis=1)


def squeezenet1_1(input_size: int = 40, num_classes: int = 10, shrink: int = 4, opset: int = 13,
                  seed: int = 0) -> onnx.ModelProto:
    """Input `input` [1, 3, S, S]; output `output` [1, classes]. At S=40 the maps are 19, 9, 4 and 2
    wide, so the last MaxPool's ceil mode adds a window (floor mode would give 1)."""
    g = GraphBuilder("squeezenet1_1", seed)
    cin = 64 // shrink
    x = g.relu(g.conv(g.input("input", (1, 3, input_size, input_size)), "features.0", 3, cin, 3, 2, pad=0),
               "features.1")
    for i, layer in enumerate(FEATURES_1_1, start=2):
        if layer == "M":
            x = g.node("MaxPool", [x], f"features.{i}", kernel_shape=[3, 3], strides=[2, 2], pads=[0, 0, 0, 0],
                       ceil_mode=1)
        else:
            squeeze, e1, e3 = (c // shrink for c in layer)
            x = _fire(g, x, f"features.{i}", cin, squeeze, e1, e3)
            cin = e1 + e3
    x = g.relu(g.conv(x, "classifier.1", cin, num_classes, 1), "classifier.2")
    x = g.node("GlobalAveragePool", [x], "classifier.3")
    g.output(g.node("Flatten", [x], "output", axis=1))
    return g.model(opset)

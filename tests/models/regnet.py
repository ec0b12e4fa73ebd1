"""RegNetY as torch.onnx.export (opset 17) writes torchvision's regnet_y_400mf (eval mode: BatchNorm
folded into each Conv, as the export fuses them; random filters with a bias stand for the pair).

What the export carries that the other test models do not: grouped 3x3 convs with a fixed group
width (8 channels per group: groups > 1 but not depthwise), stride 2 in the grouped conv of each
stage's first block, squeeze-excite with ReLU and Sigmoid whose squeeze width comes from the block's
input (`int(round(0.25 * w_in))`), the projection shortcut (1x1 conv, stride 2) Added to the
bottleneck before the block's ReLU. Stem 3x3/2 + ReLU; head GlobalAveragePool, Flatten, Gemm.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx

from tests.models.builder import GraphBuilder
from tests.models.mobile import squeeze_excite


def _block(g: GraphBuilder, x: str, name: str, w_in: int, w_out: int, stride: int, group_width: int) -> str:
    """ResBottleneckBlock (bottleneck multiplier 1): a 1x1, b 3x3 grouped, se, c 1x1; shortcut."""
    f = g.relu(g.conv(x, f"{name}.f.a", w_in, w_out, 1), f"{name}.f.a.relu")
    f = g.relu(g.conv(f, f"{name}.f.b", w_out, w_out, 3, stride, group=w_out // group_width), f"{name}.f.b.relu")
    f = squeeze_excite(g, f, f"{name}.f.se", w_out, int(round(0.25 * w_in)), "Sigmoid", g.relu)
    f = g.conv(f, f"{name}.f.c", w_out, w_out, 1)
    shortcut = g.conv(x, f"{name}.proj", w_in, w_out, 1, stride, pad=0) if w_in != w_out or stride != 1 else x
    return g.relu(g.node("Add", [shortcut, f], f"{name}.add"), f"{name}.activation")


def regnet_y(input_size: int = 32, num_classes: int = 10, stem: int = 8, widths: Sequence[int] = (16, 32),
             depths: Sequence[int] = (1, 2), group_width: int = 8, seed: int = 0) -> onnx.ModelProto:
    """Input `input` [1, 3, S, S]; output `output` [1, classes]."""
    g = GraphBuilder("regnet_y", seed)
    x = g.relu(g.conv(g.input("input", (1, 3, input_size, input_size)), "stem.0", 3, stem, 3, 2), "stem.2")
    w_in = stem
    for si, (w, n) in enumerate(zip(widths, depths, strict=True)):
        for i in range(n):
            x = _block(g, x, f"trunk_output.block{si + 1}.block{si + 1}-{i}", w_in, w, 2 if i == 0 else 1,
                       group_width)
            w_in = w
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x], "avgpool")], "flatten", axis=1)
    g.output(g.gemm(x, "output", w_in, num_classes))
    return g.model(17)

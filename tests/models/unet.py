"""UNets as torch.onnx.export (opset 13-17) writes the Carvana-style segmentation models.

Encoder: double 3x3 Conv + BatchNorm + ReLU blocks (convs without bias, BN left unfolded as
torch's eval export writes it), 2x2 MaxPool between them. Decoder: ConvTranspose(k=2, stride=2)
upsampling (milesial's Pytorch-UNet with bilinear=False, segmentation_models_pytorch's transposed
decoder), or `nn.Upsample(scale_factor=2, mode="bilinear", align_corners=True)` (bilinear=True: a
Resize, linear, align_corners, roi left out from opset 13 on, constant `scales`); each upsampled map
Concat-ed with the encoder's skip (skip first, as `torch.cat([x2, x1], dim=1)`), a double conv; a
final 1x1 Conv with bias and Sigmoid (the binary mask's probability).
"""

from __future__ import annotations

import numpy as np
import onnx

from tests.models.builder import GraphBuilder


def _double_conv(g: GraphBuilder, x: str, name: str, cin: int, cout: int) -> str:
    x = g.relu(g.conv_bn(x, f"{name}.double_conv.0", cin, cout, 3), f"{name}.double_conv.2")
    return g.relu(g.conv_bn(x, f"{name}.double_conv.3", cout, cout, 3), f"{name}.double_conv.5")


def _up(g: GraphBuilder, x: str, skip: str, name: str, cin: int, cout: int, bilinear: bool) -> str:
    if bilinear:
        scales = g.const(f"{name}.up.scales", np.array([1, 1, 2, 2], np.float32))
        x = g.node("Resize", [x, "", scales], f"{name}.up", mode="linear",
                   coordinate_transformation_mode="align_corners")
        cup = cin
    else:
        cup = cin // 2
        w = g.weight(f"{name}.up.weight", (cin, cup, 2, 2), fan_in=cin * 4)
        x = g.node("ConvTranspose", [x, w, g.small(f"{name}.up.bias", (cup,))], f"{name}.up",
                   kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 0, 0], dilations=[1, 1], group=1)
    x = g.node("Concat", [skip, x], f"{name}.cat", axis=1)
    return _double_conv(g, x, f"{name}.conv", cout + cup, cout)  # the skip has cout channels


def unet(input_size: int = 32, widths: tuple[int, ...] = (8, 16, 32), classes: int = 1,
         bilinear: tuple[bool, ...] = (False, True), opset: int = 13, seed: int = 0) -> onnx.ModelProto:
    """Input `input` [1, 3, S, S]; output `output` [1, classes, S, S] (sigmoid). `bilinear[i]` picks the
    i-th decoder stage's upsampling (from the bottom): a Resize or a ConvTranspose."""
    if len(bilinear) != len(widths) - 1:
        raise ValueError("one upsampling form per decoder stage")
    g = GraphBuilder("unet", seed)
    x = _double_conv(g, g.input("input", (1, 3, input_size, input_size)), "inc", 3, widths[0])
    skips = [x]
    for i, (cin, cout) in enumerate(zip(widths, widths[1:])):
        x = g.node("MaxPool", [x], f"down{i + 1}.maxpool", kernel_shape=[2, 2], strides=[2, 2])
        x = _double_conv(g, x, f"down{i + 1}.conv", cin, cout)
        skips.append(x)
    skips.pop()
    for i, bi in enumerate(bilinear):
        cin = widths[-1 - i]
        x = _up(g, x, skips.pop(), f"up{i + 1}", cin, widths[-2 - i], bi)
    logits = g.conv(x, "outc.conv", widths[0], classes, 1)
    g.output(g.node("Sigmoid", [logits], "output"))
    return g.model(opset)

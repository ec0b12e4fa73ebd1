"""Classification CNNs: ResNet-18 and MobileNetV2, shaped like the torchvision exports."""

from __future__ import annotations

from collections.abc import Sequence

import onnx

from tests.models.builder import GraphBuilder


def make_divisible(v: float, divisor: int = 8) -> int:
    """torchvision's _make_divisible (MobileNetV2/V3's channel rounding): the nearest multiple of
    `divisor`, at least `divisor` and never more than 10% below v."""
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


def resnet18(
    input_size: int = 224, num_classes: int = 1000, width: int = 64, seed: int = 0
) -> onnx.ModelProto:
    """ResNet-18: 7x7/2 stem conv, 3x3/2 maxpool, 4 stages of 2 basic blocks (the first block of
    stages 2-4 strides by 2 with a 1x1 downsample conv), GlobalAveragePool, Flatten, Gemm.

    `width` is the stem's channel count (64 in the paper); tests use a smaller one for speed.
    Input "input" 1x3xSxS, output "output" 1xnum_classes."""
    g = GraphBuilder("resnet18", seed)
    x = g.input("input", (1, 3, input_size, input_size))
    x = g.conv_bn(x, "conv1", 3, width, 7, stride=2)
    x = g.relu(x, "relu")
    x = g.node("MaxPool", [x], "maxpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = width
    for stage in range(4):
        cout = width * 2**stage
        for block in range(2):
            stride = 2 if stage > 0 and block == 0 else 1
            name = f"layer{stage + 1}.{block}"
            y = g.relu(g.conv_bn(x, f"{name}.1", cin, cout, 3, stride), f"{name}.relu1")
            y = g.conv_bn(y, f"{name}.2", cout, cout, 3)
            shortcut = x
            if stride != 1 or cin != cout:
                shortcut = g.conv_bn(x, f"{name}.downsample", cin, cout, 1, stride)
            x = g.relu(g.node("Add", [y, shortcut], f"{name}.add"), f"{name}.relu2")
            cin = cout
    x = g.node("GlobalAveragePool", [x], "avgpool")
    x = g.node("Flatten", [x], "flatten", axis=1)
    g.output(g.gemm(x, "output", cin, num_classes))
    return g.model()


# (expansion t, output channels c, repeats n, first stride s) of MobileNetV2's inverted residuals.
MOBILENETV2_SETTINGS: tuple[tuple[int, int, int, int], ...] = (
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
)


def mobilenetv2(
    input_size: int = 224,
    num_classes: int = 1000,
    width_mult: float = 1.0,
    settings: Sequence[tuple[int, int, int, int]] = MOBILENETV2_SETTINGS,
    seed: int = 0,
) -> onnx.ModelProto:
    """MobileNetV2: 3x3/2 stem, inverted residual blocks (1x1 expand + Clip(0,6), 3x3 depthwise
    conv (group = channels) + Clip(0,6), 1x1 linear projection, Add when shapes allow), 1x1 conv
    to 1280, GlobalAveragePool, Flatten, Gemm. Input "input" 1x3xSxS, output "output"."""
    g = GraphBuilder("mobilenetv2", seed)
    x = g.input("input", (1, 3, input_size, input_size))
    cin = make_divisible(32 * width_mult)
    x = g.relu6(g.conv_bn(x, "features.0", 3, cin, 3, stride=2), "features.0.relu6")
    index = 1
    for t, c, n, s in settings:
        cout = make_divisible(c * width_mult)
        for i in range(n):
            stride = s if i == 0 else 1
            name = f"features.{index}"
            hidden = cin * t
            y = x
            if t != 1:
                y = g.relu6(g.conv_bn(y, f"{name}.expand", cin, hidden, 1), f"{name}.expand.relu6")
            y = g.conv_bn(y, f"{name}.dw", hidden, hidden, 3, stride, group=hidden)
            y = g.relu6(y, f"{name}.dw.relu6")
            y = g.conv_bn(y, f"{name}.project", hidden, cout, 1)
            x = g.node("Add", [x, y], f"{name}.add") if stride == 1 and cin == cout else y
            cin = cout
            index += 1
    last = make_divisible(1280 * max(1.0, width_mult))
    x = g.relu6(g.conv_bn(x, f"features.{index}", cin, last, 1), f"features.{index}.relu6")
    x = g.node("GlobalAveragePool", [x], "avgpool")
    x = g.node("Flatten", [x], "flatten", axis=1)
    g.output(g.gemm(x, "output", last, num_classes))
    return g.model()


def densenet(
    input_size: int = 224,
    num_classes: int = 1000,
    growth: int = 32,
    blocks: Sequence[int] = (6, 12, 24, 16),
    init_channels: int = 64,
    seed: int = 0,
) -> onnx.ModelProto:
    """DenseNet-121-style: 7x7/2 stem conv + BN + ReLU + 3x3/2 MaxPool; dense layers (BN, ReLU,
    1x1 conv to 4*growth, BN, ReLU, 3x3 conv to growth) whose output is Concat'ed to their input;
    transitions (BN, ReLU, 1x1 conv halving the channels, 2x2/2 AveragePool); final BN + ReLU,
    GlobalAveragePool, Flatten, Gemm. The BNs before ReLU stay BatchNorm (nothing to fold them
    into). Input "input", output "output"."""
    g = GraphBuilder("densenet", seed)
    x = g.input("input", (1, 3, input_size, input_size))
    x = g.relu(g.conv_bn(x, "features.conv0", 3, init_channels, 7, stride=2), "features.relu0")
    x = g.node("MaxPool", [x], "features.pool0", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    c = init_channels
    for bi, n in enumerate(blocks):
        for li in range(n):
            name = f"features.denseblock{bi + 1}.layer{li + 1}"
            y = g.relu(g.batchnorm(x, f"{name}.norm1", c), f"{name}.relu1")
            y = g.conv_bn(y, f"{name}.conv1", c, 4 * growth, 1)
            y = g.conv(g.relu(y, f"{name}.relu2"), f"{name}.conv2", 4 * growth, growth, 3, bias=False)
            x = g.node("Concat", [x, y], f"{name}.concat", axis=1)
            c += growth
        if bi < len(blocks) - 1:
            name = f"features.transition{bi + 1}"
            y = g.relu(g.batchnorm(x, f"{name}.norm", c), f"{name}.relu")
            y = g.conv(y, f"{name}.conv", c, c // 2, 1, bias=False)
            x = g.node("AveragePool", [y], f"{name}.pool", kernel_shape=[2, 2], strides=[2, 2])
            c //= 2
    x = g.relu(g.batchnorm(x, "features.norm5", c), "features.relu5")
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x], "avgpool")], "flatten", axis=1)
    g.output(g.gemm(x, "output", c, num_classes))
    return g.model()

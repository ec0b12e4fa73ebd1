"""Mobile CNNs: EfficientNet-style (MBConv with squeeze-excite) and ShuffleNetV2-style (channel shuffle),
shaped like the torchvision exports, with `repeats`/`widths` small enough for tests."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import onnx

from tests.models.builder import GraphBuilder


def activation(g: GraphBuilder, x: str, name: str, kind: str) -> str:
    """SiLU as torch exports it (x * Sigmoid(x)), or the HardSwish op (MobileNetV3)."""
    if kind == "silu":
        return g.node("Mul", [x, g.node("Sigmoid", [x], f"{name}.sigmoid")], name)
    if kind == "hardswish":
        return g.node("HardSwish", [x], name)
    raise ValueError(f"activation must be 'silu' or 'hardswish', got {kind!r}")


# The squeeze-excite gates: Sigmoid, or torch's hardsigmoid (relu6(x + 3) / 6) as ONNX's HardSigmoid.
_GATES = {"Sigmoid": {}, "HardSigmoid": {"alpha": 1.0 / 6, "beta": 0.5}}


def squeeze_excite(g: GraphBuilder, x: str, name: str, c: int, squeeze: int, gate: str,
                   act: Callable[[str, str], str], torchvision: bool = True) -> str:
    """x times a gate of its channel means: GlobalAveragePool, 1x1 conv down to `squeeze` channels,
    `act` ((input, name) -> output), 1x1 conv up, `gate` (a _GATES op). torchvision's
    SqueezeExcitation names them `activation` and `scale_activation` and multiplies `scale * input`;
    with `torchvision` false the names are `act` and `gate` and the product `input * gate`
    (EfficientNet's builder here)."""
    act_name, gate_name = ("activation", "scale_activation") if torchvision else ("act", "gate")
    s = g.node("GlobalAveragePool", [x], f"{name}.avgpool")
    s = act(g.conv(s, f"{name}.fc1", c, squeeze, 1), f"{name}.{act_name}")
    s = g.node(gate, [g.conv(s, f"{name}.fc2", squeeze, c, 1)], f"{name}.{gate_name}", **_GATES[gate])
    return g.node("Mul", [s, x] if torchvision else [x, s], name)


# (expansion t, kernel k, first stride s, output channels c, repeats n) of EfficientNet-B0's MBConv stages.
EFFICIENTNET_B0: tuple[tuple[int, int, int, int, int], ...] = (
    (1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3),
    (6, 5, 1, 112, 3), (6, 5, 2, 192, 4), (6, 3, 1, 320, 1),
)


def efficientnet(
    input_size: int = 224,
    num_classes: int = 1000,
    settings: Sequence[tuple[int, int, int, int, int]] = EFFICIENTNET_B0,
    max_repeats: int | None = None,
    width: float = 1.0,
    act: str = "silu",
    seed: int = 0,
) -> onnx.ModelProto:
    """EfficientNet-B0-style: 3x3/2 stem, MBConv blocks (1x1 expand + BN + act, kxk depthwise
    (3x3 or 5x5, stride 1 or 2) + BN + act, squeeze-excite, 1x1 project + BN, Add when shapes
    allow), 1x1 head conv to 1280 + act, GlobalAveragePool, Flatten, Gemm. `act` "hardswish" gives
    MobileNetV3's activations. `max_repeats` caps each stage's repeats. Input "input", output "output"."""
    g = GraphBuilder("efficientnet", seed)
    gate = "Sigmoid" if act == "silu" else "HardSigmoid"  # MobileNetV3's with its hardswish
    x = g.input("input", (1, 3, input_size, input_size))
    cin = max(8, int(32 * width))
    x = activation(g, g.conv_bn(x, "stem", 3, cin, 3, stride=2), "stem.act", act)
    index = 0
    for t, k, s, c, n in settings:
        cout = max(8, int(c * width))
        for i in range(n if max_repeats is None else min(n, max_repeats)):
            name = f"blocks.{index}"
            stride = s if i == 0 else 1
            hidden = cin * t
            y = x
            if t != 1:
                y = activation(g, g.conv_bn(y, f"{name}.expand", cin, hidden, 1), f"{name}.expand.act", act)
            y = activation(g, g.conv_bn(y, f"{name}.dw", hidden, hidden, k, stride, group=hidden), f"{name}.dw.act", act)
            y = squeeze_excite(g, y, f"{name}.se", hidden, max(1, cin // 4), gate, lambda v, n: activation(g, v, n, act),
                               torchvision=False)
            y = g.conv_bn(y, f"{name}.project", hidden, cout, 1)
            x = g.node("Add", [x, y], f"{name}.add") if stride == 1 and cin == cout else y
            cin = cout
            index += 1
    head = max(8, int(1280 * width))
    x = activation(g, g.conv_bn(x, "head", cin, head, 1), "head.act", act)
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x], "avgpool")], "flatten", axis=1)
    g.output(g.gemm(x, "output", head, num_classes))
    return g.model()


def _channel_shuffle(g: GraphBuilder, x: str, name: str, c: int, size: int, groups: int = 2) -> str:
    """Reshape [1, g, C/g, H, W] -> Transpose(0, 2, 1, 3, 4) -> Reshape [1, C, H, W], as torch exports it."""
    y = g.node("Reshape", [x, g.shape_const(f"{name}.split_shape", (1, groups, c // groups, size, size))],
               f"{name}.split")
    y = g.node("Transpose", [y], f"{name}.transpose", perm=[0, 2, 1, 3, 4])
    return g.node("Reshape", [y, g.shape_const(f"{name}.merge_shape", (1, c, size, size))], name)


def _shuffle_branch(g: GraphBuilder, x: str, name: str, cin: int, c: int, stride: int, group: int) -> str:
    """1x1 conv (grouped by `group`, as ShuffleNetV1) + BN + ReLU, 3x3 depthwise + BN, 1x1 + BN + ReLU."""
    y = g.relu(g.conv_bn(x, f"{name}.pw1", cin, c, 1, group=group), f"{name}.pw1.relu")
    y = g.conv_bn(y, f"{name}.dw", c, c, 3, stride, group=c)
    return g.relu(g.conv_bn(y, f"{name}.pw2", c, c, 1), f"{name}.pw2.relu")


def shufflenet(
    input_size: int = 224,
    num_classes: int = 1000,
    stage_channels: Sequence[int] = (116, 232, 464),
    repeats: Sequence[int] = (4, 8, 4),
    last_channels: int = 1024,
    group: int = 2,
    seed: int = 0,
) -> onnx.ModelProto:
    """ShuffleNetV2-style: 3x3/2 stem conv 24 + BN + ReLU, 3x3/2 MaxPool, stages whose first unit
    strides by 2 (two branches on the whole input) and whose other units Split the channels in two
    and run one half through the branch; every unit ends in Concat + channel shuffle. The branch's
    first 1x1 conv is grouped by `group` (ShuffleNetV1's grouped pointwise conv). 1x1 conv to
    `last_channels`, GlobalAveragePool, Flatten, Gemm. Input "input", output "output"."""
    g = GraphBuilder("shufflenet", seed)
    x = g.input("input", (1, 3, input_size, input_size))
    cin = 24
    x = g.relu(g.conv_bn(x, "conv1", 3, cin, 3, stride=2), "conv1.relu")
    x = g.node("MaxPool", [x], "maxpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    size = (input_size + 1) // 2
    size = (size + 1) // 2
    for si, (c, n) in enumerate(zip(stage_channels, repeats, strict=True)):
        half = c // 2
        for i in range(n):
            name = f"stage{si + 2}.{i}"
            if i == 0:
                left = g.conv_bn(x, f"{name}.branch1.dw", cin, cin, 3, 2, group=cin)
                left = g.relu(g.conv_bn(left, f"{name}.branch1.pw", cin, half, 1), f"{name}.branch1.relu")
                right = _shuffle_branch(g, x, f"{name}.branch2", cin, half, 2, group)
                size = (size + 1) // 2
            else:
                left, x2 = g.split(x, f"{name}.chunk", [half, half], 1, [f"{name}.x1", f"{name}.x2"],
                                   f"{name}.split_sizes")
                right = _shuffle_branch(g, x2, f"{name}.branch2", half, half, 1, group)
            x = g.node("Concat", [left, right], f"{name}.concat", axis=1)
            x = _channel_shuffle(g, x, f"{name}.shuffle", c, size)
            cin = c
    x = g.relu(g.conv_bn(x, "conv5", cin, last_channels, 1), "conv5.relu")
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x], "avgpool")], "flatten", axis=1)
    g.output(g.gemm(x, "output", last_channels, num_classes))
    return g.model()

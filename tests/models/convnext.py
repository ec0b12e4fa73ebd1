"""ConvNeXt-style and ViT-style image models, shaped like the torchvision exports."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx

from tests.models.builder import GraphBuilder
from tests.models.transformer import gelu_layer, layernorm, linear, encoder_layer


def _layernorm_2d(g: GraphBuilder, x: str, name: str, c: int) -> str:
    """Channels-first LayerNorm as torchvision's LayerNorm2d exports: Transpose to NHWC, LayerNorm, back."""
    y = g.node("Transpose", [x], f"{name}.to_nhwc", perm=[0, 2, 3, 1])
    y = layernorm(g, y, f"{name}.ln", c)
    return g.node("Transpose", [y], name, perm=[0, 3, 1, 2])


def convnext(
    input_size: int = 224,
    num_classes: int = 1000,
    dims: Sequence[int] = (96, 192, 384, 768),
    depths: Sequence[int] = (3, 3, 9, 3),
    seed: int = 0,
) -> onnx.ModelProto:
    """ConvNeXt-tiny-style: 4x4/4 stem conv + LayerNorm2d; blocks of 7x7 depthwise conv, Transpose
    to channels-last, LayerNorm, Linear 4x (MatMul + Add), GELU (erf), Linear back, layer scale
    (Mul by a per-channel gamma), Transpose back, residual Add; between stages LayerNorm2d and a
    2x2/2 conv. Head: GlobalAveragePool, Flatten, LayerNorm, Gemm. Input "input", output "output"."""
    g = GraphBuilder("convnext", seed)
    x = g.input("input", (1, 3, input_size, input_size))
    x = _layernorm_2d(g, g.conv(x, "stem.conv", 3, dims[0], 4, stride=4, pad=0), "stem.norm", dims[0])
    cin = dims[0]
    for si, (c, depth) in enumerate(zip(dims, depths, strict=True)):
        if si > 0:
            x = _layernorm_2d(g, x, f"stages.{si}.down.norm", cin)
            x = g.conv(x, f"stages.{si}.down.conv", cin, c, 2, stride=2, pad=0)
        for b in range(depth):
            name = f"stages.{si}.{b}"
            y = g.conv(x, f"{name}.dwconv", c, c, 7, group=c)
            y = g.node("Transpose", [y], f"{name}.to_nhwc", perm=[0, 2, 3, 1])
            y = layernorm(g, y, f"{name}.norm", c)
            y = gelu_layer(g, linear(g, y, f"{name}.pwconv1", c, 4 * c), f"{name}.gelu", "none")
            y = linear(g, y, f"{name}.pwconv2", 4 * c, c)
            gamma = g.const(f"{name}.gamma", g.rng.uniform(0.1, 1.0, c).astype(np.float32))
            y = g.node("Mul", [y, gamma], f"{name}.layer_scale")
            y = g.node("Transpose", [y], f"{name}.to_nchw", perm=[0, 3, 1, 2])
            x = g.node("Add", [x, y], f"{name}.add")
        cin = c
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x], "avgpool")], "flatten", axis=1)
    x = layernorm(g, x, "head.norm", cin)
    g.output(g.gemm(x, "output", cin, num_classes))
    return g.model()


def vit(
    input_size: int = 224,
    patch: int = 16,
    d_model: int = 192,
    depth: int = 12,
    num_heads: int = 3,
    num_classes: int = 1000,
    seed: int = 0,
) -> onnx.ModelProto:
    """ViT-style encoder: patch-embed conv (patch x patch, stride patch), Reshape + Transpose to
    tokens, class token Concat, position embedding Add, `depth` pre-LN encoder layers (attention
    MatMul/Softmax, LayerNorm, erf GELU), final LayerNorm, the class token by Gather, Gemm head.
    Input "input" 1x3xSxS, output "output"."""
    g = GraphBuilder("vit", seed)
    x = g.input("input", (1, 3, input_size, input_size))
    n = (input_size // patch) ** 2
    x = g.conv(x, "patch_embed", 3, d_model, patch, stride=patch, pad=0)
    x = g.node("Reshape", [x, g.shape_const("tokens.shape", (1, d_model, n))], "tokens.flatten")
    x = g.node("Transpose", [x], "tokens", perm=[0, 2, 1])
    x = g.node("Concat", [g.small("cls_token", (1, 1, d_model)), x], "tokens.cls", axis=1)
    x = g.node("Add", [x, g.small("pos_embedding", (1, n + 1, d_model))], "tokens.pos")
    for i in range(depth):
        x = encoder_layer(g, x, f"layers.{i}.", f"layers.{i}", 1, n + 1, d_model, num_heads, 4 * d_model)
    x = layernorm(g, x, "norm", d_model)
    x = g.node("Gather", [x, g.const("cls_index", np.array(0, np.int64))], "cls", axis=1)
    g.output(g.gemm(x, "output", d_model, num_classes))
    return g.model()

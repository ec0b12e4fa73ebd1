"""MobileViT (xxs-style) as torch.onnx.export (opset 17) writes timm's mobilevit_xxs (eval mode:
BatchNorm folded into each ConvNormAct's Conv; random filters with a bias stand for the pair).

What the export carries that the other test models do not: the MobileViT block's unfold of a
feature map into 2x2 patches and its fold back (rank-4 Reshapes around Transposes [0, 2, 1, 3] and
[0, 3, 2, 1], as timm's MobileVitBlock writes them: [B*C*nh, ph, nw, pw] -> [B, C, N, P] -> [B*P,
N, C] and back), a transformer on the patches whose qkv is unbound as torch's unbind symbolic writes
it from opset 13 (Split into ones on axis 0, then Squeeze), SiLU as x * Sigmoid(x) throughout (MV2
blocks, the convs and the MLP), and the block's Concat of its input with the projected features
before the 3x3 fusion conv. Small widths: channels 8/12, transformer dim 16, 2 heads, patch 2.
"""

from __future__ import annotations

import numpy as np
import onnx

from tests.models.builder import GraphBuilder
from tests.models.lm import layer_norm, linear
from tests.models.mobile import activation
from tests.models.swin import view

F32 = np.float32


def _conv_act(g: GraphBuilder, x: str, name: str, cin: int, cout: int, k: int, stride: int = 1,
              group: int = 1) -> str:
    """timm's ConvNormAct (BN folded) with SiLU."""
    return activation(g, g.conv(x, f"{name}.conv", cin, cout, k, stride, group=group), f"{name}.act", "silu")


def _mv2(g: GraphBuilder, x: str, name: str, cin: int, cout: int, stride: int, expand: int = 2) -> str:
    """byobnet's BottleneckBlock as MobileViT configures it: 1x1 expand + SiLU, depthwise 3x3 + SiLU,
    1x1 project (linear out), Add when the shapes allow."""
    hidden = cin * expand
    y = _conv_act(g, x, f"{name}.conv1_1x1", cin, hidden, 1)
    y = _conv_act(g, y, f"{name}.conv2_kxk", hidden, hidden, 3, stride, group=hidden)
    y = g.conv(y, f"{name}.conv3_1x1.conv", hidden, cout, 1)
    return g.node("Add", [y, x], f"{name}.add") if stride == 1 and cin == cout else y


def _attention(g: GraphBuilder, x: str, p: str, d: int, heads: int, n: int) -> str:
    """timm's Attention (not fused) on [B*P, N, d]."""
    hd = d // heads
    qkv = view(g, linear(g, x, f"{p}.qkv", d, 3 * d), [-1, n, 3, heads, hd], f"{p}.qkv_view")
    qkv = g.node("Transpose", [qkv], f"{p}.qkv_permute", perm=[2, 0, 3, 1, 4])
    parts = g.split(qkv, f"{p}.unbind", [1, 1, 1], 0, [f"{p}.unbind_{t}" for t in "qkv"])
    axes = g.shape_const(f"{p}.unbind.axes", [0])
    q, k, v = (g.node("Squeeze", [part, axes], f"{p}.{t}") for part, t in zip(parts, "qkv", strict=True))
    q = g.node("Mul", [q, g.const(f"{p}.scale", F32(hd ** -0.5))], f"{p}.q_scaled")
    attn = g.node("MatMul", [q, g.node("Transpose", [k], f"{p}.k_t", perm=[0, 1, 3, 2])], f"{p}.scores")
    attn = g.node("Softmax", [attn], f"{p}.softmax", axis=-1)
    y = g.node("Transpose", [g.node("MatMul", [attn, v], f"{p}.context")], f"{p}.context_t", perm=[0, 2, 1, 3])
    return linear(g, view(g, y, [-1, n, d], f"{p}.context_view"), f"{p}.proj", d, d)


def _transformer_block(g: GraphBuilder, x: str, p: str, d: int, heads: int, n: int) -> str:
    y = _attention(g, layer_norm(g, x, f"{p}.norm1", d, 1e-5, 17), f"{p}.attn", d, heads, n)
    x = g.node("Add", [x, y], f"{p}.residual1")
    h = activation(g, linear(g, layer_norm(g, x, f"{p}.norm2", d, 1e-5, 17), f"{p}.mlp.fc1", d, 2 * d), f"{p}.mlp.act",
                   "silu")
    return g.node("Add", [x, linear(g, h, f"{p}.mlp.fc2", 2 * d, d)], f"{p}.residual2")


def _mobilevit_block(g: GraphBuilder, x: str, p: str, c: int, size: int, d: int, heads: int, depth: int,
                     patch: int = 2) -> str:
    """timm's MobileVitBlock on [1, c, size, size]."""
    shortcut = x
    y = _conv_act(g, x, f"{p}.conv_kxk", c, c, 3)
    y = g.conv(y, f"{p}.conv_1x1", c, d, 1, bias=False)
    nh = size // patch
    n, area = nh * nh, patch * patch
    # unfold: [B*C*nh, ph, nw, pw] -> transpose(1, 2) -> [B, C, N, P] -> transpose(1, 3) -> [B*P, N, C]
    y = g.node("Transpose", [view(g, y, [d * nh, patch, nh, patch], f"{p}.unfold_view")], f"{p}.unfold_t1",
               perm=[0, 2, 1, 3])
    y = g.node("Transpose", [view(g, y, [1, d, n, area], f"{p}.patches_view")], f"{p}.unfold_t2", perm=[0, 3, 2, 1])
    y = view(g, y, [area, n, -1], f"{p}.patches")
    for i in range(depth):
        y = _transformer_block(g, y, f"{p}.transformer.{i}", d, heads, n)
    y = layer_norm(g, y, f"{p}.norm", d, 1e-5, 17)
    # fold: [B, P, N, C] -> transpose(1, 3) -> [B*C*nh, nw, ph, pw] -> transpose(1, 2) -> [B, C, H, W]
    y = g.node("Transpose", [view(g, y, [1, area, n, -1], f"{p}.fold_view")], f"{p}.fold_t1", perm=[0, 3, 2, 1])
    y = g.node("Transpose", [view(g, y, [d * nh, nh, patch, patch], f"{p}.fold_patches")], f"{p}.fold_t2",
               perm=[0, 2, 1, 3])
    y = view(g, y, [1, d, size, size], f"{p}.folded")
    y = _conv_act(g, y, f"{p}.conv_proj", d, c, 1)
    y = g.node("Concat", [shortcut, y], f"{p}.cat", axis=1)
    return _conv_act(g, y, f"{p}.conv_fusion", 2 * c, c, 3)


def mobilevit_xxs(input_size: int = 32, num_classes: int = 10, d: int = 16, heads: int = 2, depth: int = 1,
                  seed: int = 0) -> onnx.ModelProto:
    """Stem 3x3/2, an MV2 block, an MV2 block of stride 2, a MobileViT block, 1x1 conv + SiLU,
    GlobalAveragePool, Flatten, Gemm. Input `input` [1, 3, S, S]; output `output` [1, classes]."""
    if input_size % 8:
        raise ValueError("the MobileViT block's map (input / 4) must be a whole number of 2x2 patches")
    g = GraphBuilder("mobilevit_xxs", seed)
    x = _conv_act(g, g.input("input", (1, 3, input_size, input_size)), "stem", 3, 8, 3, 2)
    x = _mv2(g, x, "stages.0.0", 8, 8, 1)
    x = _mv2(g, x, "stages.1.0", 8, 12, 2)
    x = _mobilevit_block(g, x, "stages.1.1", 12, input_size // 4, d, heads, depth)
    x = _conv_act(g, x, "final_conv", 12, 32, 1)
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x], "head.global_pool")], "head.flatten", axis=1)
    g.output(g.gemm(x, "output", 32, num_classes))
    return g.model(17)

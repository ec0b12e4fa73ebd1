"""A Swin-style stage as torch.onnx.export (opset 17) writes timm's swin_tiny_patch4_window7_224.

What the export carries that the other test models do not: channels-last tensors ([B, H, W, C]
after the patch embedding's permute), torch.roll as Slice + Concat per rolled axis (the cyclic
shift and its reversal), window_partition / window_reverse (view to rank 6, permute(0, 1, 3, 2, 4,
5), view back), the qkv Linear viewed [B_, N, 3, heads, hd] and permuted (rank 5) then unbound by
Gathers of index 0, 1, 2, the relative position bias (a Gather from the learned table by the
constant index buffer, view [N, N, heads], permute(2, 0, 1), unsqueeze(0), added to the scores),
the shifted window's attention mask (a [nW, N, N] buffer of 0 and -100, added through a view to
[B_/nW, nW, heads, N, N]), the MLP's erf GELU, and the older timm PatchMerging (x[:, 0::2, 0::2],
x[:, 1::2, 0::2], x[:, 0::2, 1::2], x[:, 1::2, 1::2] as strided Slices, Concat on C, LayerNorm,
Linear without bias). Small widths: embed 16, 2 heads, window 4, shift 2 on an 8x8 token grid.
"""

from __future__ import annotations

import numpy as np
import onnx

from tests.models.builder import GraphBuilder
from tests.models.lm import gelu_erf, layer_norm, linear, unsqueeze

F32 = np.float32


def view(g: GraphBuilder, x: str, shape, name: str) -> str:
    return g.node("Reshape", [x, g.shape_const(f"{name}.shape", shape)], name)


def _slice(g: GraphBuilder, x: str, name: str, axis: int, start: int, end: int, step: int = 1) -> str:
    inputs = [x, g.shape_const(f"{name}.starts", [start]), g.shape_const(f"{name}.ends", [end]),
              g.shape_const(f"{name}.axes", [axis])]
    if step != 1:
        inputs.append(g.shape_const(f"{name}.steps", [step]))
    return g.node("Slice", inputs, name)


def roll(g: GraphBuilder, x: str, shift: int, name: str) -> str:
    """torch.roll(x, (shift, shift), (1, 2)) as its symbolic writes it: per axis, Slice [-shift:] and
    [:-shift] (the shift's sign kept, the open end INT64_MAX), Concat."""
    big = np.iinfo(np.int64).max
    for axis in (1, 2):
        tail = _slice(g, x, f"{name}.{axis}.tail", axis, -shift, big)
        head = _slice(g, x, f"{name}.{axis}.head", axis, 0, -shift)
        x = g.node("Concat", [tail, head], f"{name}.{axis}" if axis == 1 else name, axis=axis)
    return x


def relative_position_index(ws: int) -> np.ndarray:
    """timm's buffer: for each pair of window positions, the index of their offset in the table."""
    coords = np.stack(np.meshgrid(np.arange(ws), np.arange(ws), indexing="ij")).reshape(2, -1)
    rel = (coords[:, :, None] - coords[:, None, :]).transpose(1, 2, 0) + (ws - 1)
    return (rel[..., 0] * (2 * ws - 1) + rel[..., 1]).astype(np.int64)


def shift_mask(hw: int, ws: int, shift: int) -> np.ndarray:
    """SwinTransformerBlock's attn_mask buffer: 0 within a region, -100 across regions, [nW, N, N]."""
    img = np.zeros((hw, hw))
    cnt = 0
    for hs in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
        for wsl in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
            img[hs, wsl] = cnt
            cnt += 1
    win = img.reshape(hw // ws, ws, hw // ws, ws).transpose(0, 2, 1, 3).reshape(-1, ws * ws)
    diff = win[:, None, :] - win[:, :, None]
    return np.where(diff != 0, -100.0, 0.0).astype(F32)


def _attention(g: GraphBuilder, x: str, p: str, c: int, heads: int, ws: int, mask: np.ndarray | None) -> str:
    """WindowAttention on [B_, N, C] windows."""
    n, hd = ws * ws, c // heads
    qkv = linear(g, x, f"{p}.qkv", c, 3 * c)
    qkv = g.node("Transpose", [view(g, qkv, [-1, n, 3, heads, hd], f"{p}.qkv_view")], f"{p}.qkv_permute",
                 perm=[2, 0, 3, 1, 4])
    q, k, v = (g.node("Gather", [qkv, g.shape_const(f"{p}.{t}_index", i)], f"{p}.{t}", axis=0)
               for i, t in enumerate("qkv"))
    q = g.node("Mul", [q, g.const(f"{p}.scale", F32(hd ** -0.5))], f"{p}.q_scaled")
    attn = g.node("MatMul", [q, g.node("Transpose", [k], f"{p}.k_t", perm=[0, 1, 3, 2])], f"{p}.scores")
    table = g.small(f"{p}.relative_position_bias_table", ((2 * ws - 1) ** 2, heads), scale=0.5)
    index = g.const(f"{p}.relative_position_index", relative_position_index(ws).reshape(-1))
    bias = g.node("Gather", [table, index], f"{p}.bias_gather", axis=0)
    bias = g.node("Transpose", [view(g, bias, [n, n, -1], f"{p}.bias_view")], f"{p}.bias_permute", perm=[2, 0, 1])
    bias = unsqueeze(g, bias, 0, f"{p}.bias_unsqueeze")
    attn = g.node("Add", [attn, bias], f"{p}.biased")
    if mask is not None:
        nw = mask.shape[0]
        attn = view(g, attn, [-1, nw, heads, n, n], f"{p}.mask_view")
        attn = g.node("Add", [attn, g.const(f"{p}.attn_mask", mask[None, :, None])], f"{p}.masked")
        attn = view(g, attn, [-1, heads, n, n], f"{p}.unmask_view")
    attn = g.node("Softmax", [attn], f"{p}.softmax", axis=-1)
    y = g.node("Transpose", [g.node("MatMul", [attn, v], f"{p}.context")], f"{p}.context_t", perm=[0, 2, 1, 3])
    return linear(g, view(g, y, [-1, n, c], f"{p}.context_view"), f"{p}.proj", c, c)


def _block(g: GraphBuilder, x: str, p: str, hw: int, c: int, heads: int, ws: int, shift: int) -> str:
    """SwinTransformerBlock on [1, H, W, C]."""
    y = layer_norm(g, x, f"{p}.norm1", c, 1e-5, 17)
    if shift:
        y = roll(g, y, -shift, f"{p}.roll")
    k = hw // ws
    y = view(g, y, [1, k, ws, k, ws, c], f"{p}.partition_view")
    y = g.node("Transpose", [y], f"{p}.partition_permute", perm=[0, 1, 3, 2, 4, 5])
    y = view(g, y, [-1, ws * ws, c], f"{p}.windows")
    y = _attention(g, y, f"{p}.attn", c, heads, ws, shift_mask(hw, ws, shift) if shift else None)
    y = view(g, y, [1, k, k, ws, ws, c], f"{p}.reverse_view")
    y = g.node("Transpose", [y], f"{p}.reverse_permute", perm=[0, 1, 3, 2, 4, 5])
    y = view(g, y, [1, hw, hw, c], f"{p}.reversed")
    if shift:
        y = roll(g, y, shift, f"{p}.unroll")
    x = g.node("Add", [x, y], f"{p}.residual1")
    h = layer_norm(g, x, f"{p}.norm2", c, 1e-5, 17)
    h = gelu_erf(g, linear(g, h, f"{p}.mlp.fc1", c, 4 * c), f"{p}.mlp.act")
    return g.node("Add", [x, linear(g, h, f"{p}.mlp.fc2", 4 * c, c)], f"{p}.residual2")


def _patch_merging(g: GraphBuilder, x: str, p: str, hw: int, c: int) -> str:
    """Older timm's PatchMerging: four strided views, Concat on C, LayerNorm(4C), Linear(4C, 2C) without bias."""
    parts = []
    for i, (r, s) in enumerate(((0, 0), (1, 0), (0, 1), (1, 1))):
        rows = _slice(g, x, f"{p}.x{i}.rows", 1, r, hw, 2)
        parts.append(_slice(g, rows, f"{p}.x{i}", 2, s, hw, 2))
    y = layer_norm(g, g.node("Concat", parts, f"{p}.cat", axis=-1), f"{p}.norm", 4 * c, 1e-5, 17)
    return g.node("MatMul", [y, g.weight(f"{p}.reduction.weight", (4 * c, 2 * c), fan_in=4 * c)], f"{p}.reduction")


def swin_stage(input_size: int = 32, embed: int = 16, heads: int = 2, window: int = 4,
               seed: int = 0) -> onnx.ModelProto:
    """Patch embedding (4x4 conv, permute to NHWC, LayerNorm), a plain and a shifted block, patch merging.
    Input `x` [1, 3, S, S]; output `layers.0.downsample.reduction` [1, S/8, S/8, 2 * embed]."""
    g = GraphBuilder("swin", seed)
    hw = input_size // 4
    if hw % window or hw != 2 * window:
        raise ValueError("the token grid must be two windows wide (the mask's regions)")
    x = g.conv(g.input("x", (1, 3, input_size, input_size)), "patch_embed.proj", 3, embed, 4, 4, pad=0)
    x = g.node("Transpose", [x], "patch_embed.permute", perm=[0, 2, 3, 1])
    x = layer_norm(g, x, "patch_embed.norm", embed, 1e-5, 17)
    x = _block(g, x, "layers.0.blocks.0", hw, embed, heads, window, 0)
    x = _block(g, x, "layers.0.blocks.1", hw, embed, heads, window, window // 2)
    g.output(_patch_merging(g, x, "layers.0.downsample", hw, embed))
    return g.model(17)

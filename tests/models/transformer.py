"""A pre-LayerNorm transformer encoder block, as torch exports nn.TransformerEncoderLayer-like code."""

from __future__ import annotations

import numpy as np
import onnx

from tests.models.builder import GraphBuilder


def linear(g: GraphBuilder, x: str, name: str, din: int, dout: int) -> str:
    """x @ W + b with MatMul and Add (torch exports nn.Linear on 3-D inputs this way)."""
    w = g.weight(f"{name}.weight", (din, dout), fan_in=din)
    y = g.node("MatMul", [x, w], f"{name}.matmul")
    return g.node("Add", [y, g.small(f"{name}.bias", (dout,))], name)


def layernorm(g: GraphBuilder, x: str, name: str, d: int) -> str:
    scale = g.const(f"{name}.weight", g.rng.uniform(0.5, 1.5, d).astype(np.float32))
    return g.node("LayerNormalization", [x, scale, g.small(f"{name}.bias", (d,))], name, axis=-1, epsilon=1e-5)


def gelu_layer(g: GraphBuilder, x: str, name: str, approximate: str) -> str:
    """GELU spelled out in ops, as torch exports it before opset 20's Gelu op.

    'none':  x * 0.5 * (1 + erf(x / sqrt 2))
    'tanh':  x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))"""
    f32 = np.float32
    if approximate == "none":
        inner = g.node("Div", [x, g.const(f"{name}.sqrt2", f32(np.sqrt(2.0)))], f"{name}.div")
        core = g.node("Erf", [inner], f"{name}.erf")
    elif approximate == "tanh":
        cube = g.node("Pow", [x, g.const(f"{name}.three", f32(3.0))], f"{name}.pow")
        cube = g.node("Mul", [cube, g.const(f"{name}.c", f32(0.044715))], f"{name}.mul_c")
        inner = g.node("Add", [x, cube], f"{name}.add_cube")
        inner = g.node("Mul", [inner, g.const(f"{name}.k", f32(np.sqrt(2.0 / np.pi)))], f"{name}.mul_k")
        core = g.node("Tanh", [inner], f"{name}.tanh")
    else:
        raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
    one_plus = g.node("Add", [core, g.const(f"{name}.one", f32(1.0))], f"{name}.add_one")
    half_x = g.node("Mul", [x, g.const(f"{name}.half", f32(0.5))], f"{name}.mul_half")
    return g.node("Mul", [half_x, one_plus], name)


def encoder_layer(
    g: GraphBuilder, x: str, prefix: str, out_name: str, batch: int, seq_len: int, d_model: int,
    num_heads: int, d_ff: int, gelu: str = "none",
) -> str:
    """x + MHA(LN1(x)), then + FFN(LN2(.)) with FFN = Linear -> GELU -> Linear; tensor names start
    with `prefix`, the layer's output is called `out_name`.

    Attention: Q, K, V by MatMul+Add, Reshape to [B, S, H, Dh] and Transpose to heads
    (K to [B, H, Dh, S]), MatMul, Mul by 1/sqrt(Dh), Softmax(-1), MatMul with V, Transpose and
    Reshape back, output projection."""
    if d_model % num_heads:
        raise ValueError("d_model must be divisible by num_heads")
    head_dim = d_model // num_heads
    p = prefix
    h = layernorm(g, x, f"{p}ln1", d_model)
    heads_shape = g.shape_const(f"{p}attn.heads_shape", (batch, seq_len, num_heads, head_dim))
    q, k, v = (
        g.node("Reshape", [linear(g, h, f"{p}attn.{n}", d_model, d_model), heads_shape], f"{p}attn.{n}.reshape")
        for n in ("q", "k", "v")
    )
    q = g.node("Transpose", [q], f"{p}attn.q.transpose", perm=[0, 2, 1, 3])
    k = g.node("Transpose", [k], f"{p}attn.k.transpose", perm=[0, 2, 3, 1])
    v = g.node("Transpose", [v], f"{p}attn.v.transpose", perm=[0, 2, 1, 3])
    scores = g.node("MatMul", [q, k], f"{p}attn.scores")
    scale = g.const(f"{p}attn.scale", np.float32(1.0 / np.sqrt(head_dim)))
    scores = g.node("Mul", [scores, scale], f"{p}attn.scaled")
    probs = g.node("Softmax", [scores], f"{p}attn.softmax", axis=-1)
    ctx = g.node("MatMul", [probs, v], f"{p}attn.context")
    ctx = g.node("Transpose", [ctx], f"{p}attn.context.transpose", perm=[0, 2, 1, 3])
    merge_shape = g.shape_const(f"{p}attn.merge_shape", (batch, seq_len, d_model))
    ctx = g.node("Reshape", [ctx, merge_shape], f"{p}attn.merge")
    x = g.node("Add", [x, linear(g, ctx, f"{p}attn.out", d_model, d_model)], f"{p}residual1")
    h = layernorm(g, x, f"{p}ln2", d_model)
    h = gelu_layer(g, linear(g, h, f"{p}ffn.fc1", d_model, d_ff), f"{p}ffn.gelu", gelu)
    return g.node("Add", [x, linear(g, h, f"{p}ffn.fc2", d_ff, d_model)], out_name)


def transformer_block(
    seq_len: int = 16,
    d_model: int = 64,
    num_heads: int = 4,
    d_ff: int = 256,
    batch: int = 1,
    gelu: str = "none",
    seed: int = 0,
) -> onnx.ModelProto:
    """One `encoder_layer`. Input "x" [batch, seq_len, d_model], output "output"."""
    g = GraphBuilder("transformer_block", seed)
    x = g.input("x", (batch, seq_len, d_model))
    g.output(encoder_layer(g, x, "", "output", batch, seq_len, d_model, num_heads, d_ff, gelu))
    return g.model()

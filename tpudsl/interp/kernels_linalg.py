"""Einsum and scaled dot-product attention (PyTorch's F.scaled_dot_product_attention)."""

from __future__ import annotations

import numpy as np

from tpudsl.interp.kernel import Array, Inputs, Kernel, KernelAttrs


def _einsum(ins: Inputs, a: KernelAttrs) -> Array:
    # TPU-MLIR's Einsum modes ("abcd,cde->abe", ...) are numpy equations; optimize routes
    # contractions through BLAS instead of einsum's own loops.
    return np.einsum(a["mode"], *[x for x in ins if x is not None], optimize=True).astype(np.float32)


def _softmax_last(x: Array) -> Array:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _attention(ins: Inputs, a: KernelAttrs) -> Array:
    q, k, v = ins[:3]
    mask = ins[3] if len(ins) > 3 else None
    scale = a.get("scale", 0.0) or 1.0 / np.sqrt(q.shape[-1])  # 0: PyTorch's default 1/sqrt(E)
    logits = np.matmul(q, np.swapaxes(k, -1, -2)) * np.float32(scale)
    if a.get("is_causal", False):
        length, source = logits.shape[-2:]
        logits = np.where(np.tril(np.ones((length, source), bool)), logits, -np.inf)
    if mask is not None:
        logits = np.where(mask, logits, -np.inf) if mask.dtype == bool else logits + mask
    return np.matmul(_softmax_last(logits), v).astype(np.float32)


KERNELS: dict[str, Kernel] = {
    "top.Einsum": Kernel(_einsum),
    "top.ScaleDotProductAttention": Kernel(_attention),
}

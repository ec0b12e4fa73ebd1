"""BatchNorm's constant statistics as one per-channel affine map, for whoever folds it (the
interpreter's prepare, --fuse-conv-bn, the Tpu lowering to tpu.Scale):

    (x - mean) / sqrt(var + eps) * gamma + beta  =  x * scale + shift
    scale = gamma / sqrt(var + eps),  shift = beta - mean * scale

computed in float64 (rounded once by the caller). The folded order rounds differently from ONNX's
by a few float32 ulp, as onnxruntime's own BatchNorm folding does."""

from __future__ import annotations

import numpy as np


def batch_norm_affine(mean: np.ndarray, var: np.ndarray, gamma: np.ndarray | None, beta: np.ndarray | None,
                      eps: float) -> tuple[np.ndarray, np.ndarray]:
    """(scale, shift) of the shape of `mean`; an absent gamma is 1, an absent beta 0."""
    scale = (1.0 if gamma is None else gamma.astype(np.float64)) / np.sqrt(var.astype(np.float64) + eps)
    shift = (0.0 if beta is None else beta.astype(np.float64)) - mean.astype(np.float64) * scale
    return np.broadcast_to(scale, mean.shape), np.broadcast_to(shift, mean.shape)

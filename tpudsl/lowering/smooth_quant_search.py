"""SmoothQuant's scale search (run_calibration --sq without --sq_alpha), as TPU-MLIR's
`SmoothQuant.search_opt_scale` (python/calibration/smoothquant.py) does it, per LayerNorm:

* the candidates, in this order: alpha = 0, 0.05, ..., 1 (its `np.arange(0, 1.05, 0.05)`),
  s_j = max|X_j|^alpha / max|W_j|^(1 - alpha) (`smoothing_scales`, what --sq_alpha fixes); then
  its "os+" clipping family, k = 1..20: s_j = max(1, max|X_j| / (k/20 * max_j max|X_j|)), which
  brings every channel above k/20 of the largest channel's maximum down to it (k = 20: s = 1);
* the error of a candidate: for every MatMul of the LayerNorm and every calibration sample X_i
  (the LayerNorm's output, kept from the maxima pass),
  mean((q_a(X_i / s) @ q_w(diag(s) W) - X_i @ W)^2), summed; q_a is symmetric INT8 per tensor over max_j max|X_j| / s_j, q_w symmetric INT8 per ROW
  of the [K, N] weight (TPU-MLIR's `qdq_weight` takes the maximum over axis 1: per input channel,
  the axis s scales, so the weight's rounding hardly depends on s); neither adds the bias;
* the first candidate with the least error wins (a strict `<`, alphas before clips).

Where TPU-MLIR's arithmetic gives NaN, a zero range (an all-zero row or tensor) quantizes exactly to
zero here, so that no candidate's error is NaN. Float64 throughout, all samples in one product per
MatMul and candidate, stacked in an order of their own (sorted by content), so that workers or a
Dask cluster handing them back in another order choose the same candidate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

ALPHAS = tuple(i * 0.05 for i in range(21))  # the values of TPU-MLIR's np.arange(0, 1.05, 0.05)
CLIP_STEPS = 20
INT8_MAX = 127


def smoothing_scales(act_max: np.ndarray, weight_max: np.ndarray, alpha: float) -> np.ndarray:
    """s_j for one alpha (smooth_quant.py's docstring), float64."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s = act_max.astype(np.float64) ** alpha / weight_max.astype(np.float64) ** (1.0 - alpha)
    s[~(np.isfinite(s) & (s > 0))] = 1.0
    return s


@dataclass(frozen=True)
class Candidate:
    label: str  # how stderr names it: "alpha 0.35" or "os+ clip 0.45"
    scales: np.ndarray  # s_j, float64


@dataclass(frozen=True)
class SearchResult:
    chosen: Candidate
    error: float

    def __str__(self) -> str:
        return f"{self.chosen.label} (INT8 MatMul MSE {self.error:.3e})"


def candidates(act_max: np.ndarray, weight_max: np.ndarray) -> list[Candidate]:
    """TPU-MLIR's grid, in its order (module docstring)."""
    found = [Candidate(f"alpha {alpha:.2f}", smoothing_scales(act_max, weight_max, alpha)) for alpha in ALPHAS]
    act = act_max.astype(np.float64)
    top = act.max()
    for k in range(1, CLIP_STEPS + 1):
        with np.errstate(divide="ignore", invalid="ignore"):
            s = np.maximum(1.0, act / (top * k / CLIP_STEPS))
        s[~np.isfinite(s)] = 1.0  # an all-zero activation: 0/0
        found.append(Candidate(f"os+ clip {k / CLIP_STEPS:.2f}", s))
    return found


def qdq(x: np.ndarray, limit: np.ndarray | float) -> np.ndarray:
    """Symmetric INT8 quantize-dequantize with the range `limit` (broadcast); a zero range gives 0."""
    limit = np.asarray(limit, dtype=np.float64)
    step = np.where(limit > 0, limit / INT8_MAX, 1.0)
    return np.where(limit > 0, np.clip(np.round(x / step), -INT8_MAX, INT8_MAX) * step, 0.0)


def quantized_error(x: np.ndarray, weights: Sequence[np.ndarray], exact: Sequence[np.ndarray],
                    act_max: np.ndarray, s: np.ndarray) -> float:
    """The candidate `s`'s error (module docstring): `x` the samples [S, T, K], `exact` x @ w for
    each weight w [K, N]."""
    qx = qdq(x / s, float((act_max.astype(np.float64) / s).max()))
    error = 0.0
    for w, want in zip(weights, exact, strict=True):
        ws = w * s[:, None]
        qw = qdq(ws, np.abs(ws).max(axis=1, keepdims=True))
        error += float(np.sum(np.mean((qx @ qw - want) ** 2, axis=(1, 2))))  # each sample's mean, summed
    return error


def search(xs: Sequence[np.ndarray], weights: Sequence[np.ndarray], act_max: np.ndarray,
           weight_max: np.ndarray) -> SearchResult:
    """The candidate of least error (the first, on a tie), as TPU-MLIR's search_opt_scale; `xs`
    the LayerNorm's output on each sample, in any order."""
    k = act_max.shape[0]
    x = np.stack(sorted((a.astype(np.float64).reshape(-1, k) for a in xs), key=lambda a: a.tobytes()))
    ws = [w.astype(np.float64) for w in weights]
    exact = [x @ w for w in ws]
    best, best_error = None, math.inf
    for candidate in candidates(act_max, weight_max):
        error = quantized_error(x, ws, exact, act_max, candidate.scales)
        if error < best_error:
            best, best_error = candidate, error
    assert best is not None  # every error is finite: zero ranges quantize exactly
    return SearchResult(best, best_error)

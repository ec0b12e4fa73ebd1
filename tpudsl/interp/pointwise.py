"""Pointwise convolution (1x1 filter, group 1, no pads, any stride and rank) as one GEMM straight on
the NC* buffer: y [n, oc, h*w] = W [oc, ic] @ x [n, ic, h*w], no im2col, the filter packed once.

The bias is folded into the GEMM when the input is the smaller side (an expansion layer, ic < oc,
or a strided one whose input is copied anyway): the input goes into a work array [n, ic + 1, h*w]
whose last row is ones and W gets the bias as its last column, so the bias costs one more row of
the copy instead of a pass over the output (oc/ic times bigger: MobileNetV2's expansions are 6x).
Otherwise it is added after the GEMM. The fused relu/relu6 is one in-place pass over the output.

Measured on MobileNetV2's 1x1 shapes (one thread, best CPU time): the kernel before this module
took 1.45x the bare GEMM (np.matmul on a contiguous input) over the model's pointwise layers: the
bias pass, the clip pass and 15-20 us of Python per call (geometry, pads, slices, reshapes)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tpudsl.interp import winograd
from tpudsl.interp.kernel import Array, relu
from tpudsl.interp.windows import Geometry


@dataclass(frozen=True, eq=False)  # holds arrays: compared by identity
class Packed:
    w: Array  # [oc, ic], or [oc, ic + 1] with the bias as last column (folded)
    folded: bool
    strides: tuple[int, ...]
    relu_limit: float | None  # the fused relu's limit (-1: none above 0), None: no relu


# Fold the bias from this many output positions on. On the squeeze-excite convs of 1x1 maps the
# work array and the extra column cost more than an add of oc values (unfolded 1.1-1.6x faster
# there, inside the EfficientNet-style inference); at 7x7 (49) folding was 1.05x faster.
FOLD_MIN_POSITIONS = 16


def fits(g: Geometry, auto_pad: str) -> bool:
    """Whether the conv of geometry g is a pointwise one this module computes."""
    return (g.group == 1 and all(k == 1 for k in g.kernel) and not any(g.pads_begin) and not any(g.pads_end)
            and auto_pad in ("NOTSET", "VALID"))


def pack(w: Array, bias: Array | None, g: Geometry, relu_limit: float | None, positions: int | None) -> Packed:
    """w [oc, ic, 1, ...]; `bias` the static bias [oc] (None: none, or computed at inference);
    `positions` the output's spatial size from the result type (None: unknown)."""
    oc, ic = w.shape[:2]
    w2 = w.reshape(oc, ic).astype(np.float32)
    folded = (bias is not None and positions is not None and positions >= FOLD_MIN_POSITIONS
              and (ic < oc or any(s != 1 for s in g.strides)))
    if folded:
        w2 = np.concatenate([w2, bias.reshape(oc, 1).astype(np.float32)], axis=1)
    return Packed(np.ascontiguousarray(w2), folded, g.strides, relu_limit)


def conv(x: Array, p: Packed, bias: Array | None, channels_last: bool = False) -> Array:
    """y [n, oc, *out] of x [n, ic, *size] (+ bias [oc] unless folded), the fused relu applied.
    `channels_last`: y is the view of a fresh [n, *out, oc] array (the GEMM transposed, same cost),
    for readers that copy their input anyway (a Winograd conv's channels-last copy is then plain).

    x may be such a view itself: x [n, ic, spatial] is then a column-major matrix per image, which
    BLAS reads as it is (numpy's reshape keeps the view), so no copy is made for it."""
    n, ic = x.shape[:2]
    if any(s != 1 for s in p.strides):
        x = x[(slice(None), slice(None), *(slice(None, None, s) for s in p.strides))]
    out = x.shape[2:]
    spatial = math.prod(out)
    if p.folded:
        cols = winograd.work("pointwise_cols", (n, ic + 1, spatial))
        cols[:, :ic].reshape(n, ic, *out)[...] = x  # the strided input's one copy
        cols[:, ic] = 1.0
    else:
        cols = x.astype(np.float32, copy=False).reshape(n, ic, spatial)
    # [n, oc, spatial], or [n, spatial, oc] channels-last, and the axis the bias runs along
    y, bias_shape = (np.matmul(cols.transpose(0, 2, 1), p.w.T), (1, -1)) if channels_last else (np.matmul(p.w, cols), (-1, 1))
    if bias is not None and not p.folded:
        y += bias.reshape(bias_shape).astype(np.float32, copy=False)
    if p.relu_limit is not None:
        relu(y, p.relu_limit, out=y)
    if channels_last:
        return np.moveaxis(y.reshape(n, *out, -1), -1, 1)
    return y.reshape(n, -1, *out)

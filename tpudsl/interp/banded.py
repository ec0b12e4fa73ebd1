"""Depthwise 2-D convolution with a wide kernel (7x7: ConvNeXt) as one GEMM per channel against a
banded filter.

The im2col kernel (kernels_nn._depthwise) copies every input value once per tap (25 or 49
copies per output) and then reduces the columns with a matrix-vector product, both at the speed
of memory. Here the output row is cut into tiles of B columns: a tile reads Q = s (B - 1) + kw
consecutive values of each of the kh input rows it spans, and its B outputs are the product of
those kh * Q values with a banded [kh * Q, B] matrix T (T[(i, s r + j), r] = w[i, j]), built once
from the filter. So each input value is copied about kh * Q / B times (10 instead of 49 at 7x7,
B = 14) and the GEMM, [tiles, kh * Q] @ [kh * Q, B], does Q / kw times the useful multiplications
at BLAS speed instead of a memory-bound product. A depth multiplier widens T to [kh * Q, m * B].

Measured per layer against the im2col kernel inside a ConvNeXt-style inference (one BLAS thread,
both kernels in one process, alternating, best of 9): 1.34-1.58x on its four 7x7 layers (7x7 to
56x56 maps, 96-768 channels). Alone, with warm caches, 5x5 layers were 1.3-1.6x faster too, but
inside an EfficientNet-style inference 0.7-0.8x (the banded filter, 1.2-2.4 MiB a layer, comes
from memory; a stride 2 widens the band to Q / kw = 6), and 3x3 layers 0.8-1.2x alone: both stay
on im2col (docs/interpreter.md)."""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tpudsl.interp import winograd
from tpudsl.interp.kernel import Array
from tpudsl.interp.windows import Geometry

MIN_KERNEL_WIDTH = 7
# Channels go through the gather and the GEMMs in blocks of about this many bytes of gathered
# rows (one reused work array). 512 KiB and 1 MiB measured the same within +-10% per layer
# inside a ConvNeXt-style inference (2 MiB was up to 30% faster alone, with warm caches).
BLOCK_BYTES = 2 << 20


def eligible(g: Geometry, w_shape: tuple[int, ...]) -> bool:
    """A 2-D depthwise filter (one input channel per group) at least MIN_KERNEL_WIDTH wide,
    undilated along the width (a dilated row would widen the band by the dilation)."""
    return (len(g.kernel) == 2 and w_shape[1] == 1 and g.kernel[1] >= MIN_KERNEL_WIDTH
            and g.dilations[1] == 1)


def tile_width(out_w: int) -> int:
    """B: 7-16 columns (14 measured best on 14-56 wide maps, 7 on 7 wide ones), the one that
    wastes the fewest padded outputs, the widest of those; the whole row when it is narrower."""
    if out_w <= 7:
        return out_w
    return min(range(7, 17), key=lambda b: (-(-out_w // b) * b, -b))


def pack(w: Array, g: Geometry, out_w: int) -> tuple[int, Array]:
    """[oc, 1, kh, kw] -> (B, T [groups, kh * Q, oc/g * B]) for outputs out_w wide."""
    b = tile_width(out_w)
    s = g.strides[1]
    oc, _, kh, kw = w.shape
    q = s * (b - 1) + kw
    mult = oc // g.group
    t = np.zeros((g.group, kh, q, mult, b), np.float32)
    w = w.reshape(g.group, mult, kh, kw).transpose(0, 2, 3, 1)  # [g, kh, kw, mult]
    for r in range(b):
        t[:, :, s * r : s * r + kw, :, r] = w
    return b, t.reshape(g.group, kh * q, mult * b)


def conv(x: Array, packed: tuple[int, Array], g: Geometry, out: tuple[int, ...]) -> Array:
    """y [n, oc, ho, wo] of input x [n, g, h, w] (no bias)."""
    b, t = packed
    n, groups, h, w = x.shape
    kh = g.kernel[0]
    mult = t.shape[2] // b
    q = t.shape[1] // kh
    (sh, sw), dh = g.strides, g.dilations[0]
    (pt, pl), (pb, pr) = g.pads_begin, g.pads_end
    ho, wo = out
    tiles = -(-wo // b)
    # Zero-padded input, wide enough for the last tile's reads: a reused zeroed array whose
    # interior is overwritten each call (the borders stay zero; the key fixes the interior).
    width = max(w + pl + pr, (tiles - 1) * b * sw + q)
    xp = winograd.work(f"banded_pad {pt} {pl} {h} {w}", (n, groups, h + pt + pb, width), zeroed=True)
    xp[:, :, pt : pt + h, pl : pl + w] = x
    rows = ho * tiles
    per_channel = rows * kh * q
    block = max(1, min(groups, BLOCK_BYTES // 4 // per_channel))
    gathered = winograd.work("banded_rows", (block * per_channel,))
    y = np.empty((n, groups, rows, mult * b), np.float32)
    item = xp.itemsize
    for i in range(n):
        for c0 in range(0, groups, block):
            c1 = min(groups, c0 + block)
            a = gathered[: (c1 - c0) * per_channel].reshape(c1 - c0, ho, tiles, kh, q)
            src = xp[i, c0:c1]
            cs, rs, _ = src.strides
            for r in range(kh):  # kernel row r: input rows r * dh + sh * (output row), tile by tile
                a[:, :, :, r] = as_strided(src[:, r * dh :], (c1 - c0, ho, tiles, q), (cs, rs * sh, b * sw * item, item))
            np.matmul(a.reshape(c1 - c0, rows, kh * q), t[c0:c1], out=y[i, c0:c1])
    y = y.reshape(n, groups, ho, tiles, mult, b)
    if mult > 1:
        y = y.transpose(0, 1, 4, 2, 3, 5)
    y = y.reshape(n, groups * mult, ho, tiles * b)
    return np.ascontiguousarray(y[..., :wo]) if tiles * b != wo else y

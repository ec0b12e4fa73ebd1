"""Winograd F(2x2, 3x3) and F(4x4, 3x3): 3x3 stride-1 convolutions with 2.25x / 4x fewer
multiplications than im2col.

numpy's BLAS is slower than onnxruntime's MLAS, so the interpreter cuts GEMM work where it can.
Each 4x4 input tile d (stride 2) gives a 2x2 output tile Y = A^T [ (G g G^T) (.) (B^T d B) ] A;
the elementwise product over a tile is 16 independent GEMMs over channels:
M[k] = U[k] (oc x ic) @ V[k] (ic x tiles). No per-tile Python loop: tiles are gathered with 16
strided copies and transformed by one small GEMM. Everything stays float32; the transforms only
add, subtract and halve, so the result differs from direct convolution by a few float32 ulps.

F(4x4, 3x3) (`conv3x3_f4`, 6x6 tiles with stride 4, 36 GEMMs) works channels-last: the padded input
is copied once into [n, h, w, ic] and both transform passes (rows, then columns) are one GEMM with a
6-long inner dim over contiguous blocks; the tiles' GEMMs are [tiles, ic] @ [ic, oc]. Its transforms
scale values by up to 8, so it is ~10x less exact than F(2x2) (max error ~3e-6 of the output's
largest magnitude in float32, against ~3e-7; see docs/interpreter.md); used where the tile GEMMs stay big (outputs >= 28x28).
Work arrays are reused between calls (per thread, by shape): fresh multi-MiB buffers cost page faults.

References: Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks" (2016)."""

from __future__ import annotations

import threading

import numpy as np

from tpudsl.interp.kernel import Array

def _filter_rows(g0: Array, g1: Array, g2: Array) -> tuple[Array, Array, Array, Array]:
    """G = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]] applied along one axis."""
    return g0, (g0 + g1 + g2) * 0.5, (g0 - g1 + g2) * 0.5, g2


def pack_filter(w: Array) -> Array:
    """[oc, ic, 3, 3] -> U = G g G^T as [16, oc, ic] (tile position k = 4*row + col).

    Computed in float64 and rounded once; the adds beat a matmul with a 3-long inner dim."""
    w64 = w.astype(np.float64)
    u = np.empty((16, *w.shape[:2]), np.float32)
    for a, row in enumerate(_filter_rows(w64[:, :, 0], w64[:, :, 1], w64[:, :, 2])):
        for b, value in enumerate(_filter_rows(row[..., 0], row[..., 1], row[..., 2])):
            u[4 * a + b] = value
    return u


# Tile transforms as matrices on flattened 4x4 tiles (index 4*row + col): V = (B^T (x) B^T) d and
# Y = (A^T (x) A^T) M. One GEMM each with a 16-long inner dim beats 32 strided numpy adds.
_BT = np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], np.float32)
_AT = np.array([[1, 1, 1, 0], [0, 1, -1, -1]], np.float32)
_INPUT_TRANSFORM = np.kron(_BT, _BT)  # [16, 16]
_OUTPUT_TRANSFORM = np.kron(_AT, _AT)  # [4, 16]: output (r, c) of a tile is row 2*r + c


def conv3x3(xp: Array, u: Array) -> Array:
    """3x3 stride-1 convolution of the already padded input xp [n, ic, hp, wp] with packed U."""
    n, ic, hp, wp = xp.shape
    oh, ow = hp - 2, wp - 2
    th, tw = -(-oh // 2), -(-ow // 2)
    if (2 * th + 2, 2 * tw + 2) != (hp, wp):  # odd output: pad to whole tiles
        grown = np.zeros((n, ic, 2 * th + 2, 2 * tw + 2), np.float32)
        grown[:, :, :hp, :wp] = xp
        xp = grown
    tiles = np.empty((16, ic, n, th, tw), np.float32)  # element (i, j) of every tile (stride 2)
    for i in range(4):
        for j in range(4):
            tiles[4 * i + j] = xp[:, :, i : i + 2 * th : 2, j : j + 2 * tw : 2].transpose(1, 0, 2, 3)
    v = (_INPUT_TRANSFORM @ tiles.reshape(16, -1)).reshape(16, ic, -1)
    m = np.matmul(u, v)  # [16, oc, n*th*tw]
    oc = u.shape[1]
    outs = _OUTPUT_TRANSFORM @ m.reshape(16, -1)
    y = np.empty((oc, n, th, 2, tw, 2), np.float32)
    for r in range(2):
        for c in range(2):
            y[:, :, :, r, :, c] = outs[2 * r + c].reshape(oc, n, th, tw)
    y = y.reshape(oc, n, 2 * th, 2 * tw)[:, :, :oh, :ow]
    return np.ascontiguousarray(y.transpose(1, 0, 2, 3))


# ---- F(4x4, 3x3), channels-last -------------------------------------------------------------

# Interpolation points 0, 1, -1, 1/2, -2 (and infinity): half the float32 error of the textbook
# 0, +-1, +-2 on ResNet-like data (Barabasz et al., "Error analysis and improving the accuracy of
# Winograd convolution", 2020). Every entry of B^T and A^T is exact in float32.
_BT4 = np.array([[4, -6, -8, 6, 4, 0], [0, -4, 2, 10, 4, 0], [0, 4, -10, 2, 4, 0],
                 [0, -8, -4, 8, 4, 0], [0, 2, -4, -2, 4, 0], [0, 4, -6, -8, 6, 4]], np.float32) / 4
_G4 = np.array([[1, 0, 0], [1 / 3, 1 / 3, 1 / 3], [-1 / 3, 1 / 3, -1 / 3],
                [-16 / 15, -8 / 15, -4 / 15], [1 / 15, -2 / 15, 4 / 15], [0, 0, 1]], np.float64)
_AT4 = np.array([[1, 1, 1, 1, 1, 0], [0, 1, -1, 0.5, -2, 0], [0, 1, 1, 0.25, 4, 0], [0, 1, -1, 0.125, -8, 1]],
                np.float32)
_BIAS_POSITION_F4 = 7  # (column 1, row 1): column 1 of A^T is all ones, so A^T e A adds to every output

_local = threading.local()
_MAX_WORK_BYTES = 64 << 20  # beyond this (many shapes, big images) the cache starts over


def _work(tag: str, shape: tuple[int, ...], zeroed: bool = False) -> Array:
    """A float32 work array reused across calls of this thread. A `zeroed` one is zero when made;
    callers key it so that every call writes the same region, and the rest stays zero."""
    cache = getattr(_local, "cache", None)
    if cache is None:
        cache = _local.cache = {}
    key = (tag, shape)
    buf = cache.get(key)
    if buf is None:
        if sum(b.nbytes for b in cache.values()) > _MAX_WORK_BYTES:
            cache.clear()
        buf = cache[key] = (np.zeros if zeroed else np.empty)(shape, np.float32)
    return buf


def pack_filter_f4(w: Array) -> Array:
    """[oc, ic, 3, 3] -> U = G g G^T as [36, ic, oc] (position k = 6 * column + row), float64 then rounded."""
    u = np.einsum("ja,oiab,lb->ljio", _G4, w.astype(np.float64), _G4)
    return np.ascontiguousarray(u.reshape(36, w.shape[1], w.shape[0]), dtype=np.float32)


def conv3x3_f4(x: Array, u: Array, pads: tuple[int, int, int, int], bias: Array | None = None) -> Array:
    """3x3 stride-1 convolution of x [n, ic, h, w] with U from `pack_filter_f4`, zero-padded by
    (top, left, bottom, right), plus the bias [oc] if given."""
    n, ic, h, w = x.shape
    pt, pl, pb, pr = pads
    oh, ow = h + pt + pb - 2, w + pl + pr - 2
    th, tw = -(-oh // 4), -(-ow // 4)
    hp, wp = 4 * th + 2, 4 * tw + 2
    # channels-last padded input; keyed by pads and size so the zero border is never overwritten
    xh = _work(f"f4x{pads}{h}x{w}", (n, hp, wp, ic), zeroed=True)
    hwc = _work("f4hwc", (h * w, ic))
    for b in range(n):  # a 2-D transpose is fast in numpy, a 4-D one into a strided window is not
        np.copyto(hwc, x[b].reshape(ic, h * w).T)
        xh[b, pt : pt + h, pl : pl + w] = hwc.reshape(h, w, ic)
    rows = _work("f4rows", (6, n, th, wp, ic))  # row i of every tile row
    for i in range(6):
        rows[i] = xh[:, i : i + 4 * th : 4]
    rt = _work("f4rt", (6, n, th, wp, ic))
    np.matmul(_BT4, rows.reshape(6, -1), out=rt.reshape(6, -1))
    cols = _work("f4cols", (6, 6, n, th, tw, ic))  # column k of every tile, after the row pass
    for k in range(6):
        cols[k] = rt[:, :, :, k : k + 4 * tw : 4]
    tiles = n * th * tw
    v = _work("f4v", (36, tiles, ic))
    np.matmul(_BT4, cols.reshape(6, -1), out=v.reshape(6, -1))
    oc = u.shape[2]
    m = _work("f4m", (36, tiles, oc))
    np.matmul(v, u, out=m)
    if bias is not None:
        m[_BIAS_POSITION_F4] += bias.astype(np.float32, copy=False)
    z = _work("f4z", (4, 6, tiles * oc))
    np.matmul(_AT4, m.reshape(6, -1), out=z.reshape(4, -1))
    y4 = _work("f4y", (4, 4, tiles * oc))  # [output column, output row, tiles, oc]
    np.matmul(_AT4, z, out=y4)
    yh = _work("f4yh", (n, th, 4, tw, 4, oc))  # channels-last output
    np.copyto(yh, y4.reshape(4, 4, n, th, tw, oc).transpose(2, 3, 1, 4, 0, 5))
    y = np.empty((n, oc, 4 * th, 4 * tw), np.float32)
    for b in range(n):
        np.copyto(y[b].reshape(oc, -1), yh[b].reshape(-1, oc).T)
    if (4 * th, 4 * tw) != (oh, ow):  # the last tiles overhang
        y = np.ascontiguousarray(y[:, :, :oh, :ow])
    return y

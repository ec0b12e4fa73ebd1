"""Winograd F(2x2, 3x3) and F(4x4, 3x3): 3x3 stride-1 convolutions with 2.25x / 4x fewer
multiplications than im2col.

numpy's BLAS is slower than onnxruntime's MLAS, so the interpreter cuts GEMM work where it can.
F(m x m, 3x3) cuts the padded input into a x a tiles (a = m + 2) with stride m; each gives an m x m
output tile Y = A^T [ (G g G^T) (.) (B^T d B) ] A. The elementwise product over a tile is a*a
independent GEMMs over channels: M[k] = V[k] (tiles x ic) @ U[k] (ic x oc).

Channels-last: the padded input is copied once into [n, h, w, ic], so every transform step works
on contiguous blocks of ic values: B^T d B is one GEMM with an a-long inner dim down the tile rows,
then one across the tile columns (each after a strided gather); A^T M A likewise, and the result
goes back to [n, oc, h, w] with a 2-D transpose. No per-tile Python loop. The bias is added to
M[a + 1] (tile position (1, 1)): column 1 of A^T is all ones, so A^T e A adds it to every output.

Accuracy (float32): F(2x2)'s transforms only add, subtract and halve, so it differs from direct
convolution by a few ulps. F(4x4)'s transforms scale values by up to 8, which amplifies the GEMM's
float32 rounding: ~10x less exact (max error ~3e-6 of the output's largest magnitude, against
~3e-7; see docs/interpreter.md). It is used where its 36 GEMMs stay big (outputs >= 28x28).

Work arrays are reused between calls (per thread, by shape): fresh multi-MiB arrays cost page
faults that were a third of the kernel's time in a fresh process.

References: Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks" (2016); Barabasz et
al., "Error analysis and improving the accuracy of Winograd convolution" (2020)."""

from __future__ import annotations

import threading

import numpy as np

from tpudsl.interp.kernel import Array

# F(2x2, 3x3): interpolation points 0, 1, -1 (and infinity).
_BT2 = np.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]], np.float32)
_G2 = np.array([[1, 0, 0], [1 / 2, 1 / 2, 1 / 2], [1 / 2, -1 / 2, 1 / 2], [0, 0, 1]], np.float64)
_AT2 = np.array([[1, 1, 1, 0], [0, 1, -1, -1]], np.float32)

# F(4x4, 3x3): points 0, 1, -1, 1/2, -2 (and infinity): half the float32 error of the textbook
# 0, +-1, +-2 (Barabasz et al.). Every entry of B^T and A^T is exact in float32.
_BT4 = np.array([[4, -6, -8, 6, 4, 0], [0, -4, 2, 10, 4, 0], [0, 4, -10, 2, 4, 0],
                 [0, -8, -4, 8, 4, 0], [0, 2, -4, -2, 4, 0], [0, 4, -6, -8, 6, 4]], np.float32) / 4
_G4 = np.array([[1, 0, 0], [1 / 3, 1 / 3, 1 / 3], [-1 / 3, 1 / 3, -1 / 3],
                [-16 / 15, -8 / 15, -4 / 15], [1 / 15, -2 / 15, 4 / 15], [0, 0, 1]], np.float64)
_AT4 = np.array([[1, 1, 1, 1, 1, 0], [0, 1, -1, 0.5, -2, 0], [0, 1, 1, 0.25, 4, 0], [0, 1, -1, 0.125, -8, 1]],
                np.float32)

_MATRICES = {2: (_BT2, _G2, _AT2), 4: (_BT4, _G4, _AT4)}  # output tile size m -> (B^T, G, A^T)


def _apply_g(g: Array, taps: tuple[Array, Array, Array]) -> list[Array]:
    """G applied along one filter axis, as adds (a matmul with a 3-long inner dim is far slower)."""
    return [sum(c * t for c, t in zip(row, taps, strict=True) if c != 0) for row in g]


def pack_filter(w: Array, m: int) -> Array:
    """[oc, ic, 3, 3] -> U = G g G^T as [a*a, ic, oc] for F(m x m, 3x3) (tile position k = a * column
    + row). Computed in float64 and rounded once."""
    g = _MATRICES[m][1]
    a = m + 2
    w64 = w.astype(np.float64)
    u = np.empty((a * a, w.shape[1], w.shape[0]), np.float32)
    for j, row in enumerate(_apply_g(g, (w64[:, :, 0], w64[:, :, 1], w64[:, :, 2]))):
        for col, value in enumerate(_apply_g(g, (row[..., 0], row[..., 1], row[..., 2]))):
            u[a * col + j] = value.T
    return u


# ---- work arrays ----------------------------------------------------------------------------

_local = threading.local()
_MAX_WORK_BYTES = 64 << 20  # beyond this (many shapes, big images) the cache starts over


def work(tag: str, shape: tuple[int, ...], zeroed: bool = False) -> Array:
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


def release_work() -> None:
    """Drop this thread's work arrays (ResNet-18 at 224x224 keeps ~22 MiB of them)."""
    _local.cache = {}


# ---- the convolution ------------------------------------------------------------------------

def _strip(xh: Array, u: Array, m: int, bias: Array | None, yh: Array) -> None:
    """The tiles of the channels-last padded rows xh [n, m * th + 2, m * tw + 2, ic] into yh
    [n, th, m, tw, m, oc]: input transform, the a*a GEMMs with U, output transform."""
    bt, _, at = _MATRICES[m]
    a = m + 2
    n, _, _, ic = xh.shape
    th, tw, oc = yh.shape[1], yh.shape[3], yh.shape[5]
    rows = work(f"f{m}rows", (a, n, th, m * tw + 2, ic))  # row i of every tile
    for i in range(a):
        rows[i] = xh[:, i : i + m * th : m]
    rt = work(f"f{m}rt", rows.shape)
    np.matmul(bt, rows.reshape(a, -1), out=rt.reshape(a, -1))
    cols = work(f"f{m}cols", (a, a, n, th, tw, ic))  # column k of every tile, after the row pass
    for k in range(a):
        cols[k] = rt[:, :, :, k : k + m * tw : m]
    tiles = n * th * tw
    v = work(f"f{m}v", (a * a, tiles, ic))
    np.matmul(bt, cols.reshape(a, -1), out=v.reshape(a, -1))
    mm = work(f"f{m}m", (a * a, tiles, oc))
    np.matmul(v, u, out=mm)
    if bias is not None:
        mm[a + 1] += bias.astype(np.float32, copy=False)
    z = work(f"f{m}z", (m, a, tiles * oc))
    np.matmul(at, mm.reshape(a, -1), out=z.reshape(m, -1))
    ym = work(f"f{m}y", (m, m, tiles * oc))  # [output column, output row, tiles, oc]
    np.matmul(at, z, out=ym)
    np.copyto(yh, ym.reshape(m, m, n, th, tw, oc).transpose(2, 3, 1, 4, 0, 5))


# Strips of tile rows keep the transform work arrays (a*a x tiles x channels) in L2 when the whole
# image's would not fit in 2 strips: measured (one thread, best of 31) 22-35% faster at 56x56 with
# 64-128 channels; at 14x14-28x28, whose arrays fit, strips were up to 25% slower (smaller GEMMs).
STRIP_BYTES = 512 << 10


def conv3x3(x: Array, u: Array, m: int, pads: tuple[int, int, int, int], bias: Array | None = None,
            channels_last: bool = False) -> Array:
    """3x3 stride-1 convolution of x [n, ic, h, w], zero-padded by (top, left, bottom, right), with
    U from `pack_filter(w, m)`, plus the bias [oc] if given. `channels_last`: the result is the
    [n, oc, oh, ow] view of a fresh channels-last array (no transposing copy back; for readers that
    copy their input anyway, e.g. the next Winograd conv, whose own transposing copy becomes a plain
    one)."""
    a = m + 2
    n, ic, h, w = x.shape
    pt, pl, pb, pr = pads
    oh, ow = h + pt + pb - 2, w + pl + pr - 2
    th, tw = -(-oh // m), -(-ow // m)  # tiles down and across; the last ones may overhang
    # channels-last padded input; keyed by pads and size so the zero border is never overwritten
    xh = work(f"f{m}x{pads}{h}x{w}", (n, m * th + 2, m * tw + 2, ic), zeroed=True)
    for b in range(n):  # one 3-D transposing copy per image (numpy 2.4: 1.15-1.3x a 2-D transpose and a copy)
        np.copyto(xh[b, pt : pt + h, pl : pl + w], x[b].transpose(1, 2, 0))
    oc = u.shape[2]
    shape = (n, th, m, tw, m, oc)  # channels-last output
    yh = np.empty(shape, np.float32) if channels_last else work(f"f{m}yh", shape)
    row_bytes = a * a * tw * n * 4 * max(ic, oc)  # one tile row's transform work
    step = th if row_bytes * th <= 2 * STRIP_BYTES else max(1, STRIP_BYTES // row_bytes)
    for t0 in range(0, th, step):
        _strip(xh[:, m * t0 : m * min(th, t0 + step) + 2], u, m, bias, yh[:, t0 : t0 + step])
    if channels_last:
        return yh.reshape(n, m * th, m * tw, oc)[:, :oh, :ow].transpose(0, 3, 1, 2)
    y = np.empty((n, oc, m * th, m * tw), np.float32)
    for b in range(n):
        np.copyto(y[b].reshape(oc, -1), yh[b].reshape(-1, oc).T)
    if (m * th, m * tw) != (oh, ow):
        y = np.ascontiguousarray(y[:, :, :oh, :ow])
    return y

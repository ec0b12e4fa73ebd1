"""The cmodel's handler of record 86 (GdmaYuv2rgb), merged into engine.HANDLERS: 4:2:0 YUV frames to
RGB pixels, written again from the BT.601 definition in exact integers (the interpreter evaluates
TPU-MLIR's double-then-float expression; the two agree on all 2^24 (Y, U, V), docs/bmodel.md).

Each channel is sum(k_i x_i) / 100000 with the integer coefficients k (100000 times TPU-MLIR's
five-decimal ones): rounded exactly (floor((num + 50000) / 100000), a tie k + 1/2 to even when asked)
and clipped to 0..255."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tpudsl.backend import isa
from tpudsl.backend.cmodel.memory import Fault, Memory

# Per formula: (luma offset, the (Y, U - 128, V - 128) coefficients of R, G and B) x 100000.
_COEFFS = {
    isa.YUV_FORMULAS["_601_limited"]: (16, ((116438, 0, 159603), (116438, -39176, -81297), (116438, 201723, 0))),
    isa.YUV_FORMULAS["_601_full"]: (0, ((100000, 0, 140189), (100000, -34581, -71490), (100000, 177098, 0))),
}
_HALF_AWAY, _HALF_EVEN = isa.ROUND_MODES["HalfAwayFromZero"], isa.ROUND_MODES["HalfToEven"]


def _chroma(frames: np.ndarray, r: isa.GdmaYuv2rgb) -> tuple[np.ndarray, np.ndarray]:
    """(U, V) of every pixel: the sample of its 2 x 2 block."""
    half = r.h // 2 * (r.w // 2)
    flat = frames[:, r.h * r.w:]
    if r.src_format in (0, 1):
        first, second = flat[:, :half], flat[:, half:]
    else:
        first, second = flat[:, 0::2], flat[:, 1::2]
    u, v = (first, second) if r.src_format in (0, 2) else (second, first)
    rows, cols = np.arange(r.h)[:, None] // 2, np.arange(r.w)[None, :] // 2
    at = rows * (r.w // 2) + cols  # the block of each pixel
    return u[:, at], v[:, at]


def _yuv2rgb(m: Memory, r: isa.GdmaYuv2rgb) -> None:
    if r.src_format > 3 or r.dst_format not in (4, 5) or r.formula not in _COEFFS \
            or r.round_mode not in (_HALF_AWAY, _HALF_EVEN):
        raise Fault(f"GdmaYuv2rgb: src_format {r.src_format}, dst_format {r.dst_format}, formula {r.formula}, "
                    f"round_mode {r.round_mode} are not modelled")
    if r.h % 2 or r.w % 2:
        raise Fault(f"GdmaYuv2rgb: a {r.h}x{r.w} frame is not 4:2:0 (even sizes)")
    size = r.h * r.w * 3 // 2
    frames = m.read_global(r.src, (size, 1), (r.batch, size), np.dtype(np.uint8)).astype(np.int64)
    y = frames[:, :r.h * r.w].reshape(r.batch, r.h, r.w)
    u, v = _chroma(frames, r)
    offset, rows = _COEFFS[r.formula]
    planes = []
    for ky, ku, kv in rows:
        num = ky * (y - offset) + ku * (u - 128) + kv * (v - 128)
        q, rem = np.divmod(num + 50000, 100000)
        if r.round_mode == _HALF_EVEN:
            q = np.where((rem == 0) & (q % 2 == 1), q - 1, q)
        planes.append(np.clip(q, 0, 255))
    if r.dst_format == 5:
        planes.reverse()
    out = np.stack(planes, axis=1).astype(np.uint8)  # (batch, 3, h, w)
    m.write_global(r.dst, (3 * r.h * r.w, r.h * r.w, r.w, 1), out)


HANDLERS: dict[type[isa.Record], Callable] = {isa.GdmaYuv2rgb: _yuv2rgb}

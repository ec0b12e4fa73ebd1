"""Image kernels: Yuv2rgbFormula, TPU-MLIR's BT.601 conversion of 4:2:0 YUV frames (its
Yuv2rgbFormula.cpp inference, written from its description).

A frame is [H * 3 / 2, W] bytes: H rows of Y, then the chroma of the 2 x 2 pixel blocks, (H / 2) x
(W / 2) samples of each of U and V: planes U then V (src_format 0, I420), V then U (1, YV12), or
interleaved U, V (2, NV12) or V, U (3, NV21). Each pixel reads its block's chroma (nearest: the
sample at (h // 2, w // 2)) and computes, as the C++ does (int operands times double literals, the
sum stored to float):

    _601_limited  R = 1.16438 (Y - 16) + 1.59603 (V - 128)
                  G = 1.16438 (Y - 16) - 0.39176 (U - 128) - 0.81297 (V - 128)
                  B = 1.16438 (Y - 16) + 2.01723 (U - 128)
    _601_full     R = Y + 1.40189 (V - 128)
                  G = Y - 0.34581 (U - 128) - 0.71490 (V - 128)
                  B = Y + 1.77098 (U - 128)

clipped to [0, 255] and rounded to an integer by round_mode (image_format UINT8). dst_format 4
writes the planes R, G, B; 5 writes B, G, R."""

from __future__ import annotations

import numpy as np

from tpudsl.interp.kernel import Array, Inputs, Kernel, KernelAttrs
from tpudsl.interp.kernels_elementwise import ROUND

# (luma offset, luma gain, V->R, U->G, V->G, U->B) of each formula mode, TPU-MLIR's digits.
FORMULAS = {
    "_601_limited": (16, 1.16438, 1.59603, 0.39176, 0.81297, 2.01723),
    "_601_full": (0, 1.0, 1.40189, 0.34581, 0.71490, 1.77098),
}


def yuv420_planes(frames: Array, src_format: int) -> tuple[Array, Array, Array]:
    """(Y, U, V) of frames [..., H * 3 / 2, W], chroma [..., H / 2, W / 2]."""
    h, w = frames.shape[-2] // 3 * 2, frames.shape[-1]
    lead = frames.shape[:-2]
    y, chroma = frames[..., :h, :], frames[..., h:, :]
    if src_format in (0, 1):  # planar: the first plane is U (I420) or V (YV12)
        planes = chroma.reshape(*lead, 2, h // 2, w // 2)
        first, second = planes[..., 0, :, :], planes[..., 1, :, :]
    else:  # interleaved pairs: U first (NV12) or V first (NV21)
        pairs = chroma.reshape(*lead, h // 2, w // 2, 2)
        first, second = pairs[..., 0], pairs[..., 1]
    u, v = (first, second) if src_format in (0, 2) else (second, first)
    return y, u, v


def _yuv2rgb(ins: Inputs, a: KernelAttrs) -> Array:
    y, u, v = yuv420_planes(np.asarray(ins[0]).astype(np.int64), a["src_format"])
    u, v = (np.repeat(np.repeat(c, 2, axis=-2), 2, axis=-1) for c in (u, v))  # each sample covers 2 x 2 pixels
    offset, gain, vr, ug, vg, ub = FORMULAS[a["formula_mode"]]
    luma, cu, cv = gain * (y - offset), (u - 128).astype(np.float64), (v - 128).astype(np.float64)
    rgb = [luma + vr * cv, luma - ug * cu - vg * cv, luma + ub * cu]  # double, in the C++ order
    if a["dst_format"] == 5:
        rgb.reverse()
    planes = np.stack(rgb, axis=-3).astype(np.float32)  # stored to float
    rounded = ROUND[a.get("round_mode", "HalfAwayFromZero")](np.clip(planes, 0, 255).astype(np.float64))
    return rounded.astype(a.out_dtype() or np.float32)


KERNELS = {"top.Yuv2rgbFormula": Kernel(_yuv2rgb)}

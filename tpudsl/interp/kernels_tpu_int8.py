"""Kernels of the Tpu dialect in INT8: integer arithmetic, bit-accurate to the formulas of
docs/quantization.md ("INT8 arithmetic"), with requant.py's rounding and saturation.

Products of int8 values are summed in float64, where every partial sum of at most 2^53 / 127^2
(5.6e11) products is an exact integer whatever the order, then converted to int64: so the result
does not depend on BLAS's summation order and two runs give the same bits. The multiplier and
rshift are the op's attributes, as on the chip; only `tpu.Cast` reads scales, from its types.
"""

from __future__ import annotations

import numpy as np

from tpudsl.interp.kernel import Array, Inputs, KernelAttrs
from tpudsl.interp.kernels_nn import KERNELS as NN_KERNELS
from tpudsl.interp.kernels_nn import _out_sizes
from tpudsl.interp.table import KERNELS
from tpudsl.interp.requant import dequantize, quantize, requant, right_shift_round, saturate
from tpudsl.interp.windows import Geometry, pad_spatial, tap_slices

# tpu.Add and tpu.Mul have no round_mode attribute in TpuOps.td: TPU-MLIR's default mode.
ELEMENTWISE_ROUND = "HalfAwayFromZero"


def _exact(y: Array) -> Array:
    return np.rint(y).astype(np.int64)


def _window_sums(x: Array, w: Array, g: Geometry) -> Array:
    """Integer convolution of x [n, c, h, w] with w [oc, c/group, kh, kw]: int64, exact."""
    n, c = x.shape[:2]
    out = _out_sizes(x.shape, g)
    xp = pad_spatial(x.astype(np.float64), g.pads_begin, g.pads_end)
    taps = list(g.taps())
    col = np.empty((n, c, len(taps), *out), np.float64)
    for t, tap in enumerate(taps):
        col[:, :, t] = xp[(slice(None), slice(None), *tap_slices(tap, g, out))]
    oc = w.shape[0]
    packed = w.astype(np.float64).reshape(g.group, oc // g.group, -1)
    y = np.matmul(packed, col.reshape(n, g.group, -1, int(np.prod(out))))
    return _exact(y).reshape(n, oc, *out)


def _per_channel(values: list[int], rank: int) -> Array:
    return np.asarray(values, np.int64).reshape(-1, *[1] * (rank - 2))


def conv2d(ins: Inputs, a: KernelAttrs) -> Array:
    x, w, bias = ins[0], ins[1], ins[2] if len(ins) > 2 else None
    assert x is not None and w is not None
    acc = _window_sums(x, w, Geometry.of(a, w.shape))
    if bias is not None:
        acc += _per_channel(list(bias.ravel()), acc.ndim)
    return requant(acc, _per_channel(a["multiplier"], acc.ndim), _per_channel(a["rshift"], acc.ndim),
                   a["round_mode"])


def matmul(ins: Inputs, a: KernelAttrs) -> Array:
    if len(a["multipliers"]) != 1:
        raise ValueError("tpu.MatMul INT8 with per-channel multipliers is not modelled")
    x, right, bias = ins[0], ins[1], ins[2] if len(ins) > 2 else None
    acc = _exact(NN_KERNELS["top.MatMul"].run([x.astype(np.float64), right.astype(np.float64), None], a))  # type: ignore[union-attr]
    if bias is not None:
        acc = acc + bias.astype(np.int64)
    return requant(acc, a["multipliers"][0], a["rshifts"][0], a["round_mode"])


def add(ins: Inputs, a: KernelAttrs) -> Array:
    """sat(right_shift_round(sum_i x_i * m_i, n)) with one shift n."""
    shifts = set(a["rshifts"])
    if len(shifts) != 1 or len(a["multipliers"]) != len(ins):
        raise ValueError(f"tpu.Add INT8 needs one multiplier per input and one shift, has {a['rshifts']}")
    acc = sum(x.astype(np.int64) * m for x, m in zip(ins, a["multipliers"], strict=True))  # type: ignore[union-attr]
    return saturate(right_shift_round(acc, shifts.pop(), ELEMENTWISE_ROUND))


def mul(ins: Inputs, a: KernelAttrs) -> Array:
    x, y = ins[0], ins[1]
    return requant(x.astype(np.int64) * y.astype(np.int64), a["multiplier"], a["rshift"], ELEMENTWISE_ROUND)  # type: ignore[union-attr]


def pool2d(ins: Inputs, a: KernelAttrs) -> Array:
    x = ins[0]
    assert x is not None
    if a["pool_mode"] == "Max":  # int8 values are exact in float32: the Top kernel picks them
        return KERNELS["top.MaxPool"].run([x.astype(np.float32)], a).astype(np.int8)  # type: ignore[union-attr]
    c = x.shape[1]
    ones = np.ones((c, 1, *a["kernel_shape"]), np.int8)
    g = Geometry.of(a, ones.shape)
    sums = _window_sums(x, ones, Geometry(g.kernel, g.strides, g.dilations, g.pads_begin, g.pads_end, c))
    return requant(sums, a["multiplier"], a["rshift"], a["round_mode"])


def lut(ins: Inputs, a: KernelAttrs) -> Array:
    x, table = ins[0], ins[1]
    if table is None or table.shape != (256,):
        raise ValueError("tpu.Lut needs a 256-entry table")
    return table[x.view(np.uint8)]  # type: ignore[union-attr]


def requant_int(ins: Inputs, a: KernelAttrs) -> Array:
    if len(a["multiplier"]) != 1 or a["quant_mode"] != "MultiplierShift":
        raise ValueError("tpu.RequantInt is modelled per tensor in MultiplierShift mode only")
    return requant(ins[0], a["multiplier"][0], a["rshift"][0], a["round_mode"])  # type: ignore[arg-type]


def cast(ins: Inputs, a: KernelAttrs) -> Array | None:
    """f32 -> int8 at the result's scale, int8 -> f32 at the operand's; None: not an INT8 Cast."""
    x = ins[0]
    assert x is not None
    s_in, s_out = a.scales
    if s_out is not None and s_in is None:
        return quantize(x, s_out)
    if s_in is not None and s_out is None:
        return dequantize(x, s_in)
    if s_in is not None:
        raise ValueError("tpu.Cast between two quantized types: use tpu.RequantInt")
    return None


INT8_KERNELS = {
    "tpu.Conv2D": conv2d,
    "tpu.MatMul": matmul,
    "tpu.Add": add,
    "tpu.Mul": mul,
    "tpu.Pool2D": pool2d,
}

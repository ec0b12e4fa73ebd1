"""Kernels of the Tpu dialect in INT8: integer arithmetic, bit-accurate to the formulas of
docs/quantization.md ("INT8 arithmetic"), with requant.py's rounding and saturation.

Products of int8 values are summed in float64, where every partial sum of at most 2^53 / 127^2
(5.6e11) products is an exact integer whatever the order, then converted to int64: so the result
does not depend on BLAS's summation order and two runs give the same bits. The multiplier and
rshift are the op's attributes, as on the chip; scales are read from the types only by `tpu.Cast`
and Softmax's float tail. Asymmetric INT8: every kernel computes on x - zp_in and adds the
result's zero point, saturating to its storage type (int8 or uint8); zero points come from the
types (`KernelAttrs.zero_points`), as TPU-MLIR's interpreter reads them.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from tpudsl.dialects.geometry.window import transposed_out_size
from tpudsl.interp.kernel import Array, Inputs, KernelAttrs
from tpudsl.interp.kernels_nn import KERNELS as NN_KERNELS
from tpudsl.interp.kernels_nn import _out_sizes
from tpudsl.interp.table import KERNELS
from tpudsl.interp.requant import dequantize, quantize, requant, right_shift_round, scale_and_shift, store
from tpudsl.interp.windows import Geometry, pad_spatial, tap_slices

# tpu.Add, tpu.Sub, tpu.Mul and tpu.MulConst have no round_mode attribute in TpuOps.td: TPU-MLIR's default mode.
ELEMENTWISE_ROUND = "HalfAwayFromZero"
# tpu.Deconv has none either (in our table): Conv2D's default, the same requantization as a conv.
DECONV_ROUND = "HalfUp"


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


def _deconv_sums(x: Array, w: Array, a: KernelAttrs) -> Array:
    """Integer transposed convolution of x [n, ic, h, w] with w [ic, oc/group, kh, kw] (ONNX
    layout): every tap's products summed exactly (float64, < 2^53), scattered into an int64
    canvas, cropped by pads and grown by output_padding."""
    if a.get("dynweight_reorderd", False):
        raise ValueError("tpu.Deconv INT8 with a reordered [oc, ic/g, kh, kw] filter is not modelled")
    g = Geometry.of(a, w.shape)
    n, ic, *size = x.shape
    icg, ocg = ic // g.group, w.shape[1]
    xg = x.astype(np.float64).reshape(n, g.group, icg, -1)
    wg = w.astype(np.float64).reshape(g.group, icg, ocg, -1).transpose(0, 3, 2, 1)  # [g, taps, oc/g, ic/g]
    full = [transposed_out_size(s, k, st, d, 0, 0, 0) for s, k, st, d in zip(size, g.kernel, g.strides, g.dilations, strict=True)]
    output_padding = list(a.get("output_padding") or [0] * len(size))
    out = [f - pb - pe + op for f, pb, pe, op in zip(full, g.pads_begin, g.pads_end, output_padding, strict=True)]
    canvas = np.zeros((n, g.group * ocg, *(max(f, pb + o) for f, pb, o in zip(full, g.pads_begin, out, strict=True))),
                      np.int64)
    for t, tap in enumerate(g.taps()):
        canvas[(slice(None), slice(None), *tap_slices(tap, g, tuple(size)))] += \
            _exact(np.matmul(wg[:, t], xg)).reshape(n, g.group * ocg, *size)
    return canvas[(slice(None), slice(None), *(slice(pb, pb + o) for pb, o in zip(g.pads_begin, out, strict=True)))]


def _in(ins: Inputs, a: KernelAttrs, i: int) -> Array:
    """Operand i as int64 less its zero point (asymmetric INT8; 0 when symmetric): the real value
    divided by the scale, so that pads and sums in this domain are those of the float op."""
    zps = a.zero_points[0]
    return ins[i].astype(np.int64) - (zps[i] if i < len(zps) else 0)  # type: ignore[union-attr]


def _out(a: KernelAttrs) -> dict:
    """The result's zero point and storage dtype (int8, or uint8 when asymmetric)."""
    return {"zero_point": a.zero_points[1], "dtype": a.out_dtype(0) or np.dtype(np.int8)}


def _per_channel(values: list[int], rank: int) -> Array:
    return np.asarray(values, np.int64).reshape(-1, *[1] * (rank - 2))


def conv2d(ins: Inputs, a: KernelAttrs) -> Array:
    x, w, bias = ins[0], ins[1], ins[2] if len(ins) > 2 else None
    assert x is not None and w is not None
    acc = _window_sums(_in(ins, a, 0), w, Geometry.of(a, w.shape))
    if bias is not None:
        acc += _per_channel(list(bias.ravel()), acc.ndim)
    return requant(acc, _per_channel(a["multiplier"], acc.ndim), _per_channel(a["rshift"], acc.ndim),
                   a["round_mode"], **_out(a))


def deconv(ins: Inputs, a: KernelAttrs) -> Array:
    x, w, bias = ins[0], ins[1], ins[2] if len(ins) > 2 else None
    assert x is not None and w is not None
    acc = _deconv_sums(_in(ins, a, 0), w, a)
    if bias is not None:
        acc += _per_channel(list(bias.ravel()), acc.ndim)
    return requant(acc, _per_channel(a["multiplier"], acc.ndim), _per_channel(a["rshift"], acc.ndim),
                   DECONV_ROUND, **_out(a))


def softmax(ins: Inputs, a: KernelAttrs) -> Array:
    """e = table[max - x] along the axis (int8 differences, 0..255; the table holds
    round(exp(-d s_in beta) 2^16) as int32), S = sum e (int64, exact), then the float tail
    y = sat(round_half_away((e / S) / s_out) + zp_out), both divisions in float64 (an input
    zero point cancels in the differences)."""
    x, table = ins[0], ins[1]
    if table is None or table.shape != (256,) or table.dtype != np.int32:
        raise ValueError("tpu.Softmax INT8 needs a 256-entry int32 exp table")
    if a.get("log", False):
        raise ValueError("tpu.Softmax INT8 with log=true is not modelled")
    axis = a["axis"]
    xi = x.astype(np.int64)  # type: ignore[union-attr]
    e = table.astype(np.int64)[xi.max(axis, keepdims=True) - xi]
    out = _out(a)
    info = np.iinfo(out["dtype"])
    return quantize(e / e.sum(axis, keepdims=True), a.scales[1], info.min, info.max, out["dtype"], out["zero_point"])


def matmul(ins: Inputs, a: KernelAttrs) -> Array:
    """One (multiplier, rshift), or one per output column (per-channel weights): they broadcast
    along the result's last axis, as the int32 bias does."""
    bias = ins[2] if len(ins) > 2 else None
    x, right = _in(ins, a, 0).astype(np.float64), _in(ins, a, 1).astype(np.float64)
    acc = _exact(NN_KERNELS["top.MatMul"].run([x, right, None], a))
    if bias is not None:
        acc = acc + bias.astype(np.int64)
    multipliers, rshifts = a["multipliers"], a["rshifts"]
    if len(multipliers) not in (1, acc.shape[-1]) or len(rshifts) != len(multipliers):
        raise ValueError(f"tpu.MatMul INT8 needs 1 or {acc.shape[-1]} multipliers and as many rshifts, "
                         f"has {len(multipliers)} and {len(rshifts)}")
    return requant(acc, np.asarray(multipliers, np.int64), np.asarray(rshifts, np.int64), a["round_mode"], **_out(a))


def _terms(ins: Inputs, a: KernelAttrs, op: str) -> tuple[list[Array], int]:
    """(x_i - zp_i) * m_i (int64) of each input, and the one shift of tpu.Add / tpu.Sub."""
    shifts = set(a["rshifts"])
    if len(shifts) != 1 or len(a["multipliers"]) != len(ins):
        raise ValueError(f"{op} INT8 needs one multiplier per input and one shift, has {a['rshifts']}")
    return [_in(ins, a, i) * m for i, m in enumerate(a["multipliers"])], shifts.pop()


def add(ins: Inputs, a: KernelAttrs) -> Array:
    """sat(right_shift_round(sum_i x_i * m_i, n) + zp_out) with one shift n."""
    terms, shift = _terms(ins, a, "tpu.Add")
    return store(right_shift_round(sum(terms), shift, ELEMENTWISE_ROUND), **_out(a))


def sub(ins: Inputs, a: KernelAttrs) -> Array:
    """sat(right_shift_round(x_0 m_0 - x_1 m_1, n)); is_reverse: x_1 m_1 - x_0 m_0."""
    if len(ins) != 2:
        raise ValueError(f"tpu.Sub INT8 is modelled with two inputs, has {len(ins)}")
    (t0, t1), shift = _terms(ins, a, "tpu.Sub")
    acc = t1 - t0 if a.get("is_reverse", False) else t0 - t1
    return store(right_shift_round(acc, shift, ELEMENTWISE_ROUND), **_out(a))


def mul(ins: Inputs, a: KernelAttrs) -> Array:
    return requant(_in(ins, a, 0) * _in(ins, a, 1), a["multiplier"], a["rshift"], ELEMENTWISE_ROUND, **_out(a))


def mul_const(ins: Inputs, a: KernelAttrs) -> Array:
    """sat(right_shift_round((x - zp_in) * multiplier, rshift) + zp_out): the constant is in the
    multiplier (s_in c / s_out, its sign included)."""
    return requant(_in(ins, a, 0), a["multiplier"], a["rshift"], ELEMENTWISE_ROUND, **_out(a))


def _const_term(a: KernelAttrs, op: str) -> int:
    """AddConst / SubConst: const_val holds the constant in the result's units shifted left by
    rshift, an integer (the lowering's round(c / s_out * 2^rshift))."""
    c = a["const_val"]
    if c != int(c) or a["rshift"] < 0:
        raise ValueError(f"{op} INT8 needs an integer const_val and rshift >= 0, has {c}, {a['rshift']}")
    return int(c)


def add_const(ins: Inputs, a: KernelAttrs) -> Array:
    """sat(right_shift_round((x - zp_in) * multiplier + const_val, rshift) + zp_out): the constant is
    added before the one rounding."""
    acc = _in(ins, a, 0) * a["multiplier"] + _const_term(a, "tpu.AddConst")
    return store(right_shift_round(acc, a["rshift"], ELEMENTWISE_ROUND), **_out(a))


def sub_const(ins: Inputs, a: KernelAttrs) -> Array:
    """AddConst's form with the constant subtracted: (x - zp_in) * m - C, or with is_reverse C - (x - zp_in) * m."""
    p, c = _in(ins, a, 0) * a["multiplier"], _const_term(a, "tpu.SubConst")
    acc = c - p if a.get("is_reverse", False) else p - c
    return store(right_shift_round(acc, a["rshift"], ELEMENTWISE_ROUND), **_out(a))


def pool2d(ins: Inputs, a: KernelAttrs) -> Array:
    """Max: the int8 values picked. Avg: the window sum requantized by (multiplier, rshift); with
    pads and count_include_pad false, each position by scale_and_shift(scale / k) instead, k the
    number of its window's elements inside the input and `scale` the f32 s_in / s_out."""
    x = ins[0]
    assert x is not None
    if a["pool_mode"] == "Max":  # stored values are exact in float32: the Top kernel picks them
        return KERNELS["top.MaxPool"].run([x.astype(np.float32)], a).astype(x.dtype)  # type: ignore[union-attr]
    if a.get("ceil_mode", False):
        raise ValueError("tpu.Pool2D Avg INT8 with ceil_mode is not modelled")
    c = x.shape[1]
    ones = np.ones((c, 1, *a["kernel_shape"]), np.int8)
    g = Geometry.of(a, ones.shape)
    sums = _window_sums(_in(ins, a, 0), ones, dataclasses.replace(g, group=c))
    if a.get("count_include_pad", False) or not any(g.pads_begin + g.pads_end):
        return requant(sums, a["multiplier"], a["rshift"], a["round_mode"], **_out(a))
    counts = _window_sums(np.ones((1, 1, *x.shape[2:]), np.int8), ones[:1], dataclasses.replace(g, group=1))[0, 0]
    multipliers, rshifts = np.zeros(counts.shape, np.int64), np.zeros(counts.shape, np.int64)
    for k in np.unique(counts):
        multipliers[counts == k], rshifts[counts == k] = scale_and_shift(a["scale"] / int(k))
    return requant(sums, multipliers, rshifts, a["round_mode"], **_out(a))


def lut(ins: Inputs, a: KernelAttrs) -> Array:
    x, table = ins[0], ins[1]
    if table is None or table.shape != (256,):
        raise ValueError("tpu.Lut needs a 256-entry table")
    return table[x.view(np.uint8)]  # type: ignore[union-attr]


def clip(ins: Inputs, a: KernelAttrs) -> Array:
    """The stored integers clamped to [min, max], bounds in stored units (the INT8 lowering's
    `_clip`: input and result share one scale and zero point)."""
    x = ins[0]
    assert x is not None
    bounds = (a["min"], a["max"])
    if any(b != int(b) for b in bounds):
        raise ValueError(f"tpu.Clip on int8 needs integer bounds (stored units), has {bounds}")
    out = _out(a)
    if a.scales[0] != a.scales[1] or a.zero_points[0][0] != out["zero_point"] or x.dtype != out["dtype"]:
        raise ValueError("tpu.Clip on int8 needs one type (scale, zero point, storage) in and out")
    return np.clip(x, int(bounds[0]), int(bounds[1]))  # x's dtype: numpy saturates bounds beyond it


def requant_int(ins: Inputs, a: KernelAttrs) -> Array:
    if len(a["multiplier"]) != 1 or a["quant_mode"] != "MultiplierShift":
        raise ValueError("tpu.RequantInt is modelled per tensor in MultiplierShift mode only")
    return requant(_in(ins, a, 0), a["multiplier"][0], a["rshift"][0], a["round_mode"], **_out(a))


def requant_int_axis(ins: Inputs, a: KernelAttrs) -> Array:
    """Per channel c along rq_axis, quant's row c = (m, -rshift, zp) (bm1684x's layout):
    sat(right_shift_round((x - zp_in) * m, rshift, round_mode) + zp), saturated to the result's
    storage. zp must be the result type's zero point (the type is what reads the values back)."""
    x, quant = ins[0], ins[1]
    assert x is not None and quant is not None
    if a["quant_mode"] != "MultiplierShift":
        raise ValueError(f"tpu.RequantIntAxis quant_mode={a['quant_mode']} is not modelled (MultiplierShift)")
    axis = a["rq_axis"]
    rows = quant.astype(np.int64).reshape(-1, 3)
    shape = [1] * x.ndim
    shape[axis] = -1
    multiplier, rshift, zp = (rows[:, i].reshape(shape) for i in range(3))
    out = _out(a)
    if (zp != out["zero_point"]).any():
        raise ValueError(f"tpu.RequantIntAxis: the quant zero points {sorted(set(zp.ravel().tolist()))} differ from "
                         f"the result type's {out['zero_point']}")
    return requant(_in(ins, a, 0), multiplier, -rshift, a["round_mode"], **out)


def cast(ins: Inputs, a: KernelAttrs) -> Array | None:
    """f32 -> int8/uint8 at the result's scale and zero point, int8/uint8 -> f32 at the operand's;
    None: not an INT8 Cast."""
    x = ins[0]
    assert x is not None
    s_in, s_out = a.scales
    if s_out is not None and s_in is None:
        out = _out(a)
        info = np.iinfo(out["dtype"])
        return quantize(x, s_out, info.min, info.max, out["dtype"], out["zero_point"])
    if s_in is not None and s_out is None:
        return dequantize(x, s_in, a.zero_points[0][0])
    if s_in is not None:
        raise ValueError("tpu.Cast between two quantized types: use tpu.RequantInt")
    return None


INT8_KERNELS = {
    "tpu.Conv2D": conv2d,
    "tpu.MatMul": matmul,
    "tpu.Deconv": deconv,
    "tpu.Softmax": softmax,
    "tpu.Add": add,
    "tpu.Sub": sub,
    "tpu.Mul": mul,
    "tpu.MulConst": mul_const,
    "tpu.AddConst": add_const,
    "tpu.SubConst": sub_const,
    "tpu.Pool2D": pool2d,
    "tpu.Clip": clip,
}

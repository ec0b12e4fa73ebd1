"""The Tpu ops' F16/BF16 kernels that docs/quantization.md "F16/BF16 arithmetic" defines apart from
the Top kernels, keyed by op name: the reductions (half.py's exact value rounded once), the norms
(fixed float64 steps), Interp linear (resize.linear_sources in float64), GELU (float64 erf) and the
sigmoid family (the cmodel's float32 exp, where Top's kernels take exp2).

Each kernel takes the operands (f16 values, or bf16 values held in float32; a Conv2D filter in
its plain [oc, ic/g, kh, kw] layout), the attributes and the result's format, and returns float64
values already rounded to it (the interpreter's `hold` then converts them exactly), or None where
the Top kernel's float32 result rounded once is already the definition (max pool, Reduce max/min,
nearest Interp, the other Active modes: element-wise or copies, with no order to disagree on)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from tpudsl.dialects.geometry import resize
from tpudsl.dialects.top import SCATTER_REDUCTIONS
from tpudsl.interp import half
from tpudsl.interp.half import Format
from tpudsl.interp.kernel import Array, Inputs, KernelAttrs, ReplacedAttrs
from tpudsl.interp.kernels_pool import _geometry as pool_geometry
from tpudsl.interp.kernels_pool import _keepdims as pool_keepdims
from tpudsl.interp.kernels_pool import as_ceil_mode
from tpudsl.interp.kernels_interp import _out_sizes as interp_out_sizes
from tpudsl.interp.kernels_interp import _spatial_scales as interp_scales
from tpudsl.interp.kernels_index import combine_in_order, scatter_targets
from tpudsl.interp.kernels_reduce import _axes as reduce_axes
from tpudsl.interp.windows import Geometry, pad_spatial, tap_slices

HalfRun = Callable[[Inputs, KernelAttrs, Format], "Array | None"]


def _f64(x: Array | None) -> Array | None:
    return None if x is None else np.asarray(x, np.float64)


def _taps(xp: Array, g: Geometry, out: tuple[int, ...]) -> Array:
    """(n, c, taps, *out): the value every kernel tap reads for every output position."""
    return np.stack([xp[(slice(None), slice(None), *tap_slices(tap, g, out))] for tap in g.taps()], axis=2)


def _conv_padded(xp: Array, w: Array, bias: Array | None, g: Geometry, fmt: Format) -> Array:
    """Correlation of the padded input xp (n, ic, ...) with w (oc, ic/group, *k), geometry g (pads
    already in xp), every output the exactly rounded sum of its products plus bias."""
    n, ic = xp.shape[:2]
    oc, group = w.shape[0], g.group
    out = tuple((size - (k - 1) * d - 1) // s + 1
                for size, k, s, d in zip(xp.shape[2:], g.kernel, g.strides, g.dilations, strict=True))
    col = _taps(xp, g, out).reshape(n, group, ic // group * int(np.prod(g.kernel)), -1)
    left = w.reshape(group, oc // group, -1)
    b = None if bias is None else bias.reshape(group, oc // group, 1)
    return half.dot(left, col, b, fmt).reshape(n, oc, *out)


def conv(ins: Inputs, a: KernelAttrs, fmt: Format) -> Array:
    x, w, bias = (_f64(v) for v in (list(ins) + [None])[:3])
    g = Geometry.of(a, w.shape, x.shape)
    zero = (0,) * len(g.kernel)
    return _conv_padded(pad_spatial(x, g.pads_begin, g.pads_end), w, bias,
                        Geometry(g.kernel, g.strides, g.dilations, zero, zero, g.group), fmt)


def deconv(ins: Inputs, a: KernelAttrs, fmt: Format) -> Array:
    """The transposed convolution as its definition's other form: a stride-1 correlation of the
    flipped filter over the input with stride - 1 zeros between its elements, bordered by
    dilation * (k - 1) - pad zeros (output_padding more at the end; a negative border crops)."""
    x, w, bias = (_f64(v) for v in (list(ins) + [None])[:3])
    g = Geometry.of(a, w.shape)
    rank, k = len(g.kernel), int(np.prod(g.kernel))
    if not a.get("dynweight_reorderd", False):  # [ic, oc/g, *k] -> [oc, ic/g, *k]
        ic, ocg = w.shape[:2]
        icg = ic // g.group
        w = w.reshape(g.group, icg, ocg, k).transpose(0, 2, 1, 3).reshape(g.group * ocg, icg, *g.kernel)
    w = w[(slice(None), slice(None), *(slice(None, None, -1),) * rank)]
    out_pad = list(a.get("output_padding") or [0] * rank)
    n, c, *size = x.shape
    z = np.zeros((n, c, *((s - 1) * st + 1 for s, st in zip(size, g.strides, strict=True))))
    z[(slice(None), slice(None), *(slice(None, None, st) for st in g.strides))] = x
    borders = [(d * (kk - 1) - pb, d * (kk - 1) - pe + op)
               for kk, d, pb, pe, op in zip(g.kernel, g.dilations, g.pads_begin, g.pads_end, out_pad, strict=True)]
    z = np.pad(z, [(0, 0), (0, 0)] + [(max(b, 0), max(e, 0)) for b, e in borders])
    crops = (slice(max(-b, 0), z.shape[2 + i] - max(-e, 0)) for i, (b, e) in enumerate(borders))
    z = z[(slice(None), slice(None), *crops)]
    zero = (0,) * rank
    return _conv_padded(z, w, bias, Geometry(g.kernel, (1,) * rank, g.dilations, zero, zero, g.group), fmt)


def matmul(ins: Inputs, a: KernelAttrs, fmt: Format) -> Array:
    x, right, bias = (_f64(v) for v in (list(ins) + [None])[:3])
    if a.get("hdim_is_batch", False):
        raise NotImplementedError("tpu.MatMul with hdim_is_batch=true")
    if a.get("left_transpose", False):
        x = np.swapaxes(x, -1, -2)
    if a.get("right_transpose", False):
        right = np.swapaxes(right, -1, -2)
    if right.ndim == 2 and x.ndim > 2:  # one product over all rows
        y = half.dot(x.reshape(-1, x.shape[-1]), right, bias, fmt).reshape(*x.shape[:-1], right.shape[-1])
    else:
        y = half.dot(x, right, bias, fmt)
    if a.get("output_transpose", False):
        y = np.swapaxes(y, -1, -2)
    shape = a.out_shape()
    return y.reshape(shape) if shape is not None and shape != y.shape else y


def unpacked(weight: Array) -> Array:
    """4-bit weights [N, K / 2] as [N, K]: each byte's low nibble then its high one."""
    w = np.asarray(weight, np.uint8)
    return np.stack([w & 0x0F, w >> 4], axis=-1).reshape(w.shape[0], -1)


def dequantized(weight: Array, scale: Array, zp: Array | None, w_transpose: bool, fmt: Format) -> Array:
    """tpu.A16MatMul's weight as the chip uses it, [K, N]: each stored integer minus its zero point
    times its scale (an f16/bf16 value), rounded once to the format; scale and zp are [N, G], G
    groups of consecutive K (G = 1: per channel). The product is exact in float64 (a 9-bit integer
    times an 11-bit significand), so this is the one rounding."""
    w = np.asarray(weight, np.float64)
    w = w if w_transpose else w.T  # [N, K]
    per_k = w.shape[1] // np.shape(scale)[1]  # each group's scale (and zero point) over its K
    s = np.repeat(np.asarray(scale, np.float64), per_k, axis=1)
    z = 0.0 if zp is None else np.repeat(np.asarray(zp, np.float64), per_k, axis=1)
    return half.round_to((w - z) * s, fmt).T


def a16_matmul(ins: Inputs, a: KernelAttrs) -> Array:
    """tpu.A16MatMul (docs/quantization.md "Weight-only"): the weight dequantized to the result's
    format, then F16/BF16 MatMul's arithmetic (the exact sum with the f32 bias, rounded once)."""
    fmt = half.half_format(a.out_dtype())
    if fmt is None:
        raise ValueError(f"tpu.A16MatMul computes in f16 or bf16, not {a.out_dtype()}")
    x, weight, scale, zp = ins[0], ins[1], ins[2], ins[3] if len(ins) > 3 else None
    bias = ins[4] if len(ins) > 4 else None
    if a.get("weight_bits", 8) == 4:
        weight = unpacked(weight)
    right = dequantized(weight, scale, zp, bool(a.get("w_transpose", False)), fmt)
    return matmul([x, right, bias], a, fmt)


def avg_pool(ins: Inputs, a: KernelAttrs, fmt: Format) -> Array:
    """The exact sum of each window over the number of positions that count (Top's rule: pads
    when count_include_pad, never the ceil_mode overhang, nor ceil_overhang's end pads)."""
    x = _f64(ins[0])
    g, out, overhang = pool_geometry(x.shape, ReplacedAttrs(a, as_ceil_mode(a)))
    end = tuple(pe + o for pe, o in zip(g.pads_end, overhang, strict=True))
    windows = np.moveaxis(_taps(pad_spatial(x, g.pads_begin, end), g, out), 2, -1)
    counted = np.ones((1, 1, *x.shape[2:]))
    if a.get("count_include_pad", False):
        counted = pad_spatial(pad_spatial(counted, g.pads_begin, g.pads_end, 1.0), (0,) * len(out), overhang)
    else:
        counted = pad_spatial(counted, g.pads_begin, end)
    counts = _taps(counted, g, out).sum(axis=2)
    return pool_keepdims(half.sums(windows, counts, fmt), a)


# Reduce modes exactly rounded: (the rows of the reduced elements, fmt) -> the rounded values.
_REDUCE_HALF: dict[str, Callable[[Array, Format], Array]] = {
    "ReduceSum": lambda t, fmt: half.sums(t, None, fmt),
    "ReduceMean": lambda t, fmt: half.sums(t, np.float64(t.shape[-1]), fmt),
    "ReduceL1": lambda t, fmt: half.sums(np.abs(t), None, fmt),
    "ReduceL2": half.norms,
    "ReduceProd": half.products,
}


def reduce(ins: Inputs, a: KernelAttrs, fmt: Format) -> Array | None:
    """ReduceSum / Mean / L1 / L2 / Prod, the exact value rounded once; None (Top's kernel) for the
    other modes: max and min need no rounding, and the backend emits no other (they stay float32,
    rounded once)."""
    mode = a["mode"]
    if mode not in _REDUCE_HALF:
        return None
    x = _f64(ins[0])
    axes = reduce_axes(a, x.ndim)
    keepdims = bool(a.get("keepdims", True))
    moved = np.moveaxis(x, axes, tuple(range(-len(axes), 0)))
    rest = moved.shape[:x.ndim - len(axes)]
    t = moved.reshape(*rest, -1)
    y = _REDUCE_HALF[mode](t, fmt)
    kept = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    return y.reshape(kept) if keepdims else y


def cumsum(ins: Inputs, a: KernelAttrs, fmt: Format) -> Array:
    """Running sums along the axis, each partial sum rounded to the format before the next element
    is added (what a chip that keeps its running sum in the result's type computes; the float32
    sums rounded once at the end, Top's kernel, would round twice)."""
    x = np.moveaxis(_f64(ins[0]), int(a["axis"]) % ins[0].ndim, 0)
    y, total = np.empty_like(x), np.zeros(x.shape[1:])
    for i in range(x.shape[0]):
        total = y[i] = half.round_to(total + x[i], fmt)
    return np.moveaxis(y, 0, int(a["axis"]) % ins[0].ndim)


_ROUNDED_REDUCTIONS = (SCATTER_REDUCTIONS["add"], SCATTER_REDUCTIONS["mul"])


def _scatter(op: str) -> HalfRun:
    def run(ins: Inputs, a: KernelAttrs, fmt: Format) -> Array | None:
        """A reduction that adds or multiplies rounds each partial result to the format, as CumSum
        (duplicate targets combined one at a time in index order; Top's float32 combination rounded
        once at the end would round twice). Replacing, max and min pick values: the Top kernel."""
        if a.get("reduction", 0) not in _ROUNDED_REDUCTIONS:
            return None
        at, values, slab = scatter_targets(ins, a, op)
        out = _f64(ins[0]).copy()
        combine_in_order(out.reshape(-1, slab), at, values.astype(np.float64), a["reduction"],
                         lambda v: half.round_to(v, fmt))
        return out
    return run


def softmax(ins: Inputs, a: KernelAttrs, fmt: Format) -> Array:
    """e = exp(z), z = beta * x - max (float64, beta a float32 as the record holds it);
    softmax = round(e / the exact sum of e); log: round(z - log(fsum(e)))."""
    x, axis = _f64(ins[0]), a.get("axis", -1) % ins[0].ndim
    beta = float(np.float32(a.get("beta", 1.0)))
    z = np.moveaxis(x * beta if beta != 1 else x, axis, -1)
    z = np.ascontiguousarray(z - z.max(axis=-1, keepdims=True))
    e = np.exp(z)  # the same float64 exp as the cmodel's, element by element
    if a.get("log", False):
        total = half.fsum_rows(e.reshape(-1, e.shape[-1])).reshape(*e.shape[:-1], 1)
        return np.moveaxis(half.round_to(z - np.log(total), fmt), -1, axis)
    return np.moveaxis(half.quotients(e, fmt), -1, axis)


def _normalized_rows(rows: Array, eps: float) -> Array:
    """(rows - mean) / sqrt(var + eps) with mean = fsum / d and var = fsum(c * c) / d, float64."""
    d = rows.shape[1]
    c = rows - (half.fsum_rows(rows) / d)[:, None]
    var = half.fsum_rows(c * c) / d
    return c / np.sqrt(var + float(np.float32(eps)))[:, None]


def _affine(y: Array, weight: Array | None, bias: Array | None) -> Array:
    if weight is not None:
        y = y * weight
    return y if bias is None else y + bias


def layer_norm(ins: Inputs, a: KernelAttrs, fmt: Format) -> Array:
    x, weight, bias = (_f64(v) for v in (list(ins) + [None, None])[:3])
    axis = a.get("axis", -1) % x.ndim
    rows = x.reshape(int(np.prod(x.shape[:axis])), -1)
    y = _normalized_rows(rows, a.get("eps", 1e-5)).reshape(x.shape)
    return half.round_to(_affine(y, weight, bias), fmt)


def rms_norm(ins: Inputs, a: KernelAttrs, fmt: Format) -> Array:
    """x / sqrt(fsum(x * x) / d + eps) * gamma over the last dim, float64 (x * x exact there), rounded once."""
    x, gamma = (_f64(v) for v in (list(ins) + [None])[:2])
    rows = x.reshape(-1, x.shape[-1])
    y = rows / np.sqrt(half.fsum_rows(rows * rows) / rows.shape[1] + float(np.float32(a.get("eps", 1e-5))))[:, None]
    return half.round_to(_affine(y.reshape(x.shape), gamma, None), fmt)


def _grouped(x: Array, weight: Array | None, bias: Array | None, groups: int, eps: float, fmt: Format) -> Array:
    per_channel = (1, -1) + (1,) * (x.ndim - 2)
    y = _normalized_rows(x.reshape(x.shape[0] * groups, -1), eps).reshape(x.shape)
    y = _affine(y, None if weight is None else weight.reshape(per_channel),
                None if bias is None else bias.reshape(per_channel))
    return half.round_to(y, fmt)


def group_norm(ins: Inputs, a: KernelAttrs, fmt: Format) -> Array:
    x, weight, bias = (_f64(v) for v in (list(ins) + [None, None])[:3])
    return _grouped(x, weight, bias, int(a["num_groups"]), a.get("eps", 1e-5), fmt)


def instance_norm(ins: Inputs, a: KernelAttrs, fmt: Format) -> Array:
    x, weight, bias = (_f64(v) for v in (list(ins) + [None, None])[:3])
    return _grouped(x, weight, bias, x.shape[1], a.get("eps", 1e-5), fmt)


def pool(ins: Inputs, a: KernelAttrs, fmt: Format) -> Array | None:
    """Average pools; None: a max pool, which Top's kernel computes exactly."""
    return avg_pool(ins, a, fmt) if a["pool_mode"] == "Avg" else None


def interp(ins: Inputs, a: KernelAttrs, fmt: Format) -> Array | None:
    """Linear resize along each resized axis in turn (resize.linear_sources' definition) in float64,
    rounded once; None (Top's kernel) for the other modes: nearest copies, and the backend emits
    no other."""
    if a.get("mode", "nearest") != "linear" or a.get("antialias", False) \
            or a.get("coord_mode", "half_pixel") == "tf_crop_and_resize":
        return None
    y = _f64(ins[0])
    scales = interp_scales(a, y.ndim - 2)
    for axis, (out, scale) in enumerate(zip(interp_out_sizes(ins, a, y, scales), scales, strict=True), start=2):
        size = y.shape[axis]
        if out == size and scale in (-1.0, 1.0):
            continue
        coords = resize.source_coords(size, out, scale if scale > 0 else out / size, a.get("coord_mode", "half_pixel"))
        i0, i1, f = resize.linear_sources(coords, size)
        f = f.astype(np.float64).reshape((-1,) + (1,) * (y.ndim - axis - 1))
        lo, hi = np.take(y, i0, axis=axis), np.take(y, i1, axis=axis)
        y = np.where(f == 0, lo, lo * (1.0 - f) + hi * f)
    return half.round_to(y, fmt)


# Active modes whose float32 kernel rounds some 16-bit inputs apart from the exact value (found
# exhaustively): f(x) in float64 with math.erf, rounded once.
_EXACT_ACTIVE = {
    "GELU": lambda x: x / 2 * (1 + np.array([math.erf(v) for v in (x / math.sqrt(2)).tolist()])),
    "ERF": lambda x: np.array([math.erf(v) for v in x.tolist()]),
}


@functools.cache
def _exact_table(mode: str, fmt: Format) -> Array:
    """_EXACT_ACTIVE[mode] of every value of the 16-bit type, by its bits (a float32 erf rounds a few
    inputs apart from it: GELU 7 F16 and 98 BF16 inputs, ERF 6 F16)."""
    x = np.arange(1 << 16, dtype=np.uint16).view(fmt.dtype).astype(np.float64)
    return half.round_to(_EXACT_ACTIVE[mode](x), fmt)


F32 = np.float32


def _sigmoid32(x: Array) -> Array:
    return F32(1) / (F32(1) + np.exp(-x))


# Active modes whose 16-bit results are the cmodel's float32 formula (exp, not Top's faster exp2)
# rounded once: f(float32 x, coeffs) -> float32. Top's kernels round a few 16-bit inputs of
# these apart from it, so they are written here, as the cmodel writes them (arith_extra).
FLOAT32_ACTIVE: dict[str, Callable[[Array, list[float]], Array]] = {
    "SIGMOID": lambda x, c: _sigmoid32(x),
    "SILU": lambda x, c: x / (F32(1) + np.exp(-x)),
    "SWISH": lambda x, c: x * _sigmoid32(F32(c[0]) * x),
    "QGELU": lambda x, c: x * _sigmoid32(F32(1.702) * x),
    # Top's HardSwish computes x * ((clip(x, -3, 3) + 3) / 6) (faster, no cancellation near -3)
    "HSWISH": lambda x, c: np.clip(x * F32(1 / 6) + F32(0.5), 0, 1) * x,
}
_COEFFS = {"SWISH": 1}  # the coeffs a FLOAT32_ACTIVE mode reads (beta); other counts: Top's kernel names the error


def active(ins: Inputs, a: KernelAttrs, fmt: Format) -> Array | None:
    """GELU (erf) and ERF exactly rounded, SIGMOID/SILU/SWISH/QGELU/HSWISH their float32 formula rounded
    once; None (Top's float32 kernel) for the other modes, whose float32 results round to the
    same 16-bit values as the cmodel's (tests/test_half_exact.py and tests/test_backend_fillins.py,
    every input)."""
    mode = a["mode"]
    coeffs = list(a.get("coeffs") or [])
    if mode in FLOAT32_ACTIVE and len(coeffs) == _COEFFS.get(mode, len(coeffs)):
        x = np.asarray(ins[0]).astype(F32)
        return half.round_to(FLOAT32_ACTIVE[mode](x, coeffs).astype(np.float64), fmt)
    if mode not in _EXACT_ACTIVE:
        return None
    return _exact_table(mode, fmt)[np.asarray(ins[0]).astype(fmt.dtype).view(np.uint16)]



def einsum(ins: Inputs, a: KernelAttrs, fmt: Format) -> Array | None:
    """Each output element the exact sum of its products, rounded once (as MatMul): the products
    of every letter (exact in float64 for up to four f16/bf16 factors), the summed letters last,
    summed by half.sums. Equations with '...' keep the float32 kernel rounded once."""
    eq = a["mode"].replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    operands = [_f64(x) for x in ins if x is not None]
    if "." in eq or len(operands) > 4:
        return None
    if not arrow:  # numpy's implicit output: the letters used once, sorted
        out = "".join(sorted(c for c in set(lhs) - {","} if lhs.count(c) == 1))
    summed = "".join(sorted(set(lhs) - {","} - set(out)))
    terms = np.einsum(f"{lhs}->{out}{summed}", *operands)
    return half.sums(terms.reshape(*terms.shape[:len(out)], -1), None, fmt)


# op name -> kernel; Conv2D's filter arrives in the plain layout (kernels_tpu un-packs it).
HALF_KERNELS: dict[str, HalfRun] = {
    "tpu.Conv2D": conv, "tpu.Deconv": deconv, "tpu.MatMul": matmul, "tpu.Pool2D": pool, "tpu.Reduce": reduce,
    "tpu.Softmax": softmax, "tpu.LayerNorm": layer_norm, "tpu.GroupNorm": group_norm,
    "tpu.InstanceNorm": instance_norm, "tpu.Interp": interp, "tpu.Active": active, "tpu.RMSNorm": rms_norm,
    "tpu.CumSum": cumsum, "tpu.ScatterElements": _scatter("tpu.ScatterElements"),
    "tpu.ScatterND": _scatter("tpu.ScatterND"),
    "tpu.Einsum": einsum,
}

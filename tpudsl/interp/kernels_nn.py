"""Convolution, transposed convolution, matrix multiplication (1-D/2-D/3-D, NC* layout), Einsum.

Conv is im2col + one batched GEMM per group (np.matmul -> BLAS, float32 accumulation like
onnxruntime); a filter with one input channel per group (depthwise) is cheaper as a few column
copies and a small GEMM per channel (depthwise.py), a constant 1x1 group-1 filter as one GEMM on the
input's buffer (pointwise.py), and a wide 3x3 stride-1 conv as Winograd F(4x4, 3x3) or F(2x2, 3x3)
(winograd.py).
Deconv is the adjoint: one GEMM gives every (output channel, tap) contribution of every input
pixel, then a loop over taps scatter-adds them into the output (col2im).

Filters are packed into GEMM layout by `_pack_*`; when the filter operand is a `top.Weight`, the
packing happens once in `prepare`, otherwise on every call (the DragGAN lesson, see kernel.py)."""

from __future__ import annotations

import itertools
import math

import numpy as np

from tpudsl.dialects.geometry.window import transposed_out_size, window_out_size
from tpudsl.interp import depthwise, pointwise, winograd
from tpudsl.interp.kernel import Array, Inputs, Kernel, KernelAttrs, Run, apply_fused_relu
from tpudsl.interp.windows import Geometry, pad_spatial, tap_slices


# ---- Conv ---------------------------------------------------------------------------------

# Winograd only pays off once its 16 per-tile GEMMs are big enough for BLAS. Measured on
# ResNet-18 shapes (best of 41, one thread): 15-25% faster at 64-256 channels with 14x14 or more
# outputs, slower at 512 channels on 7x7 (16 tiles).
WINOGRAD_MIN_CHANNELS = 64
WINOGRAD_MIN_TILES = 32


# F(4x4, 3x3) needs bigger outputs: at 28x28 and 56x56 (49 and 196 tiles of 4x4) its 36 GEMMs take
# half the time of F(2x2)'s 16; at 14x14 (16 tiles) they are slower than F(2x2)'s.
WINOGRAD_F4_MIN_TILES = 49
_TILE = {"f2": 2, "f4": 4}  # output tile size


def _winograd_kind(in_channels: int, g: Geometry, out: tuple[int, ...]) -> str | None:
    """"f4", "f2" or None (im2col) for a conv with output spatial size `out`."""
    if not (g.kernel == (3, 3) and g.strides == (1, 1) and g.dilations == (1, 1) and g.group == 1
            and in_channels >= WINOGRAD_MIN_CHANNELS):
        return None
    if math.prod([-(-o // 4) for o in out]) >= WINOGRAD_F4_MIN_TILES:
        return "f4"
    return "f2" if math.prod([-(-o // 2) for o in out]) >= WINOGRAD_MIN_TILES else None


def _uses_winograd(in_channels: int, g: Geometry, out: tuple[int, ...]) -> bool:
    return _winograd_kind(in_channels, g, out) is not None


def _pack_conv_filter(w: Array, g: Geometry, out: tuple[int, ...] | None,
                      bias: Array | None = None) -> tuple[str | None, Array]:
    """(algorithm, packed filter): "f4" [36, ic, oc], "f2" [16, ic, oc], "depthwise"
    (depthwise.pack's, with the constant `bias` packed in), None (im2col) [g, oc/g, ic/g * K].

    `out` (the output spatial size) decides the algorithm; unknown, it is plain GEMM."""
    if w.shape[1] == 1:  # one input channel per group
        return "depthwise", depthwise.pack(w, g, bias=bias)
    kind = None if out is None else _winograd_kind(w.shape[1] * g.group, g, out)
    if kind is not None:
        return kind, winograd.pack_filter(w, _TILE[kind])
    oc = w.shape[0]
    return None, np.ascontiguousarray(w.reshape(g.group, oc // g.group, -1), dtype=np.float32)


def _out_sizes(x_shape: tuple[int, ...], g: Geometry) -> tuple[int, ...]:
    return tuple(
        window_out_size(size, k, s, d, pb, pe)
        for size, k, s, d, pb, pe in zip(x_shape[2:], g.kernel, g.strides, g.dilations, g.pads_begin, g.pads_end, strict=True)
    )


def _conv(x: Array, packed: tuple[str | None, Array], bias: Array | None, g: Geometry, a: KernelAttrs,
          out: tuple[int, ...] | None = None, channels_last: bool = False) -> Array:
    """The conv of x with the packed filter, plus bias, then the fused relu of `a` (in place);
    `out`, the output size, if the caller knows it; `channels_last`: a Winograd result may be the
    view of a channels-last array (`_conv_view`)."""
    out = _out_sizes(x.shape, g) if out is None else out
    kind, w = packed
    if kind == "depthwise":  # bias (unless packed) and relu applied per block of channels, in cache
        limit = _relu_limit(a)  # kernel.relu's bounds
        clip = None if limit is None else (0.0, limit if limit > 0 else np.inf)
        bias = None if bias is None or w.bias is not None else bias.astype(np.float32, copy=False)
        return depthwise.conv(x, w, g, out, bias, clip)
    if kind in _TILE:  # pads and bias folded into its transforms
        y = winograd.conv3x3(x, w, _TILE[kind], (*g.pads_begin, *g.pads_end), bias, channels_last)
    else:
        y = _conv_gemm(x, w, g, out)
        if bias is not None:
            y += bias.reshape((1, -1) + (1,) * len(out)).astype(np.float32)
    return apply_fused_relu(y, a, out=y)  # y is always a fresh array


def _conv_gemm(x: Array, packed: Array, g: Geometry, out: tuple[int, ...]) -> Array:
    n, c = x.shape[:2]
    groups, oc_g, _ = packed.shape
    spatial = math.prod(out)
    taps = math.prod(g.kernel)
    if taps == 1:
        xp = pad_spatial(x, g.pads_begin, g.pads_end)
        window = xp[(slice(None), slice(None), *tap_slices((0,) * len(out), g, out))]
        return np.matmul(packed, window.reshape(n, groups, c // groups, spatial)).reshape(n, groups * oc_g, *out)
    if g.kernel == g.strides and not any(g.pads_begin) and not any(g.pads_end) and max(g.dilations) == 1:
        # Windows that tile the input (ViT's and ConvNeXt's patch embeddings): the columns are the
        # input's blocks, one transposing copy; a strided gather per tap was 2.6x slower at 16x16.
        rank = len(out)
        x = x[(slice(None), slice(None), *(slice(0, o * k) for o, k in zip(out, g.kernel, strict=True)))]
        x = x.astype(np.float32, copy=False)  # float32 columns, as the other paths' im2col
        blocks = x.reshape(n, c, *itertools.chain.from_iterable(zip(out, g.kernel, strict=True)))
        col = blocks.transpose(0, 1, *range(3, 2 + 2 * rank, 2), *range(2, 2 + 2 * rank, 2))
        return np.matmul(packed, col.reshape(n, groups, -1, spatial)).reshape(n, groups * oc_g, *out)
    col = np.empty((n, c, taps, *out), np.float32)
    if taps >= PHASE_MIN_TAPS_PER_PHASE * math.prod(g.strides) > PHASE_MIN_TAPS_PER_PHASE:
        # Many taps at a stride: each tap's column is a unit-step window of one stride phase,
        # not a strided gather (ResNet-18's 7x7 stride-2 stem 15-18% faster).
        buf, phases, _ = _stride_phases(x, g)
        for t, tap in enumerate(g.taps()):
            pos = [i * d for i, d in zip(tap, g.dilations, strict=True)]
            ph = phases.index(tuple(p % st for p, st in zip(pos, g.strides, strict=True)))
            col[:, :, t] = buf[(slice(None), slice(None), ph,
                                *(slice(p // st, p // st + o) for p, st, o in zip(pos, g.strides, out, strict=True)))]
    else:
        xp = pad_spatial(x, g.pads_begin, g.pads_end)
        for t, tap in enumerate(g.taps()):
            col[:, :, t] = xp[(slice(None), slice(None), *tap_slices(tap, g, out))]
    return np.matmul(packed, col.reshape(n, groups, -1, spatial)).reshape(n, groups * oc_g, *out)


def _stride_phases(x: Array, g: Geometry) -> tuple[Array, list[tuple[int, ...]], list[int]]:
    """The zero-padded input written straight into its stride phases: (buf [n, c, phases,
    *phase shape], the phases, the phase shape). Phase p (per axis) holds padded positions p,
    p + s, ..., so padded position q of an axis is element q // s of phase q % s, and a tap at
    padded offset `pos` reads phase pos % s from element pos // s on in unit steps."""
    s = g.strides
    padded = [d + pb + pe for d, pb, pe in zip(x.shape[2:], g.pads_begin, g.pads_end, strict=True)]
    phase_shape = [-(-size // st) for size, st in zip(padded, s, strict=True)]
    phases = list(itertools.product(*(range(st) for st in s)))
    buf = np.zeros((*x.shape[:2], len(phases), *phase_shape), np.float32)
    for i, ph in enumerate(phases):
        # input index r sits at padded position r + pad: phase (r + pad) % s, index (r + pad) // s
        first = [(p - pb) % st for p, pb, st in zip(ph, g.pads_begin, s, strict=True)]
        part = x[(slice(None), slice(None), *(slice(f, None, st) for f, st in zip(first, s, strict=True)))]
        at = [(f + pb) // st for f, pb, st in zip(first, g.pads_begin, s, strict=True)]
        buf[(slice(None), slice(None), i, *(slice(a, a + d) for a, d in zip(at, part.shape[2:], strict=True)))] = part
    return buf, phases, phase_shape


# A strided conv's im2col reads stride phases when it has at least this many taps per phase:
# splitting the input into phases costs about one strided pass over it. Measured (one thread,
# best CPU time): 7x7 stride 2 (12 taps a phase) 15-18% faster, 3x3 stride 2 (2.25) -8% to +7%.
PHASE_MIN_TAPS_PER_PHASE = 4


def _conv_run(ins: Inputs, a: KernelAttrs) -> Array:
    x, w, bias = ins[0], ins[1], ins[2] if len(ins) > 2 else None
    g = Geometry.of(a, w.shape, x.shape)
    return _conv(x, _pack_conv_filter(w, g, _out_sizes(x.shape, g)), bias, g, a)


def _conv_prepare(static: Inputs, a: KernelAttrs, channels_last: bool = False) -> Run:
    w = static[1]
    if w is None:  # computed filter: read it at inference time
        return _conv_run
    g = Geometry.of(a, w.shape)
    out_shape = a.out_shape()
    if pointwise.fits(g, a.get("auto_pad", "NOTSET")):
        positions = None if out_shape is None else math.prod(out_shape[2:])
        packed = pointwise.pack(w, static[2] if len(static) > 2 else None, g, _relu_limit(a), positions)
        return lambda ins, a: pointwise.conv(ins[0], packed, ins[2] if len(ins) > 2 else None, channels_last)
    # Packing needs no pads, so auto_pad waits for the input shape at inference. A constant bias
    # goes into a depthwise filter's GEMM (the call's bias operand is then that same weight).
    packed = _pack_conv_filter(w, g, None if out_shape is None else tuple(out_shape[2:]),
                               static[2] if len(static) > 2 else None)
    # The geometry of the typed input shape, made once (5 us a call, a twentieth of a small depthwise layer).
    shape = a.in_shapes[0] if a.in_shapes else None
    typed = None if shape is None else Geometry.of(a, w.shape, shape)
    typed_out = None if typed is None else _out_sizes(shape, typed)

    def run(ins: Inputs, a: KernelAttrs) -> Array:
        x, bias = ins[0], ins[2] if len(ins) > 2 else None
        if x.shape == shape:
            return _conv(x, packed, bias, typed, a, typed_out, channels_last)
        return _conv(x, packed, bias, Geometry.of(a, w.shape, x.shape), a, channels_last=channels_last)

    return run


def _conv_view(static: Inputs, a: KernelAttrs) -> Run:
    """For a conv whose readers are all Winograd convs (`_reads_channels_last`): a pointwise or
    Winograd result is the view of a channels-last array, so the Winograd result's transposing copy
    back to NC* is skipped and the reader's channels-last copy of it is a plain one. Measured
    standalone (one thread): Winograd -> Winograd 64 channels 56x56 0.2 ms less a pair (0.12 the
    output's transpose, 0.085 the reader's), 128 channels 28x28 0.075; a pointwise GEMM costs the
    same either way round. The other algorithms produce NC* natively and are unchanged."""
    return _conv_prepare(static, a, channels_last=True)


def _reads_channels_last(a: KernelAttrs) -> bool:
    """Whether a conv is a Winograd one (from its operand and result types): it copies its input
    into channels-last tiles, a plain copy for a channels-last input. Other readers gain nothing:
    im2col's and a folded pointwise conv's copies become transposing gathers (MobileNetV2's and
    EfficientNet's projection -> expansion pairs measured 3-7% slower per inference that way), and a
    depthwise conv reads channel blocks in place."""
    x, w = (a.in_shapes + [None, None])[:2]
    out = a.out_shape()
    if x is None or w is None or out is None or len(w) != 4:
        return False
    g = Geometry.of(a, w, x)
    return _uses_winograd(w[1] * g.group, g, tuple(out[2:]))


def _relu_limit(a: KernelAttrs) -> float | None:
    return float(a.get("relu_limit", -1.0)) if a.get("do_relu", False) else None


# ---- Deconv -------------------------------------------------------------------------------

def _pack_deconv_filter(w: Array, group: int, reordered: bool) -> Array:
    """Filter -> [g, oc/g * K, ic/g] (the transposed-GEMM left operand).

    `dynweight_reorderd` false: ONNX layout [ic, oc/g, *k]; true: [oc, ic/g, *k]."""
    if reordered:
        oc, ic_g = w.shape[:2]
        w = w.reshape(group, oc // group, ic_g, -1).transpose(0, 1, 3, 2)
        return np.ascontiguousarray(w.reshape(group, -1, ic_g), dtype=np.float32)
    ic, oc_g = w.shape[:2]
    w = w.reshape(group, ic // group, -1).transpose(0, 2, 1)
    return np.ascontiguousarray(w, dtype=np.float32)


def _deconv(x: Array, packed: Array, bias: Array | None, g: Geometry, output_padding) -> Array:
    n, ic = x.shape[:2]
    groups = packed.shape[0]
    size = x.shape[2:]
    k_total = math.prod(g.kernel)
    oc = groups * packed.shape[1] // k_total
    col = np.matmul(packed, x.reshape(n, groups, ic // groups, -1))
    col = col.reshape(n, oc, k_total, *size)
    full = tuple(transposed_out_size(s, k, st, d, 0, 0, 0) for s, k, st, d in zip(size, g.kernel, g.strides, g.dilations, strict=True))
    out = tuple(
        f - pb - pe + op for f, pb, pe, op in zip(full, g.pads_begin, g.pads_end, output_padding, strict=True)
    )
    canvas = np.zeros((n, oc, *(max(f, pb + o) for f, pb, o in zip(full, g.pads_begin, out, strict=True))), np.float32)
    for t, tap in enumerate(g.taps()):
        canvas[(slice(None), slice(None), *tap_slices(tap, g, size))] += col[:, :, t]
    y = canvas[(slice(None), slice(None), *(slice(pb, pb + o) for pb, o in zip(g.pads_begin, out, strict=True)))]
    if bias is not None:
        y = y + bias.reshape((1, -1) + (1,) * len(out)).astype(np.float32)
    return np.ascontiguousarray(y)


def _deconv_args(w_shape: tuple[int, ...], a: KernelAttrs) -> tuple[Geometry, list[int], bool]:
    g = Geometry.of(a, w_shape)  # Deconv has no auto_pad
    output_padding = list(a.get("output_padding") or [0] * len(g.kernel))
    return g, output_padding, bool(a.get("dynweight_reorderd", False))


def _deconv_run(ins: Inputs, a: KernelAttrs) -> Array:
    x, w, bias = ins[0], ins[1], ins[2] if len(ins) > 2 else None
    g, output_padding, reordered = _deconv_args(w.shape, a)
    return _deconv(x, _pack_deconv_filter(w, g.group, reordered), bias, g, output_padding)


def _deconv_prepare(static: Inputs, a: KernelAttrs) -> Run:
    w = static[1]
    if w is None:  # computed filter: read (and reorder) it at inference time
        return _deconv_run
    g, output_padding, reordered = _deconv_args(w.shape, a)
    packed = _pack_deconv_filter(w, g.group, reordered)
    return lambda ins, a: _deconv(ins[0], packed, ins[2] if len(ins) > 2 else None, g, output_padding)


# ---- MatMul -------------------------------------------------------------------------------

def _swap_last(x: Array) -> Array:
    return np.swapaxes(x, -1, -2)


def _matmul(x: Array, right: Array, bias: Array | None, a: KernelAttrs) -> Array:
    if a.get("hdim_is_batch", False):
        raise NotImplementedError("top.MatMul with hdim_is_batch=true")
    if a.get("left_transpose", False):
        x = _swap_last(x)
    if right.ndim == 2 and x.ndim > 2:
        # One GEMM over all rows: np.matmul would call BLAS once per leading index.
        y = np.matmul(x.reshape(-1, x.shape[-1]), right).reshape(*x.shape[:-1], right.shape[-1])
    else:
        y = np.matmul(x, right)
    if bias is not None:
        if np.broadcast_shapes(y.shape, bias.shape) == y.shape:
            y += bias.astype(y.dtype, copy=False)  # y is fresh
        else:
            y = y + bias.astype(y.dtype)
    if a.get("output_transpose", False):
        y = _swap_last(y)
    shape = a.out_shape()
    # keep_dims=false flattens the batch dims; the result type has the final shape.
    return y.reshape(shape) if shape is not None and shape != y.shape else y


def _matmul_right(right: Array, a: KernelAttrs) -> Array:
    return _swap_last(right) if a.get("right_transpose", False) else right


def _matmul_run(ins: Inputs, a: KernelAttrs) -> Array:
    return _matmul(ins[0], _matmul_right(ins[1], a), ins[2] if len(ins) > 2 else None, a)


def _matmul_prepare(static: Inputs, a: KernelAttrs) -> Run:
    if static[1] is None:
        return _matmul_run
    right = np.ascontiguousarray(_matmul_right(static[1], a))
    shape = a.in_shapes[0] if a.in_shapes else None
    if (right.ndim == 2 and shape is not None and len(shape) >= 2 and not a.get("hdim_is_batch", False)
            and not a.get("left_transpose", False) and not a.get("output_transpose", False)):
        return _rows_gemm(shape, right, a)
    return lambda ins, a: _matmul(ins[0], right, ins[2] if len(ins) > 2 else None, a)


def _rows_gemm(shape: tuple[int, ...], right: Array, a: KernelAttrs) -> Run:
    """x [..., k] of the typed input shape @ right [k, n] (+ bias) as one GEMM over all rows, with
    the attribute reads, shape rules and the bias broadcast decided here once: they were 2-3 us of
    Python a call, 3% of ViT's 197x192 @ 192x192. Another input shape takes `_matmul`."""
    rows = (math.prod(shape[:-1]), shape[-1])
    y_shape = (*shape[:-1], right.shape[1])
    final = a.out_shape() or y_shape  # keep_dims=false flattens the batch dims
    bias_shape = a.in_shapes[2] if len(a.in_shapes) > 2 else None
    # a bias of unknown shape, or one that broadcasts the result bigger, takes _matmul's add
    in_place = bias_shape is not None and np.broadcast_shapes(y_shape, bias_shape) == y_shape

    def run(ins: Inputs, a: KernelAttrs) -> Array:
        x, bias = ins[0], ins[2] if len(ins) > 2 else None
        if x.shape != shape or (bias is not None and not in_place):
            return _matmul(x, right, bias, a)
        y = np.matmul(x.reshape(rows), right).reshape(y_shape)
        if bias is not None:
            y += bias.astype(y.dtype, copy=False)  # y is fresh
        return y.reshape(final)

    return run


def _einsum(ins: Inputs, a: KernelAttrs) -> Array:
    # optimize routes contractions through BLAS instead of einsum's own loops.
    return np.einsum(a["mode"].replace(" ", ""), *[x for x in ins if x is not None], optimize=True)


KERNELS: dict[str, Kernel] = {
    "top.Einsum": Kernel(_einsum),
    "top.Conv": Kernel(_conv_run, _conv_prepare, fuses_relu=True, strided_operands=_reads_channels_last, view=_conv_view),
    "top.Deconv": Kernel(_deconv_run, _deconv_prepare),
    "top.MatMul": Kernel(_matmul_run, _matmul_prepare, strided_operands=True),
}

"""The cmodel's arithmetic on local tiles (numpy), written from the records' definitions in isa.py.
F32 records accumulate in float32; F16/BF16 records that reduce give the exact value rounded once
(arith_half.py), the others compute each element in float32 and round once when written. Written
again on purpose: the Tpu interpreter, which runs the Top kernels on whole tensors, is what the
cmodel is checked against, so it is never imported here."""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from tpudsl.backend.cmodel import arith_half, arith_reduce_half


def relu(y: np.ndarray, do_relu: int, limit: float) -> np.ndarray:
    """Negatives to 0 (and above `limit` to `limit` when it is > 0) by comparisons, so -0.0 and NaN
    pass through unchanged, as in onnxruntime's Relu: np.maximum(-0.0, 0) is +0.0 in float32 but
    -0.0 in float16, which made an F16 sign-of-zero differ from the Tpu interpreter's."""
    if not do_relu:
        return y
    y = np.where(y < 0, y.dtype.type(0), y)
    return np.where(y > limit, y.dtype.type(limit), y) if limit > 0 else y


def _windows(xp: np.ndarray, kh: int, kw: int, sh: int, sw: int, dh: int, dw: int, oh: int, ow: int) -> np.ndarray:
    """(n, c, oh, ow, kh, kw): the window of every output position of a padded input."""
    win = sliding_window_view(xp, ((kh - 1) * dh + 1, (kw - 1) * dw + 1), axis=(2, 3))
    return win[:, :, ::sh, ::sw, ::dh, ::dw][:, :, :oh, :ow]


def conv_sum(x, weight, out_shape, r, dtype=np.float32) -> np.ndarray:
    """The window sums of x (n, ic, ih, iw) with weight (oc, ic/group, kh, kw), computed in `dtype`
    (float64 for int8 operands: every sum of int8 products below 2^53 is exact whatever the order)."""
    xp = np.pad(x.astype(dtype), ((0, 0), (0, 0), (r.pt, r.pb), (r.pl, r.pr)))
    return _correlate(xp, weight, out_shape, r.sh, r.sw, r, dtype)


def deconv(x, weight, bias, out_shape, r) -> np.ndarray:
    """x (n, ic, ih, iw) with sh - 1 (sw - 1) zeros between rows (columns) and the record's zero
    borders, correlated at stride 1 with the flipped weight (oc, ic/group, kh, kw): every input
    pixel x[i] reaches outputs i*s + tap*d - pad, the transposed convolution's definition."""
    n, ic, ih, iw = x.shape
    half = arith_half.is_half(x.dtype)
    z = np.zeros((n, ic, r.pt + (ih - 1) * r.sh + 1 + r.pb, r.pl + (iw - 1) * r.sw + 1 + r.pr),
                 np.float64 if half else np.float32)
    z[:, :, r.pt:r.pt + (ih - 1) * r.sh + 1:r.sh, r.pl:r.pl + (iw - 1) * r.sw + 1:r.sw] = x
    if half:
        y = _correlate_half(z, weight[:, :, ::-1, ::-1], bias, out_shape, 1, 1, r, x.dtype)
    else:
        y = _correlate(z, weight[:, :, ::-1, ::-1], out_shape, 1, 1, r, np.float32)
        if bias is not None:
            y += bias.astype(np.float32).reshape(1, -1, 1, 1)
    return relu(y, r.do_relu, r.relu_limit)


def _correlate(xp, weight, out_shape, sh: int, sw: int, r, dtype) -> np.ndarray:
    """out[n, o] = sum over o's group's channels and the window (stride sh, sw; r's dilation) of xp * weight."""
    n, oc, oh, ow = out_shape
    win = _windows(xp, r.kh, r.kw, sh, sw, r.dh, r.dw, oh, ow)
    icg, ocg = xp.shape[1] // r.group, oc // r.group
    y = np.empty((n, oc, oh, ow), dtype)
    for g in range(r.group):
        part = np.tensordot(win[:, g * icg:(g + 1) * icg], weight[g * ocg:(g + 1) * ocg].astype(dtype),
                            axes=([1, 4, 5], [1, 2, 3]))  # (n, oh, ow, ocg)
        y[:, g * ocg:(g + 1) * ocg] = part.transpose(0, 3, 1, 2)
    return y


def _correlate_half(xp, weight, bias, out_shape, sh: int, sw: int, r, dt) -> np.ndarray:
    """_correlate of the float64 padded input, each output the exact sum of its products plus
    bias rounded once to dt; the bound from the same correlation of magnitudes."""
    w = weight.astype(np.float64)
    s = _correlate(xp, w, out_shape, sh, sw, r, np.float64)
    a = _correlate(np.abs(xp), np.abs(w), out_shape, sh, sw, r, np.float64)
    n = w[0].size
    if bias is not None:
        b = bias.astype(np.float64).reshape(1, -1, 1, 1)
        s, a, n = s + b, a + np.abs(b), n + 1
    win = _windows(xp, r.kh, r.kw, sh, sw, r.dh, r.dw, out_shape[2], out_shape[3])
    icg, ocg = xp.shape[1] // r.group, out_shape[1] // r.group

    def terms_at(index):
        b_, o, h, col = index
        g = o // ocg
        t = (win[b_, g * icg:(g + 1) * icg, h, col] * w[o]).ravel()
        return t if bias is None else np.append(t, float(bias[o]))

    return arith_half.products(s, a, n, dt, terms_at)


def conv(x, weight, bias, out_shape, r) -> np.ndarray:
    """x (n, ic, ih, iw); weight (oc, ic/group, kh, kw); bias (oc,) or None."""
    oc = out_shape[1]
    if arith_half.is_half(x.dtype):
        xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (r.pt, r.pb), (r.pl, r.pr)))
        return relu(_correlate_half(xp, weight, bias, out_shape, r.sh, r.sw, r, x.dtype), r.do_relu, r.relu_limit)
    y = conv_sum(x, weight, out_shape, r)
    if bias is not None:
        y += bias.astype(np.float32).reshape(1, oc, 1, 1)
    return relu(y, r.do_relu, r.relu_limit)


def pool(x, out_shape, r) -> np.ndarray:
    n, c, oh, ow = out_shape
    pads = ((0, 0), (0, 0), (r.pt, r.pb), (r.pl, r.pr))
    if r.mode != 0 and arith_half.is_half(x.dtype):
        return relu(_avg_pool_half(x, out_shape, r, pads), r.do_relu, r.relu_limit)
    x = x.astype(np.float32)
    if r.mode == 0:  # max
        xp = np.pad(x, pads, constant_values=-np.inf)
        y = _windows(xp, r.kh, r.kw, r.sh, r.sw, 1, 1, oh, ow).max(axis=(4, 5))
    else:
        total = _windows(np.pad(x, pads), r.kh, r.kw, r.sh, r.sw, 1, 1, oh, ow).sum(axis=(4, 5))
        y = total / _pool_divisors(r, x.shape[2:], oh, ow).astype(np.float32)
    return relu(y.astype(np.float32), r.do_relu, r.relu_limit)


def _pool_divisors(r, hw, oh: int, ow: int) -> np.ndarray:
    """Each window's divisor, (1, 1, oh, ow) float64: its positions that count, the slice's input
    and, with count_include_pad, its pads but a BdcPoolCeil's uncounted end rows and columns."""
    ub, ur = getattr(r, "uncounted_b", 0), getattr(r, "uncounted_r", 0)  # a BdcPoolCeil's
    if r.count_include_pad and not (ub or ur):  # every window lies in the padded slice: all kh x kw count
        return np.full((1, 1, oh, ow), float(r.kh * r.kw))
    counted = np.ones((1, 1, *hw))
    if r.count_include_pad:
        counted = np.pad(counted, ((0, 0), (0, 0), (r.pt, r.pb - ub), (r.pl, r.pr - ur)), constant_values=1.0)
        ends = ((0, 0), (0, 0), (0, ub), (0, ur))
    else:
        ends = ((0, 0), (0, 0), (r.pt, r.pb), (r.pl, r.pr))
    return _windows(np.pad(counted, ends), r.kh, r.kw, r.sh, r.sw, 1, 1, oh, ow).sum(axis=(4, 5))


def _avg_pool_half(x, out_shape, r, pads) -> np.ndarray:
    """The exact window sum over the count (kh x kw, or the window's input elements), rounded once."""
    n, c, oh, ow = out_shape
    win = _windows(np.pad(x.astype(np.float64), pads), r.kh, r.kw, r.sh, r.sw, 1, 1, oh, ow)
    count = _pool_divisors(r, x.shape[2:], oh, ow)
    return arith_half.means(win.sum(axis=(4, 5)), np.abs(win).sum(axis=(4, 5)), r.kh * r.kw, count, x.dtype,
                            lambda i: win[i])


def _matmul_half(left, right, bias, dt) -> np.ndarray:
    """Each entry the exact sum of its k products (+ bias) rounded once to dt."""
    lf, rf = left.astype(np.float64), right.astype(np.float64)
    s, a, n = lf @ rf, np.abs(lf) @ np.abs(rf), lf.shape[-1]
    if bias is not None:
        b = bias.astype(np.float64)
        s, a, n = s + b, a + np.abs(b), n + 1

    def terms_at(index):
        t = lf[index[0], index[1], :] * rf[index[0], :, index[2]]
        return t if bias is None else np.append(t, float(bias[index[2]]))

    return arith_half.products(s, a, n, dt, terms_at)


def matmul(left, right, bias, r) -> np.ndarray:
    if arith_half.is_half(left.dtype):
        return relu(_matmul_half(left, right, bias, left.dtype), r.do_relu, r.relu_limit)
    y = left.astype(np.float32) @ right.astype(np.float32)
    if bias is not None:
        y += bias.astype(np.float32)
    return relu(y, r.do_relu, r.relu_limit)


BINARY = [np.add, np.subtract, np.multiply, np.maximum, np.minimum, np.divide]  # by isa.BINARY_OPS/CONST_OPS code


def binary(a, b, r) -> np.ndarray:
    return relu(BINARY[r.op](a.astype(np.float32), b.astype(np.float32)), r.do_relu, r.relu_limit)


def const(x, r) -> np.ndarray:
    x, v = x.astype(np.float32), np.float32(r.value)
    y = BINARY[r.op](v, x) if r.reverse else BINARY[r.op](x, v)
    return relu(y, r.do_relu, r.relu_limit)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _gelu64(x: np.ndarray) -> np.ndarray:
    """x * Phi(x) = x / 2 * (1 + erf(x / sqrt 2)) in float64, erf from math.erf (exact; slow, but the
    cmodel runs small tensors)."""
    erf = np.vectorize(math.erf, otypes=[np.float64])
    x64 = x.astype(np.float64)
    return x64 / 2 * (1 + erf(x64 / math.sqrt(2)))


def _gelu(x: np.ndarray) -> np.ndarray:
    """GELU rounded once to float32."""
    return _gelu64(x).astype(np.float32)


ACTIVE = [  # by isa.ACTIVE_MODES code: f(x, record)
    lambda x, r: relu(x, 1, r.limit), lambda x, r: _sigmoid(x), lambda x, r: np.tanh(x), lambda x, r: np.exp(x),
    lambda x, r: np.abs(x), lambda x, r: _gelu(x), lambda x, r: np.sqrt(x),
    lambda x, r: np.where(x >= 0, x, np.float32(r.limit) * x),
]


def active(x, r) -> np.ndarray:
    if r.mode == 5 and arith_half.is_half(x.dtype):  # F16/BF16 GELU: the float64 value, rounded once when written
        return _gelu64(x)
    return ACTIVE[r.mode](x.astype(np.float32), r)


def _l1(x, axis, keepdims):
    return np.sum(np.abs(x), axis=axis, keepdims=keepdims)


def _l2(x, axis, keepdims):
    return np.sqrt(np.sum(x * x, axis=axis, keepdims=keepdims))


REDUCE = [np.sum, np.mean, np.max, np.min, _l1, _l2, np.prod]  # by isa.REDUCE_MODES code


def reduce_c(x, r) -> np.ndarray:
    """The record's reduction of x (n, c, h, w) along C, in float32 (F16/BF16 sum, mean, L1, L2 and
    product: exact, rounded once; the last three in arith_reduce_half.py)."""
    if arith_half.is_half(x.dtype) and r.mode in arith_reduce_half.HALF_MODES:
        return arith_reduce_half.HALF_MODES[r.mode](x)
    if arith_half.is_half(x.dtype) and r.mode in (0, 1):
        xf = x.astype(np.float64)
        s, a = xf.sum(axis=1, keepdims=True), np.abs(xf).sum(axis=1, keepdims=True)
        terms_at = lambda i: xf[i[0], :, i[2], i[3]]  # noqa: E731
        if r.mode == 0:
            return arith_half.products(s, a, x.shape[1], x.dtype, terms_at)
        return arith_half.means(s, a, x.shape[1], np.float64(x.shape[1]), x.dtype, terms_at)
    return REDUCE[r.mode](x.astype(np.float32), axis=1, keepdims=True)


def softmax(x, r) -> np.ndarray:
    """softmax(beta * x) along C, from its definition: exp(z - max) / sum exp(z - max), z in
    float64, e = exp(z), e over the exact sum of e rounded once to the record's type (F32 too: a
    softmax an F16 or INT8 model keeps in F32, for attention masks, is bit-exact with the
    interpreter); log: z - log(fsum(e))."""
    z = x.astype(np.float64)
    z = z * float(np.float32(r.beta)) if np.float32(r.beta) != 1 else z
    z = np.ascontiguousarray(z - z.max(axis=1, keepdims=True))
    e = np.exp(z)
    if r.log:
        return (z - np.log(arith_half.fsum_along(e, 1))).astype(x.dtype)
    return arith_half.softmax(e, x.dtype)


def _centred(x: np.ndarray, axis: int) -> np.ndarray:
    """x minus its float32 mean along `axis`, then minus the mean of that: the first mean is off by
    up to its own ulp, many standard deviations when the mean is large and the spread small, and
    x - mean is exact there, so the second mean is that error (the corrected two-pass algorithm)."""
    d = x - x.mean(axis=axis, keepdims=True)
    return d - d.mean(axis=axis, keepdims=True)


def layer_norm(x, weight, bias, eps: float) -> np.ndarray:
    """(x - mean) / sqrt(var + eps) * weight + bias along C, var the mean squared deviation.
    F16/BF16: arith_half.normalize's float64 steps, rounded once."""
    if arith_half.is_half(x.dtype):
        y = arith_half.normalize(x.astype(np.float64), 1, eps)
        y = y if weight is None else y * weight.astype(np.float64)
        return (y if bias is None else y + bias.astype(np.float64)).astype(x.dtype)
    x = x.astype(np.float32)
    d = _centred(x, 1)
    y = d / np.sqrt((d * d).mean(axis=1, keepdims=True) + np.float32(eps))
    if weight is not None:
        y = y * weight.astype(np.float32)
    return y if bias is None else y + bias.astype(np.float32)


def _lerp(x: np.ndarray, axis: int, i0, i1, f) -> np.ndarray:
    """x[i0] * (1 - f) + x[i1] * f along `axis`, in x's dtype (float32 or float64); x[i0] where
    f is 0 (f 0 everywhere: a plain copy, nearest)."""
    a = np.take(x, np.asarray(i0), axis=axis)
    if not np.any(f):
        return a
    b = np.take(x, np.asarray(i1), axis=axis)
    f = np.asarray(f, np.float32).astype(x.dtype).reshape((-1,) + (1,) * (x.ndim - axis - 1))
    return np.where(f == 0, a, a * (x.dtype.type(1) - f) + b * f)


def interp(x, rows, cols) -> np.ndarray:
    """Resize of x (n, c, h, w): rows first, then columns, each (i0, i1, f) per output index; in
    float32, F16/BF16 in float64 (each product and sum one float64 rounding) rounded once."""
    if arith_half.is_half(x.dtype):
        return _lerp(_lerp(x.astype(np.float64), 2, *rows), 3, *cols).astype(x.dtype)
    return _lerp(_lerp(x.astype(np.float32), 2, *rows), 3, *cols)


def group_norm(x, weight, bias, groups: int, eps: float) -> np.ndarray:
    """Each n's groups of c / groups channels normalized over all their elements, then per channel
    * weight + bias (each (c,) or None); var is the mean squared deviation."""
    n, c = x.shape[:2]
    if arith_half.is_half(x.dtype):
        y = arith_half.normalize(x.astype(np.float64).reshape(n, groups, -1), 2, eps).reshape(x.shape)
        y = y if weight is None else y * weight.astype(np.float64).reshape(1, c, 1, 1)
        return (y if bias is None else y + bias.astype(np.float64).reshape(1, c, 1, 1)).astype(x.dtype)
    g = x.astype(np.float32).reshape(n, groups, -1)
    d = _centred(g, 2)
    y = (d / np.sqrt((d * d).mean(axis=2, keepdims=True) + np.float32(eps))).reshape(x.shape)
    if weight is not None:
        y = y * weight.astype(np.float32).reshape(1, c, 1, 1)
    return y if bias is None else y + bias.astype(np.float32).reshape(1, c, 1, 1)

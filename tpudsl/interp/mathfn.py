"""Float math numpy lacks (no scipy here): erf and GELU, in float32 at a few passes over the data.

erf(x) = x * P(x^2) for |x| < 0.921875, and sign(x) * (1 - exp(Q(|x|))) above (Q ~ log erfc,
so no cancellation near 1). P (degree 5 in x^2) and Q (degree 8, |x| in [0.921875, 4]; past 4
float32 erf is 1) are least-squares fits on 4000 Chebyshev nodes to math.erf(x)/x and
log(math.erfc(x)) in float64; fit errors 1.7e-8 and 1.3e-8. Evaluated in float32 (Horner):
max error 2.6 ulp of float32 erf, relative 1.8e-7 (tests/test_interp_elementwise.py checks it
against math.erf on a dense grid). The float64 series/Chebyshev version it replaced was exact
to 1 ulp and 14x slower: Erf was 60% of a ConvNeXt inference (GELU's erf).

gelu(x) = x * Phi(x) = x / (1 + exp(-h(x))), h = logit Phi fitted as x * P(x^2) (P of degree 10
on [0, 5], clamped beyond), the exponential as exp2: 26 passes of cheap float32 operations (no
reciprocal, no copysign bits), 1.4-1.7x faster than the erfcc form it replaced (Numerical
Recipes' erfc, ~35 passes with a reciprocal and an exp2 per element). Max error in float32
2.1e-7 * max(1, |x|) absolute, 2.7e-6 relative where gelu(x) is above 1e-5 in magnitude
(tests/test_interp_elementwise.py checks 2.5e-7 and 4e-6 against math.erfc on a dense grid,
tests/test_interp_activations.py on random data). The F16/BF16 Tpu GELU does not use it
(kernels_tpu_half: the float64 formula rounded once)."""

from __future__ import annotations

import numpy as np

F32 = np.float32
_SPLIT = F32(0.921875)
_P = np.array([1.1283791065216064, -0.3761253356933594, 0.11282140016555786, -0.026776403188705444,
               0.005005626007914543, -0.0006047158385626972], F32)
_Q = np.array([0.00030254179940045976, -1.1301639783531865, -0.6319416357867742, -0.10997404648090241,
               0.026362380207290724, -0.004739417689317571, 0.000592601720160818, -4.5571184775161644e-05,
               1.6131019040521721e-06], F32)


def _horner(coeffs: np.ndarray, z: np.ndarray) -> np.ndarray:
    """sum coeffs[i] z^i, in place on one fresh array."""
    acc = coeffs[-1] * z
    for c in coeffs[-2:0:-1]:
        acc += c
        acc *= z
    acc += coeffs[0]
    return acc


_SIGN_BIT = np.int32(-(2**31))


def _copysign_nonneg(r: np.ndarray, x: np.ndarray, scratch: np.ndarray) -> None:
    """np.copysign(r, x, out=r) for float32 r without a sign bit set (r >= +0): x's sign bit ORed
    into r's bits, bit for bit the same. np.copysign has no SIMD loop: 4x slower than the two
    integer passes, a fifth of a GELU block. `scratch` is a float32 array of x's size to clobber."""
    np.bitwise_and(x.view(np.int32), _SIGN_BIT, out=scratch.view(np.int32))
    np.bitwise_or(r.view(np.int32), scratch.view(np.int32), out=r.view(np.int32))


# erf runs over blocks of this many elements: its ~30 passes then stay in L2 and reuse small
# temporaries (whole-tensor temporaries of a 1.2M-element GELU cost ~3000 page faults a call).
BLOCK = 1 << 16


def _erf_block(x: np.ndarray, out: np.ndarray) -> None:
    a = np.abs(x)
    xc = np.clip(x, -_SPLIT, _SPLIT)  # the near branch is only kept there; no overflow in x*x
    near = _horner(_P, xc * xc)
    near *= xc
    far = _horner(_Q, np.minimum(a, F32(4)))
    np.exp(far, out=far)
    np.subtract(F32(1), far, out=far)  # in [+0, 1]
    _copysign_nonneg(far, x, xc)
    # Select by arithmetic (both branches are finite): np.where on a data-dependent mask
    # mispredicts branches and costs as much as the polynomials.
    keep_near = (a < _SPLIT).astype(F32)
    near *= keep_near
    np.subtract(F32(1), keep_near, out=keep_near)
    far *= keep_near
    np.add(far, near, out=out)


# GELU's Phi as a logistic: Phi(x) = 1 / (1 + exp(-h(x))) with h = logit Phi, an odd function;
# h(x) / x is fitted as a polynomial of degree 10 in x^2 on [0, 5] (6000 Chebyshev nodes, Lawson's
# iteratively reweighted least squares towards the minimax fit of |h - x P(x^2)|, float64 math.erfc
# values; fit error 8e-7), the coefficients scaled by -log2 e so that exp2 takes the exponent.
# x^2 is clamped at 25: past |x| = 5 the exponent keeps growing linearly, Phi goes on to 0 or 1.
_GELU_CLAMP = F32(5)
_NEG_LOG2E_LOGIT = np.array([
    -2.3022137689397275, -0.10482147427241716, 8.36033966758533e-05, 0.0001621569482127228,
    -1.1413067447999755e-05, 2.7644710047860403e-07, 1.2308011970325548e-08, -1.2644994340320055e-09,
    4.638313017562014e-11, -8.434359845345418e-13, 6.306794925522689e-15], F32)


def _gelu_block(x: np.ndarray, out: np.ndarray) -> None:
    """x / (1 + 2^(x P(x^2))): 26 float32 passes, none of them a reciprocal or a bit operation,
    and numpy's exp2 (half its exp); no cancellation in either tail (the quotient keeps its
    relative precision where Phi is tiny)."""
    z = np.clip(x, -_GELU_CLAMP, _GELU_CLAMP)
    z *= z
    np.multiply(z, _NEG_LOG2E_LOGIT[-1], out=out)
    for c in _NEG_LOG2E_LOGIT[-2:0:-1]:
        out += c
        out *= z
    out += _NEG_LOG2E_LOGIT[0]
    out *= x  # -log2(e) logit Phi(x)
    with np.errstate(over="ignore"):  # inf below x = -~12: the quotient is then -0
        np.exp2(out, out=out)  # (1 - Phi) / Phi
    out += F32(1)
    np.divide(x, out, out=out)


def _blockwise(block_fn, x: np.ndarray) -> np.ndarray:
    """block_fn(x block, out block) over L2-sized blocks, in float32; the result in x's float dtype."""
    flat = np.ascontiguousarray(x, dtype=F32).reshape(-1)
    y = np.empty_like(flat)
    for i in range(0, flat.size, BLOCK):
        block_fn(flat[i : i + BLOCK], y[i : i + BLOCK])
    return y.reshape(np.shape(x)).astype(np.result_type(x, np.float32), copy=False)


def erf(x: np.ndarray) -> np.ndarray:
    """erf elementwise, in x's float dtype (float32 math; float64 input is computed in float32 too)."""
    return _blockwise(_erf_block, x)


def gelu(x: np.ndarray) -> np.ndarray:
    """x * Phi(x) (GELU, approx_mode "normal") elementwise, float32 math as erf."""
    return _blockwise(_gelu_block, x)

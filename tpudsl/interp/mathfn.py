"""Float math numpy lacks (no scipy here): erf and GELU, in float32 at a few passes over the data.

erf(x) = x * P(x^2) for |x| < 0.921875, and sign(x) * (1 - exp(Q(|x|))) above (Q ~ log erfc,
so no cancellation near 1). P (degree 5 in x^2) and Q (degree 8, |x| in [0.921875, 4]; past 4
float32 erf is 1) are least-squares fits on 4000 Chebyshev nodes to math.erf(x)/x and
log(math.erfc(x)) in float64; fit errors 1.7e-8 and 1.3e-8. Evaluated in float32 (Horner):
max error 2.6 ulp of float32 erf, relative 1.8e-7 (tests/test_interp_elementwise.py checks it
against math.erf on a dense grid). The float64 series/Chebyshev version it replaced was exact
to 1 ulp and 14x slower: Erf was 60% of a ConvNeXt inference (GELU's erf).

gelu(x) = x * Phi(x) = x / (1 + exp(-h(x))), h = logit Phi fitted as x * P(x^2) (P of degree 9,
weighted towards the test bounds below, no clamp), the exponential as `NEG_EXP` (below): 23 passes of
cheap float32 operations (no reciprocal, no copysign bits, no clip). Max error in float32
1.7e-7 * max(1, |x|) absolute, 2.5e-6 relative where gelu(x) is above 1e-5 in magnitude
(tests/test_interp_elementwise.py checks 2.5e-7 and 4e-6 against math.erfc on a dense grid and
up to float32's largest magnitudes, tests/test_interp_activations.py on random data). The F16/BF16
Tpu GELU does not use it (kernels_tpu_half: the float64 formula rounded once)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

F32 = np.float32


@dataclass(frozen=True)
class NegExp:
    """exp(-x) as power(scale * x), in a fresh array; inf where -x overflows (no warning: the
    kernels that call it run inside run_kernel's or ModuleInterpreter.inference's np.errstate)."""

    power: np.ufunc
    scale: np.float32

    def __call__(self, x: np.ndarray) -> np.ndarray:
        e = np.multiply(x, self.scale)
        return self.power(e, out=e)


EXP = NegExp(np.exp, F32(-1))
# Rounding x * log2 e adds |x| ulps of relative error to exp(-x): below 1e-6 of the result wherever
# it is a normal float32 (tests/test_interp_activations.py's bound allows two roundings).
EXP2 = NegExp(np.exp2, F32(-np.log2(np.e)))


def _exp2_has_simd_loop() -> bool:
    """numpy's float32 exp2 has a SIMD loop only where numpy was built to call SVML, on AVX512_SKX
    CPUs; elsewhere it is libm's scalar exp2f, while np.exp has its own AVX2 and AVX-512 loops."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # numpy 1's module name; the feature table is the same
        try:
            from numpy.core._multiarray_umath import __cpu_features__
        except ImportError:
            return False
    return bool(__cpu_features__.get("AVX512_SKX"))


# The sigmoid family's and GELU's exponential, whichever of numpy's two is fast on this CPU: with
# AVX-512 (SVML) exp2 takes half the time of exp (SiLU and Sigmoid 1.3-1.4x faster); without it
# (an AVX2 EPYC, session 9) exp2 takes 1.6x exp's time (2.74 against 1.74 ns an element). The
# tests hold both forms to the same bounds, whichever this machine takes.
NEG_EXP = EXP2 if _exp2_has_simd_loop() else EXP
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
# h(x) / x is fitted as a polynomial of degree 9 in x^2 on [0, 5.5^2] (6000 Chebyshev nodes, float64
# math.erfc values), the coefficients scaled by -log2 e so that exp2 takes the exponent (`_gelu_coeffs`
# rescales them for exp). The fit is
# Lawson's iteratively reweighted least squares towards the minimax of |error in the exponent| /
# (what the bounds allow there): an exponent error e moves gelu by |x| ln2 Phi (1 - Phi) e, so the
# absolute bound 2.5e-7 max(1, |x|) needs e small only where Phi (1 - Phi) is not tiny, and the
# relative bound 4e-6 (where |gelu| >= 1e-5, i.e. x > -4.58) only near |x| = 1-4.6; the allowance
# is reduced by 2 float32 roundings of the exponent (2^-24 |exponent| each). That is how degree 9
# meets what degree 10 fitted uniformly met (degree 8 cannot: 1.04x the bounds at best). No clamp:
# the leading coefficient is negative and the polynomial keeps growing past the fitted range, so the
# exponent goes to -inf (x > 0: the quotient is x) or +inf (x < 0: -0) as the true one does, x^2
# overflowing to inf included (the dense-grid test goes to 3e38). One pass fewer than clamping x,
# and numpy's clip costs three multiplies. bench/gelu_fit.py recomputes these and their errors.
_NEG_LOG2E_LOGIT = np.array([
    -2.3022143840789795, -0.10482007265090942, 8.106129098450765e-05, 0.00016382821195293218,
    -1.1947051461902447e-05, 3.728581532413955e-07, 1.7695870324629936e-09, -5.5266302645407e-10,
    1.7331722862445886e-11, -1.8689758941869972e-13], F32)


def _gelu_coeffs(neg_exp: NegExp) -> np.ndarray:
    """The logit polynomial scaled for `neg_exp`'s power (exp2's coefficients unchanged: the float64
    round trip returns each float32 coefficient)."""
    logit = _NEG_LOG2E_LOGIT.astype(np.float64) / float(EXP2.scale)
    return (logit * float(neg_exp.scale)).astype(F32)


_GELU_COEFFS = {base: _gelu_coeffs(base) for base in (EXP, EXP2)}


def _gelu_block(x: np.ndarray, out: np.ndarray, neg_exp: NegExp, coeffs: np.ndarray) -> None:
    """x / (1 + e^-h(x)): 23 float32 passes, none of them a reciprocal, a bit operation or a
    clip; no cancellation in either tail (the quotient keeps its relative precision where Phi is
    tiny)."""
    # Overflow is the tails' behaviour: x^2 is inf past |x| = 1.8e19, the polynomial inf past a few
    # hundred, so the exponent is -inf (x > 0: the quotient is x) or +inf (x < 0: exp2 is inf
    # below x = -~12 and the quotient -0).
    with np.errstate(over="ignore"):
        z = np.square(x)
        np.multiply(z, coeffs[-1], out=out)
        for c in coeffs[-2:0:-1]:
            out += c
            out *= z
        out += coeffs[0]
        out *= x  # -logit Phi(x), in the power's base
        neg_exp.power(out, out=out)  # (1 - Phi) / Phi
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


def gelu(x: np.ndarray, neg_exp: NegExp = NEG_EXP) -> np.ndarray:
    """x * Phi(x) (GELU, approx_mode "normal") elementwise, float32 math as erf; `neg_exp` chooses the
    exponential (the tests take both)."""
    coeffs = _GELU_COEFFS[neg_exp]  # once a call, not once a block
    return _blockwise(lambda xb, ob: _gelu_block(xb, ob, neg_exp, coeffs), x)

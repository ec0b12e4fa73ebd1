"""Recompute mathfn's GELU coefficients (`_NEG_LOG2E_LOGIT`) and their float32 errors.

    .venv/bin/python bench/gelu_fit.py [--degree 9]

GELU is x / (1 + 2^t(x)) with t = -log2(e) logit Phi(x) fitted as x P(x^2). The fit is Lawson's
iteratively reweighted least squares towards the minimax of |error of t| / (what the tests' bounds
allow there): an error e in t moves gelu by |x| ln2 Phi (1 - Phi) e, so the absolute bound
2.5e-7 max(1, |x|) allows 2.5e-7 max(1, |x|) / (|x| ln2 Phi (1 - Phi)), and the relative bound 4e-6
(where |gelu| >= 1e-5) allows 4e-6 / (ln2 Phi(|x|)) (x < 0 is the tighter side; t is odd, so the
fit takes the smaller allowance of +-x); two float32 roundings of t (2^-24 |t| each) are taken off,
and the allowance is capped at 3. Chebyshev nodes in x^2 on [0, 5.5^2], float64 math.erfc values.
Prints the coefficients (float32) and the evaluated errors on tests/test_interp_elementwise.py's grid.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from numpy.polynomial import chebyshev, polynomial

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

LN2 = math.log(2)


def phi(a: float) -> float:
    return 0.5 * math.erfc(-a / math.sqrt(2))


def exponent(a: float) -> float:
    """t(a) = -log2(e) logit Phi(a)."""
    return -(math.log(phi(a)) - math.log(phi(-a))) / LN2


def allowance(a: float) -> float:
    """The error in t at +-a that keeps gelu within the tests' bounds (a > 0)."""
    p, q = phi(a), phi(-a)
    absolute = 2.5e-7 * max(1.0, a) / (a * LN2 * p * q)
    relative = 4e-6 / LN2 / p if a * q >= 1e-5 else math.inf
    return min(absolute, relative)


def fit(degree: int, amax: float = 5.5, nodes: int = 6000, iters: int = 200) -> np.ndarray:
    """Coefficients of P in x^2, lowest first, float64."""
    k = np.arange(nodes)
    u = (1 - np.cos(np.pi * (k + 0.5) / nodes)) / 2
    z = amax * amax * u
    a = np.maximum(np.sqrt(z), 1e-4)
    t = np.array([exponent(v) for v in a])
    tol = np.array([allowance(v) for v in a]) - 2 * 2.0**-24 * np.abs(t)
    weight = a / np.maximum(np.minimum(tol, 3.0), 1e-8)
    basis = chebyshev.chebvander(2 * u - 1, degree)
    lawson = np.full(nodes, 1 / nodes)
    for _ in range(iters):
        root = np.sqrt(lawson) * weight
        c, *_ = np.linalg.lstsq(basis * root[:, None], t / a * root, rcond=None)
        err = np.abs(basis @ c - t / a) * weight
        lawson = lawson * err / np.sum(lawson * err)
    mono = chebyshev.cheb2poly(c)  # in s = 2 z / zmax - 1
    out = np.zeros(1)
    for i, ci in enumerate(mono):
        out = polynomial.polyadd(out, ci * polynomial.polypow([-1, 2 / (amax * amax)], i))
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--degree", type=int, default=9)
    args = ap.parse_args()
    from tpudsl.interp import mathfn

    coeffs = fit(args.degree).astype(np.float32)
    print("coefficients:", [float(c) for c in coeffs])
    saved = mathfn._NEG_LOG2E_LOGIT
    mathfn._NEG_LOG2E_LOGIT = coeffs
    huge = np.geomspace(12, 3.4e38, 10_000)
    x = np.concatenate([np.linspace(-12, 12, 200_001), np.geomspace(1e-30, 12, 50_000),
                        -np.geomspace(1e-30, 12, 50_000), huge, -huge, [0.0]]).astype(np.float32)
    want = np.array([float(v) * 0.5 * math.erfc(-float(v) / math.sqrt(2)) for v in x])
    err = np.abs(mathfn.gelu(x).astype(np.float64) - want)
    mathfn._NEG_LOG2E_LOGIT = saved
    big = np.abs(want) >= 1e-5
    print(f"absolute {np.max(err / np.maximum(1, np.abs(x))):.3g} * max(1, |x|) (bound 2.5e-7), "
          f"relative {np.max(err[big] / np.abs(want[big])):.3g} where |gelu| >= 1e-5 (bound 4e-6); "
          f"same as mathfn's: {np.array_equal(coeffs, saved)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The float32 activation kernels that take faster formulas than their definitions (exp2 for exp;
GELU's logistic fit), against float64 formulas written here, with random data reaching both tails,
the exponential's overflow and magnitudes whose square overflows (GELU's fit is not clamped)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from interp_ref import run_top

from tests.feature_tally import FeatureTally
from tpudsl.interp import kernels_elementwise
from tpudsl.interp.mathfn import EXP, EXP2

TINY = 1e-36  # below this the float64 value is compared absolutely (float32 gives 0 or a subnormal)


def _sigmoid64(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


def _gelu64(x: np.ndarray) -> np.ndarray:
    return np.array([v * 0.5 * math.erfc(-v / math.sqrt(2)) for v in x.tolist()])


def _exp_bound(k: float):
    """The sigmoid family: relative error 1e-6 plus 1.2e-7 |k x| where the exponential's argument
    is -k x, i.e. two float32 roundings (2^-24 each) of an exponent of that size (k x, then its
    base-2 form) moving exp by that much; absolute TINY below TINY."""
    return lambda x, want: np.where(np.abs(want) >= TINY, (1e-6 + 1.2e-7 * np.abs(k * x)) * np.abs(want), TINY)


def _gelu_bound(x: np.ndarray, want: np.ndarray) -> np.ndarray:
    """mathfn.gelu's documented accuracy: 2.5e-7 max(1, |x|) absolute everywhere, and 4e-6 relative
    wherever |gelu| >= 1e-5."""
    absolute = 2.5e-7 * np.maximum(1, np.abs(x))
    return np.where(np.abs(want) >= 1e-5, np.minimum(absolute, 4e-6 * np.abs(want)), absolute)


def _rounding_bound(k: int):
    """k float32 roundings (2^-24 relative each) of the exact value; absolute TINY below TINY."""
    return lambda x, want: np.where(np.abs(want) >= TINY, k * 2.0**-24 * np.abs(want), TINY)


# case -> (Top op, attrs, float64 formula, allowed error(x, value)).
CASES = {
    "SiLU": ("SiLU", {}, lambda x: x * _sigmoid64(x), _exp_bound(1.0)),
    "Sigmoid": ("Sigmoid", {}, _sigmoid64, _exp_bound(1.0)),
    "Swish": ("Swish", {"beta": 1.5}, lambda x: x * _sigmoid64(1.5 * x), _exp_bound(1.5)),
    "GELU sigm": ("GELU", {"approx_mode": "sigm"}, lambda x: x * _sigmoid64(1.702 * x), _exp_bound(1.702)),
    "GELU": ("GELU", {}, _gelu64, _gelu_bound),
    # (clip(x, -3, 3) + 3) * F32(1/6) * x: three roundings and F32(1/6)'s half ulp, no cancellation
    # near -3 (x / 6 + 1/2 loses relative precision there: 1e-5 at x = -2.99)
    "HardSwish": ("HardSwish", {}, lambda x: x * np.clip(x / 6 + 0.5, 0, 1), _rounding_bound(4)),
}
KNEES = "near HardSwish's knees (||x| - 3| < 0.05)"


@st.composite
def activation_inputs(draw):
    case = draw(st.sampled_from(sorted(CASES)))
    scale = draw(st.sampled_from([1e-3, 1.0, 5.0, 30.0, 120.0, 1e20]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = rng.standard_normal(draw(st.integers(1, 64))) * scale
    if draw(st.booleans()):  # a few values next to +-3
        x = np.concatenate([x, rng.choice([-3.0, 3.0], 4) + rng.uniform(-0.05, 0.05, 4)])
    return case, x.astype(np.float32)


FEATURES = ("left tail (x < -20)", "exp overflows (x < -88.8)", "right tail (x > 20)", "near zero (|x| < 1e-2)",
            "x^2 overflows (|x| > 1.9e19)", KNEES)


def with_every_feature(args):
    """The case with one value in each of FEATURES' ranges added (the op is element-wise: the
    drawn values are computed as before)."""
    case, x = args
    edges = [-30.0, -100.0, 30.0, 1e-3, -2e19, -3.01, 2.99]
    return case, np.concatenate([x, np.array(edges, np.float32)])


@pytest.mark.parametrize("neg_exp", [EXP, EXP2], ids=["exp", "exp2"])
def test_activations_against_float64_formulas(neg_exp, monkeypatch):
    """Random inputs (75 examples in CI), then 25 with a value in each feature's range added:
    every floor holds by construction. Each of the two exponentials the kernels choose between by
    CPU (mathfn.NEG_EXP) is held to the bounds, whichever this machine takes."""
    monkeypatch.setattr(kernels_elementwise, "NEG_EXP", neg_exp)
    tally = FeatureTally(FEATURES)

    def check(args):
        case, x = args
        op, attrs, formula, bound = CASES[case]
        got = run_top(f"top.{op}", [x], attrs)[0].astype(np.float64)
        x64 = x.astype(np.float64)
        want = formula(x64)
        excess = np.abs(got - want) / bound(x64, want)
        assert np.all(excess <= 1), (case, x[np.argmax(excess)], got[np.argmax(excess)], want[np.argmax(excess)])
        tally.record(feature for feature, present in (
            ("left tail (x < -20)", x < -20), ("exp overflows (x < -88.8)", x < -88.8), ("right tail (x > 20)", x > 20),
            ("near zero (|x| < 1e-2)", np.abs(x) < 1e-2), ("x^2 overflows (|x| > 1.9e19)", np.abs(x) > 1.9e19),
            (KNEES, np.abs(np.abs(x) - 3) < 0.05)) if present.any())

    examples = max(60, settings.default.max_examples // 2)
    settings(max_examples=examples - examples // 4)(given(activation_inputs())(check))()
    settings(max_examples=examples // 4)(given(activation_inputs().map(with_every_feature))(check))()
    tally.assert_each_in(1 / 5)

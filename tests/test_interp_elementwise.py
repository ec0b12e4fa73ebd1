"""Element-wise kernels against onnxruntime single-node models (numpy formulas where ONNX has no op)."""

from __future__ import annotations

import numpy as np
import pytest
from interp_ref import assert_close, ort_run, rand, run_top

RNG = np.random.default_rng(0)
X = rand(RNG, 2, 3, 4, low=-3, high=3)
POS = rand(RNG, 2, 3, 4, low=0.1, high=3)
UNIT = rand(RNG, 2, 3, 4, low=-0.9, high=0.9)


def f64(x):
    return x.astype(np.float64)


# Top op -> (ONNX op, input): ops whose ONNX twin has no attributes.
UNARY_ONNX = {
    "Exp": ("Exp", X), "Log": ("Log", POS), "Sqrt": ("Sqrt", POS), "Abs": ("Abs", X), "Erf": ("Erf", X),
    "Tanh": ("Tanh", X), "Sigmoid": ("Sigmoid", X), "HardSwish": ("HardSwish", X), "Mish": ("Mish", X),
    "Softplus": ("Softplus", X), "Softsign": ("Softsign", X), "Sign": ("Sign", X), "Floor": ("Floor", X),
    "Ceil": ("Ceil", X), "Round": ("Round", X), "Cos": ("Cos", X), "Sin": ("Sin", X), "Tan": ("Tan", UNIT),
    "Cosh": ("Cosh", X), "Sinh": ("Sinh", X), "Arccos": ("Acos", UNIT), "Arctanh": ("Atanh", UNIT),
    "Arcsin": ("Asin", UNIT), "Arcsinh": ("Asinh", X), "Arccosh": ("Acosh", POS + 1),
    "Relu": ("Relu", X),
}


@pytest.mark.parametrize("op", UNARY_ONNX)
def test_unary_matches_onnxruntime(op):
    onnx_op, x = UNARY_ONNX[op]
    (expected,) = ort_run(onnx_op, [x], opset=18)
    assert_close(run_top(f"top.{op}", [x])[0], expected)


# Top op with attributes -> (attrs, ONNX op, ONNX attrs, input).
UNARY_ATTR_ONNX = {
    "elu": ("Elu", {"alpha": 0.7}, "Elu", {"alpha": 0.7}, X),
    "hardsigmoid": ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}, "HardSigmoid", {"alpha": 0.3, "beta": 0.4}, X),
    "leakyrelu": ("LeakyRelu", {"alpha": 0.1}, "LeakyRelu", {"alpha": 0.1}, X),
    "gelu": ("GELU", {}, "Gelu", {}, X),
    "gelu_tanh": ("GELU", {"approx_mode": "tanh"}, "Gelu", {"approximate": "tanh"}, X),
}


@pytest.mark.parametrize("case", UNARY_ATTR_ONNX)
def test_unary_with_attributes_matches_onnxruntime(case):
    op, attrs, onnx_op, onnx_attrs, x = UNARY_ATTR_ONNX[case]
    (expected,) = ort_run(onnx_op, [x], onnx_attrs, opset=20)
    assert_close(run_top(f"top.{op}", [x], attrs)[0], expected)


def _sigmoid64(x):
    return 1 / (1 + np.exp(-f64(x)))


# Top op -> (attrs, input, numpy float64 formula): ops without a one-node ONNX twin.
UNARY_FORMULAS = {
    "rsqrt": ("Rsqrt", {}, POS, lambda x: 1 / np.sqrt(f64(x))),
    "silu": ("SiLU", {}, X, lambda x: f64(x) * _sigmoid64(x)),
    # exp(-x) overflows to inf below -88.7: the quotient is then -0
    "silu_tails": ("SiLU", {}, np.array([-500, -120, -89, -88, -20, 0, 20, 89, 120, 500], np.float32),
                   lambda x: f64(x) * _sigmoid64(x)),
    "gelu_sigm": ("GELU", {"approx_mode": "sigm"}, X, lambda x: f64(x) * _sigmoid64(1.702 * f64(x))),
    "sigmoid_scaled": ("Sigmoid", {"scale": 2.0, "bias": -0.5}, X, lambda x: _sigmoid64(2 * f64(x) - 0.5)),
    "log_sigmoid": ("Sigmoid", {"log": True}, X, lambda x: np.log(_sigmoid64(x))),
    "swish": ("Swish", {"beta": 1.5}, X, lambda x: f64(x) * _sigmoid64(1.5 * f64(x))),
    "relu6": ("Relu", {"relu_limit": 6.0}, X * 3, lambda x: np.minimum(np.maximum(f64(x), 0), 6)),
    "reciprocal": ("Reciprocal", {"const_val": 2.0}, POS, lambda x: 2 / f64(x)),
    "pow": ("Pow", {"exponent": 1.5}, POS, lambda x: f64(x) ** 1.5),
    "pow2": ("Pow2", {"const_val": 3.0}, X, lambda x: 3.0 ** f64(x)),
    "clip": ("Clip", {"min": -0.5, "max": 1.0}, X, lambda x: np.minimum(np.maximum(f64(x), -0.5), 1.0)),
}


@pytest.mark.parametrize("case", UNARY_FORMULAS)
def test_unary_matches_formula(case):
    op, attrs, x, formula = UNARY_FORMULAS[case]
    assert_close(run_top(f"top.{op}", [x], attrs)[0], formula(x).astype(np.float32))


CONST_OPS = {
    # Top op, attrs -> ONNX op with the constant as second input (or first when reversed)
    "AddConst": ({}, "Add", False),
    "MulConst": ({}, "Mul", False),
    "SubConst": ({}, "Sub", False),
    "SubConst_reverse": ({"is_reverse": True}, "Sub", True),
    "DivConst": ({}, "Div", False),
    "DivConst_reverse": ({"is_reverse": True}, "Div", True),
    "MinConst": ({}, "Min", False),
    "MaxConst": ({}, "Max", False),
}


@pytest.mark.parametrize("case", CONST_OPS)
def test_const_ops_match_onnxruntime(case):
    attrs, onnx_op, reverse = CONST_OPS[case]
    c = np.array(0.75, np.float32)
    x = POS if onnx_op == "Div" else X
    (expected,) = ort_run(onnx_op, [c, x] if reverse else [x, c])
    got = run_top(f"top.{case.split('_')[0]}", [x], {"const_val": 0.75, **attrs})[0]
    assert_close(got, expected)


def test_const_op_fused_relu_with_limit():
    (added,) = ort_run("Add", [X, np.array(1.0, np.float32)])
    got = run_top("top.AddConst", [X], {"const_val": 1.0, "do_relu": True, "relu_limit": 2.0})[0]
    assert_close(got, np.clip(added, 0, 2))


@pytest.mark.parametrize("dtype", [np.int32, np.int8])
def test_relu_of_integers_stays_integer(dtype):
    """Float relus go through np.clip with an infinite bound (kernel.relu); integers must not."""
    (got,) = run_top("top.Relu", [np.array([-3, 0, 5], dtype)], out_dtypes=[np.dtype(dtype)])
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, np.array([0, 0, 5], dtype))


def test_relu_keeps_nan_and_inf():
    x = np.array([np.nan, -np.inf, -1, -0.0, 2, np.inf], np.float32)
    np.testing.assert_array_equal(run_top("top.Relu", [x])[0], np.array([np.nan, 0, 0, 0, 2, np.inf], np.float32))
    fused = run_top("top.AddConst", [x], {"const_val": 0.0, "do_relu": True})[0]
    np.testing.assert_array_equal(fused, np.array([np.nan, 0, 0, 0, 2, np.inf], np.float32))


SHAPES3 = [(2, 3, 4), (3, 1), (1, 4)]  # broadcast together


@pytest.mark.parametrize("op,onnx_op", [("Add", "Sum"), ("Max", "Max"), ("Min", "Min")])
def test_variadic_ops_broadcast_like_onnxruntime(op, onnx_op):
    xs = [rand(np.random.default_rng(i), *s) for i, s in enumerate(SHAPES3)]
    (expected,) = ort_run(onnx_op, xs)
    assert_close(run_top(f"top.{op}", xs)[0], expected)


@pytest.mark.parametrize("op,onnx_op,reverse", [
    ("Mul", "Mul", False), ("Sub", "Sub", False), ("Sub", "Sub", True), ("Div", "Div", False), ("Div", "Div", True),
    ("Pow3", "Pow", False),
])
def test_binary_ops_match_onnxruntime(op, onnx_op, reverse):
    rng = np.random.default_rng(1)
    a, b = rand(rng, 2, 3, 4, low=0.5, high=2), rand(rng, 3, 1, low=0.5, high=2)
    (expected,) = ort_run(onnx_op, [b, a] if reverse else [a, b])
    attrs = {"is_reverse": True} if reverse else {}
    assert_close(run_top(f"top.{op}", [a, b], attrs)[0], expected)


def test_mod_and_remainder_signs():
    rng = np.random.default_rng(2)
    a, b = rand(rng, 3, 4, low=-5, high=5), rand(rng, 3, 4, low=0.5, high=2) * np.sign(rand(rng, 3, 4))
    (fmod,) = ort_run("Mod", [a, b], {"fmod": 1})
    assert_close(run_top("top.Mod", [a, b])[0], fmod)
    floor_mod = f64(a) - np.floor(f64(a) / f64(b)) * f64(b)  # torch.remainder: sign of the divisor
    assert_close(run_top("top.Remainder", [a, b])[0], floor_mod.astype(np.float32))


def test_add_and_sub_with_coefficients():
    rng = np.random.default_rng(3)
    a, b = rand(rng, 2, 3), rand(rng, 1, 3)
    assert_close(run_top("top.Add", [a, b], {"coeff": [2.0, -0.5]})[0], (2 * f64(a) - 0.5 * f64(b)).astype(np.float32))
    assert_close(run_top("top.Sub", [a, b], {"coeff": [2.0, 3.0]})[0], (2 * f64(a) - 3 * f64(b)).astype(np.float32))


def test_add_fused_relu():
    rng = np.random.default_rng(4)
    a, b = rand(rng, 2, 3), rand(rng, 2, 3)
    (expected,) = ort_run("Add", [a, b])
    assert_close(run_top("top.Add", [a, b], {"do_relu": True})[0], np.maximum(expected, 0))


# Integer-valued floats so that equality cases occur.
LHS = np.random.default_rng(5).integers(-2, 3, (3, 4)).astype(np.float32)
RHS = np.random.default_rng(6).integers(-2, 3, (1, 4)).astype(np.float32)


@pytest.mark.parametrize("mode,onnx_op", [
    ("Equal", "Equal"), ("Greater", "Greater"), ("GreaterOrEqual", "GreaterOrEqual"),
    ("Less", "Less"), ("LessOrEqual", "LessOrEqual"),
])
def test_compare_matches_onnxruntime(mode, onnx_op):
    (expected,) = ort_run(onnx_op, [LHS, RHS], opset=16)
    assert_close(run_top("top.Compare", [LHS, RHS], {"mode": mode})[0], expected.astype(np.float32))


@pytest.mark.parametrize("mode,onnx_op", [("And", "And"), ("Xor", "Xor")])
def test_logical_compare_matches_onnxruntime(mode, onnx_op):
    (expected,) = ort_run(onnx_op, [LHS != 0, RHS != 0])
    assert_close(run_top("top.Compare", [LHS, RHS], {"mode": mode})[0], expected.astype(np.float32))


def test_compare_not_equal():
    (eq,) = ort_run("Equal", [LHS, RHS])
    assert_close(run_top("top.Compare", [LHS, RHS], {"mode": "NotEqual"})[0], (~eq).astype(np.float32))


@pytest.mark.parametrize("inversed", [False, True])
@pytest.mark.parametrize("mode,onnx_op", [("Greater", "Greater"), ("LessOrEqual", "LessOrEqual"), ("Equal", "Equal")])
def test_compare_const_matches_onnxruntime(mode, onnx_op, inversed):
    c = np.array(1.0, np.float32)
    (expected,) = ort_run(onnx_op, [c, LHS] if inversed else [LHS, c], opset=16)
    got = run_top("top.CompareConst", [LHS], {"mode": mode, "const_val": 1.0, "inversed": inversed})[0]
    assert_close(got, expected.astype(np.float32))


@pytest.mark.parametrize("x_const,y_const", [(False, False), (True, False), (False, True)])
def test_where_matches_onnxruntime(x_const, y_const):
    rng = np.random.default_rng(7)
    cond, x, y = LHS > 0, rand(rng, 3, 4), rand(rng, 1, 4)
    xs = np.array(2.5, np.float32) if x_const else x
    ys = np.array(-1.5, np.float32) if y_const else y
    (expected,) = ort_run("Where", [cond, xs, ys])
    attrs = {"x_is_const": x_const, "y_is_const": y_const, "x_const_val": 2.5, "y_const_val": -1.5}
    got = run_top("top.Where", [cond.astype(np.float32), None if x_const else x, None if y_const else y], attrs)[0]
    assert_close(got, expected)


def test_prelu_per_channel_slope_matches_onnxruntime():
    slope = rand(np.random.default_rng(8), 3)
    (expected,) = ort_run("PRelu", [X, slope.reshape(3, 1)])
    assert_close(run_top("top.PRelu", [X, slope])[0], expected)


def test_cast_to_int_truncates_like_onnxruntime():
    from onnx import TensorProto

    (expected,) = ort_run("Cast", [X], {"to": TensorProto.INT32})
    got = run_top("top.Cast", [X], {"round_mode": "TowardsZero"}, out_dtypes=[np.dtype(np.int32)])[0]
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, expected)


def test_masked_fill():
    rng = np.random.default_rng(9)
    cond, x = (rand(rng, 3, 4) > 0).astype(np.float32), rand(rng, 3, 4)
    expected = np.array([[7.0 if c else v for c, v in zip(rc, rv)] for rc, rv in zip(cond, x)], np.float32)
    assert_close(run_top("top.MaskedFill", [cond, x], {"const_val": 7.0})[0], expected)


def test_erf_within_3_ulp_of_math_erf_on_a_dense_grid():
    """mathfn.erf (float32 polynomials) against math.erf in float64, on 400k points across both
    branches, the split at 0.921875, tiny magnitudes (relative error) and the saturation past 4."""
    import math

    from tpudsl.interp.mathfn import erf

    x = np.concatenate([np.linspace(-6, 6, 200_001), np.geomspace(1e-30, 6, 100_000),
                        -np.geomspace(1e-30, 6, 100_000), [0.0, 0.921875, -0.921875, np.inf, -np.inf]]).astype(np.float32)
    want = np.array([math.erf(float(v)) for v in x])
    got = erf(x)
    assert got.dtype == np.float32
    ulps = np.abs(got.astype(np.float64) - want) / np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    assert ulps.max() <= 3, f"{ulps.max():.2f} ulp at x = {x[ulps.argmax()]}"
    assert np.isnan(erf(np.array([np.nan], np.float32)))[0]


@pytest.mark.parametrize("power", ["exp", "exp2"])
def test_gelu_kernel_against_math_erfc_on_a_dense_grid(power):
    """mathfn.gelu (float32 logistic fit) against x * erfc(-x / sqrt 2) / 2 in float64 on 320k points:
    absolute error within 2.5e-7 * max(1, |x|) everywhere (both tails included, up to float32's
    largest magnitudes: the fit is not clamped, so the polynomial past its range must keep the
    exponent's sign and growth, x^2 overflowing to inf included), relative within 4e-6 wherever
    |gelu| >= 1e-5; +inf stays +inf and nan stays nan. Both exponentials (mathfn.NEG_EXP takes one
    by CPU) are held to it."""
    import math

    from tpudsl.interp import mathfn

    def gelu(v):
        return mathfn.gelu(v, {"exp": mathfn.EXP, "exp2": mathfn.EXP2}[power])

    huge = np.geomspace(12, 3.4e38, 10_000)
    x = np.concatenate([np.linspace(-12, 12, 200_001), np.geomspace(1e-30, 12, 50_000),
                        -np.geomspace(1e-30, 12, 50_000), huge, -huge, [0.0]]).astype(np.float32)
    want = np.array([float(v) * 0.5 * math.erfc(-float(v) / math.sqrt(2)) for v in x])
    got = gelu(x)
    assert got.dtype == np.float32
    err = np.abs(got.astype(np.float64) - want)
    bound = err / np.maximum(1.0, np.abs(x.astype(np.float64)))
    assert bound.max() <= 2.5e-7, f"{bound.max():.3g} at x = {x[bound.argmax()]}"
    big = np.abs(want) >= 1e-5
    rel = err[big] / np.abs(want[big])
    assert rel.max() <= 4e-6, f"relative {rel.max():.3g} at x = {x[big][rel.argmax()]}"
    assert np.isposinf(gelu(np.array([np.inf], np.float32)))[0]
    assert np.isnan(gelu(np.array([np.nan], np.float32)))[0]

"""Casts to the narrow types, float -> integer round modes and integer Div, exactly: through
convert_onnx and the Top interpreter against onnxruntime, or against a formula written here where
onnxruntime has no kernel (float4e2m1, int2) or disagrees with ONNX's own reference (int4)."""

from __future__ import annotations

import decimal
import math

import numpy as np
import onnx
import pytest
from frontend_support import make_model, run_ort, run_top
from interp_ref import ort_run
from interp_ref import run_top as run_kernel
from onnx import TensorProto, helper

from tpudsl.frontend.onnx_import import convert_onnx
from tpudsl.interp import KERNELS, ModuleInterpreter
from tpudsl.interp.kernel import Kernel
from tpudsl.ir.diagnostics import TpudslError

RNG = np.random.default_rng(11)
SPECIAL = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 448.0, 460.0, 464.0, 470.0, 480.0, 500.0, 57344.0, 61440.0,
           70000.0, 65504.0, 65520.0, 1e6, 3.4e38, np.inf, -np.inf, np.nan, 2.0**-6, 2.0**-9, 2.0**-10, 2.0**-17,
           2.0**-16 * 1.5, 1e-9, 1.00390625, 1.01171875, 1.0078125, 6.0, 7.0, 0.0625]
# Every binade a float8/bf16 type has, with random mantissas and signs, plus the cases at the edges.
VALUES = np.concatenate([
    np.array(SPECIAL, np.float32),
    (RNG.choice([-1, 1], 400) * 2.0 ** RNG.uniform(-20, 20, 400)).astype(np.float32),
])


def _two_casts(to: int, saturate: int | None, n: int) -> onnx.ModelProto:
    """x -> Cast(to) -> Cast(FLOAT): onnxruntime's narrow result, readable as float32."""
    attrs = {} if saturate is None else {"saturate": saturate}
    nodes = [helper.make_node("Cast", ["x"], ["t"], to=to, **attrs), helper.make_node("Cast", ["t"], ["y"], to=TensorProto.FLOAT)]
    return make_model(nodes, {"x": [n]}, ["y"], opset=21)


def _assert_same_floats(ours: np.ndarray, ref: np.ndarray) -> None:
    """Bit-exact (signed zeros too), NaN where the reference has NaN."""
    assert ours.dtype == np.float32 and ours.shape == ref.shape
    nan = np.isnan(ref)
    np.testing.assert_array_equal(np.isnan(ours), nan)
    bad = np.flatnonzero(ours[~nan].view(np.uint32) != ref[~nan].astype(np.float32).view(np.uint32))
    assert bad.size == 0, f"inputs {VALUES[~nan][bad][:8]}: ours {ours[~nan][bad][:8]}, onnxruntime {ref[~nan][bad][:8]}"


FLOAT8 = ["FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ"]
NARROW_FLOAT_CASES = [("BFLOAT16", None), ("FLOAT16", None)] + [(t, s) for t in FLOAT8 for s in (1, 0)]


LARGEST = {"FLOAT8E4M3FN": 448.0, "FLOAT8E4M3FNUZ": 240.0, "FLOAT8E5M2": 57344.0, "FLOAT8E5M2FNUZ": 57344.0}


@pytest.mark.parametrize(("target", "saturate"), NARROW_FLOAT_CASES)
def test_cast_to_narrow_float_matches_onnxruntime(target, saturate):
    x = VALUES
    if saturate == 0:  # onnxruntime's overflow is wrong (480 -> 448 in e4m3fn): the next test
        x = x[~(np.abs(x) > LARGEST[target])]
    model = _two_casts(getattr(TensorProto, target), saturate, x.size)
    mod = convert_onnx(model, "cast")
    assert any(op.name == "top.Cast" for op in mod.module.walk()), "the rounding cast was dropped"
    _assert_same_floats(run_top(mod, {"x": x})["y"], run_ort(model, {"x": x})["y"])


NAN = float("nan")
# ONNX's table for saturate=0: [x] (x rounded to nearest even at the type's precision) beyond the
# largest value is NaN, inf for E5M2. The ties: 448 (e4m3fn) has an even mantissa, 240 and 57344 odd.
OVERFLOW = {
    "FLOAT8E4M3FN": [(464, 448), (470, NAN), (480, NAN), (500, NAN), (np.inf, NAN), (-np.inf, NAN)],
    "FLOAT8E4M3FNUZ": [(247, 240), (248, NAN), (np.inf, NAN)],
    "FLOAT8E5M2": [(61439, 57344), (61440, np.inf), (65504, np.inf), (np.inf, np.inf), (-1e6, -np.inf)],
    "FLOAT8E5M2FNUZ": [(61439, 57344), (61440, NAN), (np.inf, NAN)],
}


@pytest.mark.parametrize("target", FLOAT8)
def test_cast_to_float8_without_saturation_overflows_as_onnx_says(target):
    x, want = (np.array(v, np.float32) for v in zip(*OVERFLOW[target], strict=True))
    got = run_top(convert_onnx(_two_casts(getattr(TensorProto, target), 0, x.size), "cast"), {"x": x})["y"]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("target", ["INT4", "UINT4"])
def test_cast_to_int4_matches_onnxruntime_on_its_range(target):
    low, high = (-8, 7) if target == "INT4" else (0, 15)
    x = np.arange(low, high + 1, dtype=np.float32)
    model = _two_casts(getattr(TensorProto, target), None, x.size)
    np.testing.assert_array_equal(run_top(convert_onnx(model, "cast"), {"x": x})["y"], run_ort(model, {"x": x})["y"])


@pytest.mark.parametrize(("target", "low", "high"), [("INT4", -8, 7), ("UINT4", 0, 15), ("INT2", -2, 1), ("UINT2", 0, 3)])
def test_cast_to_sub_byte_int_truncates(target, low, high):
    """ONNX's reference truncates toward zero, as every float -> integer Cast (onnxruntime rounds
    half away from zero for int4: docs/frontend.md)."""
    x = RNG.uniform(low - 0.99, high + 0.99, 200).astype(np.float32)
    model = _two_casts(getattr(TensorProto, target), None, x.size)
    got = run_top(convert_onnx(model, "cast"), {"x": x})["y"]
    np.testing.assert_array_equal(got, np.array([float(math.trunc(float(v))) for v in x], np.float32))


def _float4e2m1(v: float) -> float:
    """Round to float4 e2m1 (magnitudes 0, .5, 1, 1.5, 2, 3, 4, 6): nearest, ties to the even
    code, saturating at 6."""
    grid = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
    a = min(abs(v), 6.0)
    best = min(range(8), key=lambda i: (abs(grid[i] - a), i % 2))
    return math.copysign(grid[best], v)


def test_cast_to_float4e2m1_matches_formula():
    x = np.concatenate([VALUES[~np.isnan(VALUES)], np.arange(-7, 7, 0.125, dtype=np.float32)])
    model = _two_casts(TensorProto.FLOAT4E2M1, None, x.size)
    got = run_top(convert_onnx(model, "cast"), {"x": x})["y"]
    want = np.array([_float4e2m1(float(v)) for v in x], np.float32)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_cast_to_an_unmodelled_type_is_an_error():
    model = make_model([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT8E8M0)], {"x": [4]}, ["y"], opset=23)
    with pytest.raises(TpudslError, match="Cast 'y': a cast to FLOAT8E8M0 is not supported"):
        convert_onnx(model, "cast")
    model = make_model([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.STRING)], {"x": [4]}, ["y"])
    with pytest.raises(TpudslError, match="Cast 'y': a cast to STRING is not supported"):
        convert_onnx(model, "cast")


# TPU-MLIR round mode -> decimal rounding (for x >= 0, x < 0): ties as the name says.
DECIMAL = {
    "HalfAwayFromZero": (decimal.ROUND_HALF_UP, decimal.ROUND_HALF_UP),
    "HalfTowardsZero": (decimal.ROUND_HALF_DOWN, decimal.ROUND_HALF_DOWN),
    "HalfUp": (decimal.ROUND_HALF_UP, decimal.ROUND_HALF_DOWN),
    "HalfDown": (decimal.ROUND_HALF_DOWN, decimal.ROUND_HALF_UP),
    "HalfToEven": (decimal.ROUND_HALF_EVEN, decimal.ROUND_HALF_EVEN),
    "TowardsZero": (decimal.ROUND_DOWN, decimal.ROUND_DOWN),
    "Up": (decimal.ROUND_CEILING, decimal.ROUND_CEILING),
    "Down": (decimal.ROUND_FLOOR, decimal.ROUND_FLOOR),
}


def _round(v: float, mode: str) -> int:
    d = decimal.Decimal(v)  # exact
    if mode == "HalfToOdd":
        low = math.floor(v)
        if d - low == decimal.Decimal("0.5"):
            return low if low % 2 else low + 1
        mode = "HalfToEven"
    return int(d.quantize(decimal.Decimal(1), rounding=DECIMAL[mode][v < 0]))


@pytest.mark.parametrize("mode", [*DECIMAL, "HalfToOdd"])
def test_cast_round_modes_match_decimal(mode):
    ties = [k + 0.5 for k in range(-4, 4)]
    near = [0.49999997, -0.49999997, 2.4999998, 2.5000002, -1.5000001, 8388607.5, -8388607.5]
    x = np.array(ties + near + list(RNG.uniform(-100, 100, 50)), np.float32)
    got = run_kernel("top.Cast", [x], {"round_mode": mode}, out_dtypes=[np.dtype(np.int32)])[0]
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [_round(float(v), mode) for v in x])


def test_cast_to_i1_is_nonzero_like_onnxruntime():
    x = np.array([0.0, -0.0, 0.5, -2.0, np.inf, np.nan, 1e-30], np.float32)
    (expected,) = ort_run("Cast", [x], {"to": TensorProto.BOOL})
    got = run_kernel("top.Cast", [x], out_dtypes=[np.dtype(np.bool_)])[0]
    np.testing.assert_array_equal(got, expected)


# ---- integer Div -----------------------------------------------------------------------------

INT_TYPES = {np.dtype(np.int32): TensorProto.INT32, np.dtype(np.int8): TensorProto.INT8,
             np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.int64): TensorProto.INT64}


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_integer_div_truncates_like_onnxruntime(dtype):
    info = np.iinfo(dtype)
    a = RNG.integers(max(info.min, -120), min(info.max, 120), (3, 20)).astype(dtype)
    b = RNG.integers(1, 9, (20,)).astype(dtype)
    if info.min < 0:
        b = (b * RNG.choice([-1, 1], 20)).astype(dtype)
    model = make_model([helper.make_node("Div", ["a", "b"], ["q"])], {"a": [3, 20], "b": [20]}, ["q"],
                       input_types={"a": INT_TYPES[dtype], "b": INT_TYPES[dtype]}, opset=14)
    ours, ref = run_top(convert_onnx(model, "div"), {"a": a, "b": b})["q"], run_ort(model, {"a": a, "b": b})["q"]
    assert ours.dtype == ref.dtype == dtype
    np.testing.assert_array_equal(ours, ref)
    if info.min < 0:
        assert (np.sign(a) != np.sign(b)).any() and (a % b != 0).any()  # the negative, inexact case happened


def test_integer_div_by_a_constant_scalar_truncates_like_onnxruntime():
    a = np.arange(-14, 15, dtype=np.int32)
    model = make_model([helper.make_node("Div", ["a", "seven"], ["q"]), helper.make_node("Add", ["a", "one"], ["a1"]),
                        helper.make_node("Div", ["seven", "a1"], ["r"])],
                       {"a": [29]}, ["q", "r"], initializers={"seven": np.array(7, np.int32), "one": np.array(15, np.int32)},
                       input_types={"a": TensorProto.INT32})
    ours, ref = run_top(convert_onnx(model, "div"), {"a": a}), run_ort(model, {"a": a})
    for name in ("q", "r"):
        np.testing.assert_array_equal(ours[name], ref[name])


def test_integer_div_by_zero_is_an_error_naming_the_op():
    model = make_model([helper.make_node("Div", ["a", "b"], ["q"])], {"a": [2], "b": [2]}, ["q"],
                       input_types={"a": TensorProto.INT32, "b": TensorProto.INT32})
    with pytest.raises(TpudslError, match="'top.Div' op \"q\" failed: ZeroDivisionError: integer division by zero"):
        run_top(convert_onnx(model, "div"), {"a": np.array([1, 2], np.int32), "b": np.array([1, 0], np.int32)})


# ---- the interpreter checks each kernel's result against the op's result type ------------------

def _interpreter_with(model: onnx.ModelProto, op: str, run) -> ModuleInterpreter:
    mod = convert_onnx(model, "m")
    interp = ModuleInterpreter(mod.module, mod.weights, kernels={**KERNELS, op: Kernel(run)})
    interp.init()
    return interp


def test_a_kernel_result_of_the_wrong_shape_is_an_error_naming_the_op():
    model = make_model([helper.make_node("Relu", ["x"], ["y"])], {"x": [2, 3]}, ["y"])
    interp = _interpreter_with(model, "top.Relu", lambda ins, a: ins[0][:1])
    with pytest.raises(TpudslError, match=r"'top.Relu' op \"y\": kernel result 0 has shape \[1, 3\], the result type has \[2, 3\]"):
        interp.inference({"x": np.ones((2, 3), np.float32)})


def test_a_float_kernel_result_for_an_integer_result_type_is_an_error():
    model = make_model([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT32)], {"x": [3]}, ["y"])
    interp = _interpreter_with(model, "top.Cast", lambda ins, a: ins[0] * 1.5)
    with pytest.raises(TpudslError, match=r"'top.Cast' op \"y\": kernel result 0 has dtype float32, the result type's is int32"):
        interp.inference({"x": np.ones(3, np.float32)})


def test_narrow_types_survive_the_mlir_text_and_npz():
    """f8/bf16/f4/i4 result types print, parse back and interpret the same (model_runner's path)."""
    from onnx_node.harness import run_tpudsl

    targets = ["BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E5M2FNUZ", "FLOAT4E2M1", "INT4", "UINT2"]
    nodes = [helper.make_node("Cast", ["x"], [f"t{i}"], to=getattr(TensorProto, t)) for i, t in enumerate(targets)]
    nodes += [helper.make_node("Cast", [f"t{i}"], [f"y{i}"], to=TensorProto.FLOAT) for i in range(len(targets))]
    model = make_model(nodes, {"x": [VALUES.size]}, [f"y{i}" for i in range(len(targets))], opset=21)
    x = np.nan_to_num(VALUES, nan=1.0)
    direct, via_files = run_tpudsl(model, {"x": x}), run_tpudsl(model, {"x": x}, via_files=True)
    for name in direct:
        np.testing.assert_array_equal(via_files[name], direct[name])

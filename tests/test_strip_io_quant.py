"""strip-io-quant in INT8 (model_deploy --quant_input/--quant_output): random INT8 networks of
test_backend_int8 (symmetric and asymmetric), stripped and compiled to a .bmodel with int8/uint8
IO. References, independent of the stripped module: the same module with its casts (the Tpu
interpreter's tensors right after the input cast and right before the output cast: the stripped
.bmodel must give those bit for bit), and the quantization of the float input recomputed here with
fractions (round half away from zero of x / scale, plus the zero point, saturated). The .mlir and
lit sides (names, lists, refusals, model_runner, model_deploy): lit_tests/driver/tpu_mlir_strip_io_quant.mlir."""

from __future__ import annotations

from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.backend_support import assert_bit_exact, compile_int8, int8_module, lowered
from tests.feature_tally import FeatureTally
from tests.test_backend_cmodel import Graph
from tests.test_backend_int8 import KINDS, networks
from tests.test_half_exact import TYPES, nearest
from tpudsl.backend.cmodel import run_bmodel
from tpudsl.cli.model_runner import module_half_io, module_quant_io, quantize_inputs, round_inputs
from tpudsl.dialects import make_context
from tpudsl.dialects.opdef import loc_name
from tpudsl.interp import run_module
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import load_module, save_module
from tpudsl.passes import pass_class

FEATURES = ("input stripped", "output stripped", "input zero point", "uint8 output", "saturated input")


def _reference_quantize(x: np.ndarray, scale: float, zp: int, dtype: np.dtype) -> list[int]:
    """round_half_away(x / scale) + zp saturated, exactly (+-inf saturates): x / scale is the
    fraction (n_x d_s) / (d_x n_s) of the two floats' integer ratios, rounded with Python's integers
    (Fraction objects cost 20x more here: a property example quantizes thousands of elements)."""
    info = np.iinfo(dtype)
    n_s, d_s = float(scale).as_integer_ratio()
    assert n_s > 0, scale

    def one(v: float) -> int:
        if np.isinf(v):
            return info.max if v > 0 else info.min
        n_x, d_x = v.as_integer_ratio()
        whole, rest = divmod(abs(n_x) * d_s, d_x * n_s)
        q = whole + (2 * rest >= d_x * n_s)  # the half away from zero
        return max(info.min, min(info.max, (q if n_x >= 0 else -q) + zp))

    return [one(float(v)) for v in x.ravel()]


def _input_cast_name(top, name: str) -> str:
    """The name of the tpu.Cast right after input `name` in the unstripped module."""
    source = next(op for op in top.main_func().body.block.ops if op.name == "top.Input" and loc_name(op) == name)
    (use,) = source.results[0].uses
    assert use.operation.name == "tpu.Cast"
    return loc_name(use.operation)


def _run_and_strip(top, d, x):
    """(every tensor of `top` run on x, with its casts; a copy of `top` stripped at both ends, verified)."""
    save_module(top, d / "u.mlir", d / "u_weights.npz")
    before = run_module(top.module, top.weights, {"x": x}, keep_all=True)
    stripped = load_module(d / "u.mlir")
    pass_class("strip-io-quant")(quant_input=True, quant_output=True).apply(make_context(), stripped.module)
    stripped.module.verify()
    return before, stripped


def _check(model, shape, d, asymmetric: bool) -> set[str]:
    """Strip the INT8 module of `model` and compare (module docstring); the features it showed."""
    top = int8_module(model, shape, d, asymmetric=asymmetric)
    # beyond the calibrated range now and then: the input quantization saturates
    x = (np.random.default_rng(5).standard_normal(shape) * 1.6).astype(np.float32)
    before, stripped = _run_and_strip(top, d, x)
    q_in, q_out = module_quant_io(stripped)
    names = {f for f, on in (("input stripped", q_in), ("output stripped", q_out)) if on}
    feed = quantize_inputs({"x": x}, q_in)
    if q_in:
        scale, zp, dtype = q_in["x"]
        names |= {"input zero point"} if zp else set()
        want = _reference_quantize(x, scale, zp, dtype)
        names |= {"saturated input"} if np.iinfo(dtype).max in want or np.iinfo(dtype).min in want else set()
        assert feed["x"].dtype == dtype and feed["x"].ravel().tolist() == want
        assert np.array_equal(before[_input_cast_name(load_module(d / "u.mlir"), "x")], feed["x"])
        with pytest.raises(TpudslError, match=f"input 'x' is {dtype}"):  # never a silent truncation
            run_module(stripped.module, stripped.weights, {"x": x})
    tpu = run_module(stripped.module, stripped.weights, feed)
    bmodel = compile_int8(stripped, str(d / "s.bmodel"))
    got, _ = run_bmodel(bmodel, feed)
    names |= {"uint8 output"} if any(dtype == np.uint8 for _, _, dtype in q_out.values()) else set()
    for name in q_out:  # the cast's operand, under its own name in both modules
        assert got[name].dtype == tpu[name].dtype == before[name].dtype == q_out[name][2]
        assert np.array_equal(got[name], before[name]) and np.array_equal(tpu[name], before[name]), name
    if q_in:
        with pytest.raises(TpudslError, match="input 'x' is [iu]8"):
            run_bmodel(bmodel, {"x": x})
    return names


def test_stripped_bmodel_gives_the_int8_tensors_the_casts_read_and_wrote(tmp_path_factory):
    tally = FeatureTally(FEATURES)

    def check(net, asymmetric):
        tally.record(_check(*net, tmp_path_factory.mktemp("s"), asymmetric))

    # A tenth of the profile's budget (20 in CI): each example calibrates, lowers and compiles.
    n = max(2, settings.default.max_examples // 10)
    settings(max_examples=n)(given(st.sampled_from(KINDS).flatmap(networks), st.booleans())(check))()
    tally.assert_each_in(1 / 2, ("input stripped", "output stripped"))
    tally.assert_each_in(1 / 10, ("input zero point", "saturated input"))


def test_asymmetric_conv_relu_has_int8_input_with_zero_point_and_uint8_output(tmp_path):
    """A Conv + Relu, asymmetric: the input is int8 with a zero point, the output (>= 0) uint8 (a draw
    of the property above rarely ends in a relu)."""
    g = Graph(np.random.default_rng(3))
    g.shapes["x"] = shape = (1, 3, 8, 8)
    conv = g.node("Conv", ["x", g.const((4, 3, 3, 3)), g.const((4,))], (1, 4, 8, 8), kernel_shape=[3, 3],
                  pads=[1, 1, 1, 1])
    model = g.model({"x": shape}, g.node("Relu", [conv], (1, 4, 8, 8)))
    names = _check(model, shape, tmp_path, asymmetric=True)
    assert {"input stripped", "input zero point", "output stripped", "uint8 output"} <= names, names


@pytest.mark.parametrize("dtype, zp", [(np.int8, 0), (np.int8, -5), (np.uint8, 128)])
def test_float_input_quantization_rounds_ties_away_from_zero_and_saturates(dtype, zp):
    """Halves exactly (scale 2^-4: x / scale = k + 1/2 exactly), both signs, and values far beyond
    the range, against the fraction formula; data already of the input's dtype is taken as stored,
    another integer type is refused by name."""
    scale = 0.0625
    halves = (np.arange(-300, 300) + 0.5) * scale
    x = np.concatenate([halves, [0.0, -0.0, 1e30, -1e30, np.inf, -np.inf]]).astype(np.float32)
    got = quantize_inputs({"x": x}, {"x": (scale, zp, np.dtype(dtype))})["x"]
    assert got.dtype == dtype and got.tolist() == _reference_quantize(x, scale, zp, np.dtype(dtype))
    stored = np.arange(10, dtype=dtype)
    assert quantize_inputs({"x": stored}, {"x": (scale, zp, np.dtype(dtype))})["x"] is stored
    with pytest.raises(TpudslError, match=f"input 'x' is {np.dtype(dtype)} .*its data is int32"):
        quantize_inputs({"x": stored.astype(np.int32)}, {"x": (scale, zp, np.dtype(dtype))})


# F16 / BF16 (TPU-MLIR's isF32toF16 / isF16toF32 casts). The reference rounding: the float data
# as float32 (the function argument's type, which the removed cast read), then the nearest f16/bf16
# value, ties to even, in Python integers (`_nearest_in`); on the hard cases (ties, subnormals,
# overflow) it is checked against test_half_exact's `nearest`, in fractions, which costs ~100x more.
HALF_FEATURES = ("input stripped", "output stripped")


def _nearest_in(v: float, dtype: np.dtype) -> float:
    """A finite v rounded to dtype, ties to the even significand, overflow to inf: |v| is the
    integer ratio num / 2^d; its quantum in dtype is 2^k (k = max(exponent, the least normal
    exponent) - the stored significand bits); |v| / 2^k rounded half to even with divmod."""
    info = ml_dtypes.finfo(dtype)
    num, den = abs(v).as_integer_ratio()
    if num == 0:
        return v
    k = max(num.bit_length() - den.bit_length(), info.minexp) - info.nmant
    whole, rest = divmod(num, den << k) if k >= 0 else divmod(num << -k, den)
    divisor = den << k if k >= 0 else den
    whole += 2 * rest > divisor or (2 * rest == divisor and whole % 2 == 1)
    got = whole * 2.0**k
    return float(np.copysign(np.inf if got > float(info.max) else got, v))


def _reference_round(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    # a rounding keeps the sign (a zero result takes the data's); inf stays
    return np.array([_nearest_in(float(v), dtype) if np.isfinite(v) else float(v)
                     for v in x.astype(np.float32).ravel()]).reshape(x.shape)


def _check_half(model, shape, d, mode: str) -> set[str]:
    """Strip the F16/BF16 module of `model`: the stripped .bmodel and Tpu interpreter give, bit for
    bit, the tensors the unstripped module's output casts read, from the input rounded by the
    reference rule (which must equal what its input cast wrote)."""
    top = lowered(model, mode)
    x = (np.random.default_rng(7).standard_normal(shape) * 1.6).astype(np.float32)
    before, stripped = _run_and_strip(top, d, x)
    h_in, h_out = module_half_io(stripped)
    dtype = TYPES[mode]
    assert set(h_in.values()) | set(h_out.values()) <= {dtype}
    names = {f for f, on in (("input stripped", h_in), ("output stripped", h_out)) if on}
    feed = round_inputs({"x": x}, h_in)
    if h_in:
        assert feed["x"].dtype == dtype
        some = slice(None, None, max(1, x.size // 1000))  # the Python reference is slow; the cast checks every element
        assert_bit_exact(feed["x"].ravel()[some].astype(np.float64), _reference_round(x.ravel()[some], dtype),
                         "rounded input")
        assert_bit_exact(before[_input_cast_name(load_module(d / "u.mlir"), "x")].astype(np.float64),
                         feed["x"].astype(np.float64), "input cast")
        with pytest.raises(TpudslError, match=f"input 'x' is {dtype}"):  # never a silent rounding
            run_module(stripped.module, stripped.weights, {"x": x})
    tpu = run_module(stripped.module, stripped.weights, feed)
    bmodel = compile_int8(stripped, str(d / "s.bmodel"))  # model_deploy's backend passes, in any mode
    got, _ = run_bmodel(bmodel, feed)
    for name in h_out:  # the cast's operand, under its own name in both modules
        assert got[name].dtype == dtype, name
        assert_bit_exact(got[name].astype(np.float64), before[name].astype(np.float64), name)
        assert_bit_exact(tpu[name].astype(np.float64), before[name].astype(np.float64), name)
    if h_in:
        with pytest.raises(TpudslError, match=f"input 'x' is {mode.lower()}"):
            run_bmodel(bmodel, {"x": x})
    return names


@pytest.mark.parametrize("mode", ["F16", "BF16"])
def test_stripped_half_bmodel_gives_the_tensors_the_casts_read(mode, tmp_path_factory):
    tally = FeatureTally(HALF_FEATURES)

    def check(net):
        tally.record(_check_half(*net, tmp_path_factory.mktemp("h"), mode))

    n = max(2, settings.default.max_examples // 10)  # as the INT8 property: each example compiles
    settings(max_examples=n)(given(st.sampled_from(KINDS).flatmap(networks))(check))()
    tally.assert_each_in(1 / 2)


@pytest.mark.parametrize("mode", ["F16", "BF16"])
def test_float_input_rounding_is_the_casts_ties_to_even_through_float32(mode):
    """Ties both ways, values just off a tie, subnormals, overflow to inf, -0.0; float64 data goes
    through float32 first (the argument the removed cast read): 1 + 2^-p-1 + 2^-40, nearer the value
    above in float64, is the tie 1 + 2^-p-1 in float32 and rounds to even, down to 1."""
    dtype = TYPES[mode]
    p = {"F16": 10, "BF16": 7}[mode]  # stored significand bits
    tiny = float(ml_dtypes.finfo(dtype).smallest_subnormal)
    big = float(ml_dtypes.finfo(dtype).max)
    beyond = min(big * (1 + 2.0 ** -p / 2), float(np.finfo(np.float32).max))  # rounds to inf, finite in float32
    one_ulp = 2.0 ** -p
    values = [1 + one_ulp / 2, 1 + 3 * one_ulp / 2, -(1 + one_ulp / 2), 1 + one_ulp / 2 * (1 + 2**-10),
              tiny / 2, 3 * tiny / 2, tiny * 0.75, beyond, -beyond, np.inf, 0.0, -0.0, -1e-30]
    x = np.array(values, np.float32)
    got = round_inputs({"x": x}, {"x": dtype})["x"]
    assert got.dtype == dtype
    assert_bit_exact(got.astype(np.float64), _reference_round(x, dtype), mode)
    in_fractions = [np.copysign(nearest(Fraction(float(v)), dtype), v) if np.isfinite(v) else float(v) for v in x]
    assert_bit_exact(_reference_round(x, dtype), np.array(in_fractions), "the references")  # the two agree
    through = round_inputs({"x": np.array([1 + one_ulp / 2 + 2.0**-40])}, {"x": dtype})["x"]
    assert float(through[0]) == 1.0
    with np.errstate(over="ignore"):
        stored = x.astype(dtype)
    assert round_inputs({"x": stored}, {"x": dtype})["x"] is stored
    with pytest.raises(TpudslError, match=f"input 'x' is {dtype}; its data is int32"):
        round_inputs({"x": np.ones(3, np.int32)}, {"x": dtype})


# A cast behind a Reshape/Unsqueeze that is the input's one use (TPU-MLIR's "input -> reshape ->
# cast"). tpudsl's lowering puts the cast right after the input, so the module with the cast behind
# the view is built here from the lowered one: the view moved before the cast, reading the f32 input.
VIEWS = {"tpu.Reshape": ("Reshape", (1, 4, 8, 8), (1, 4, 64)), "tpu.Unsqueeze": ("Unsqueeze", (4, 8, 8), (1, 4, 8, 8))}


def _cast_behind_view(top, view_name: str) -> None:
    """Input -> Cast -> Reshape -> ... becomes Input -> `view_name` (f32) -> Cast -> ..., names kept."""
    from xdsl.dialects.builtin import Float32Type, TensorType
    from xdsl.rewriter import InsertPoint, Rewriter

    from tpudsl.dialects.opdef import create

    source = next(op for op in top.main_func().body.block.ops if op.name == "top.Input")
    (use,) = source.results[0].uses
    cast = use.operation
    (use,) = cast.results[0].uses
    view = use.operation
    assert (cast.name, view.name) == ("tpu.Cast", "tpu.Reshape")
    shape = view.results[0].type.get_shape()
    attrs = {"axes": [0]} if view_name == "tpu.Unsqueeze" else {"shape": list(shape)}
    new_view = create(view_name, [source.results[0]], [TensorType(Float32Type(), shape)], attrs, loc=loc_name(view))
    new_cast = create("tpu.Cast", [new_view.results[0]], [view.results[0].type], loc=loc_name(cast))
    Rewriter.insert_op(new_view, InsertPoint.before(view))
    Rewriter.insert_op(new_cast, InsertPoint.before(view))
    view.results[0].replace_all_uses_with(new_cast.results[0])
    for op in (view, cast):
        op.detach()
        op.erase()
    top.module.verify()


@pytest.mark.parametrize("view_name, mode", [("tpu.Reshape", "INT8"), ("tpu.Unsqueeze", "INT8"),
                                             ("tpu.Reshape", "BF16"), ("tpu.Unsqueeze", "F16")])
def test_cast_behind_a_view_after_the_input_is_stripped(view_name, mode, tmp_path):
    """x -> view -> Cast -> Relu -> Cast: stripped, the input and the view take the cast's type under
    their own names; the Tpu interpreter and the .bmodel give, bit for bit, the tensors the
    unstripped module's casts wrote (the view's) and read (the output's), from the input data those
    casts would have made (quantize_inputs / round_inputs, checked against the reference rules above)."""
    g = Graph(np.random.default_rng(3))
    kind, shape, view_shape = VIEWS[view_name]
    g.shapes["x"] = shape
    view = g.node(kind, ["x", g.ints([1, 4, 64] if kind == "Reshape" else [0])], view_shape)
    model = g.model({"x": shape}, g.node("Relu", [view], view_shape))
    top = int8_module(model, shape, tmp_path) if mode == "INT8" else lowered(model, mode)
    _cast_behind_view(top, view_name)
    x = (np.random.default_rng(5).standard_normal(shape) * 1.6).astype(np.float32)
    before, stripped = _run_and_strip(top, tmp_path, x)
    ops = [op for op in stripped.main_func().body.block.ops if op.name != "top.Weight"]
    assert [op.name for op in ops][:2] == ["top.Input", view_name] and "tpu.Cast" not in [op.name for op in ops]
    assert [loc_name(op) for op in ops[:2]] == ["x", view]  # the view keeps its name
    assert ops[1].results[0].type.element_type == ops[0].results[0].type.element_type
    if mode == "INT8":
        q_in, q_out = module_quant_io(stripped)
        scale, zp, dtype = q_in["x"]
        feed = quantize_inputs({"x": x}, q_in)
        assert feed["x"].ravel().tolist() == _reference_quantize(x, scale, zp, dtype)
    else:
        h_in, q_out = module_half_io(stripped)
        feed = round_inputs({"x": x}, h_in)
        assert_bit_exact(feed["x"].astype(np.float64), _reference_round(x, TYPES[mode]), "rounded input")
    (cast_name,) = [loc_name(u.operation) for u in next(
        op for op in top.main_func().body.block.ops if op.name == view_name).results[0].uses]
    wrote = before[cast_name].astype(np.float64)  # what the removed input cast wrote: the stripped view's tensor
    assert_bit_exact(feed["x"].reshape(view_shape).astype(np.float64), wrote, "input cast")
    tpu = run_module(stripped.module, stripped.weights, feed, keep_all=True)
    assert_bit_exact(tpu[view].astype(np.float64), wrote, view)
    got, _ = run_bmodel(compile_int8(stripped, str(tmp_path / "s.bmodel")), feed)
    (out,) = q_out
    assert got[out].dtype == (q_out[out][2] if mode == "INT8" else q_out[out])
    assert_bit_exact(got[out].astype(np.float64), before[out].astype(np.float64), out)
    assert_bit_exact(tpu[out].astype(np.float64), before[out].astype(np.float64), out)

"""The noise rule of the comparison (NOISE_LEVEL): a reference tensor that is rounding noise of the op
computing it is judged by its absolute error against the op's term scale, not by cosine; a real
mismatch, small or large, still fails."""

import re

import numpy as np
import onnx
import pytest
from frontend_support import make_model
from hypothesis import event, given
from hypothesis import strategies as st
from onnx import helper as h

from tpudsl.cli import compare as C
from tpudsl.cli import model_transform
from tpudsl.cli.term_scale import term_scales
from tpudsl.frontend import onnx_ops
from tpudsl.frontend.onnx_import import convert_onnx
from tpudsl.ir.diagnostics import TpudslError

EPS32 = 2.0**-23  # float32 epsilon, written out: the floor is 64 of them times the scale


def noise(seed, size=64, magnitude=5e-8):
    return (magnitude * np.random.default_rng(seed).standard_normal(size)).astype(np.float32)


def test_noise_passes_against_a_large_term_scale_and_fails_without_one():
    ref, target = noise(0), noise(1)  # two unrelated draws: cosine near 0
    plain = C.compare_arrays(target, ref)
    assert plain.verdict == C.NOT_SIMILAR and abs(plain.cosine) < 0.5
    judged = C.compare_arrays(target, ref, scale=0.8)
    assert judged.verdict == C.NOISE_LEVEL and judged.passed
    assert judged.noise_floor == pytest.approx(64 * EPS32 * 0.8)
    assert judged.cosine == plain.cosine  # the measures are still reported


def test_same_small_values_against_a_small_term_scale_fail():
    """Values of 5e-8 are a signal when the op's terms are 1e-7 large: a mismatch there is real."""
    assert C.compare_arrays(noise(1), noise(0), scale=1e-7).verdict == C.NOT_SIMILAR


def test_target_above_the_floor_fails_even_when_the_reference_is_noise():
    ref = noise(0)
    target = ref + np.float32(1e-4)  # a real offset, 40x the floor at scale 0.8
    assert C.compare_arrays(target, ref, scale=0.8).verdict == C.NOT_SIMILAR


def test_real_mismatch_in_a_large_tensor_fails_whatever_the_scale():
    ref = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    assert C.compare_arrays(-ref, ref, scale=1.0).verdict == C.NOT_SIMILAR
    assert C.compare_arrays(ref * 1.5, ref, scale=float(np.abs(ref).max())).verdict == C.NOT_SIMILAR


def test_scale_function_is_called_only_for_tensors_the_measures_fail():
    calls = []
    C.compare_dicts({"a": np.ones(3), "b": noise(1)}, {"a": np.ones(3), "b": noise(0)},
                    scale_of=lambda name: calls.append(name) or 1.0)
    assert calls == ["b"]


def test_integer_and_non_finite_scales_have_no_noise_rule():
    ref, target = np.array([0, 1, 0], np.int32), np.array([1, 0, 0], np.int32)
    assert C.compare_arrays(target, ref, scale=1e6).verdict == C.NOT_SIMILAR
    assert C.compare_arrays(noise(1), noise(0), scale=float("inf")).verdict == C.NOT_SIMILAR
    assert C.compare_arrays(noise(1), noise(0), scale=float("nan")).verdict == C.NOT_SIMILAR


def test_noise_verdict_matches_the_floor_formula():
    """NOISE_LEVEL exactly when the measures fail, max|ref| <= 64 eps scale and max|t - r| <= 64 eps
    scale; the property exists for the NOISE_LEVEL case, so it must happen in a fair share of examples."""
    seen = []

    # Magnitudes of the reference and of the error drawn around the floor, so that both sides of it occur.
    @given(st.integers(0, 2**32 - 1), st.floats(-2, 1.5), st.floats(-2, 1.5), st.floats(-9, 3))
    def check(seed, log_ref, log_err, log_scale):
        rng = np.random.default_rng(seed)
        scale = 10.0**log_scale
        floor = 64 * EPS32 * scale
        ref = (floor * 10.0**log_ref * rng.standard_normal(32)).astype(np.float32)
        target = (ref + floor * 10.0**log_err * rng.standard_normal(32)).astype(np.float32)
        r = C.compare_arrays(target, ref, scale=scale)
        err = np.abs(target.astype(np.float64) - ref.astype(np.float64)).max()
        below = np.abs(ref).max() <= floor and err <= floor
        failed_measures = r.verdict in (C.NOT_SIMILAR, C.NOISE_LEVEL)
        event(f"noise level: {failed_measures and below}")
        assert (r.verdict == C.NOISE_LEVEL) == (failed_measures and below)
        seen.append(r.verdict == C.NOISE_LEVEL)

    check()
    assert 0.05 * len(seen) <= sum(seen) <= 0.95 * len(seen), f"{sum(seen)} noise-level cases of {len(seen)}"


def layer_norm_model(channels=192):
    """PyTorch's decomposed LayerNorm at opset 13 (ConvNeXt): `noise` is the mean of x - mean(x), which
    is cancellation noise; onnxruntime and numpy sum the 192 channels in different orders."""
    nodes = [
        h.make_node("ReduceMean", ["x"], ["mean"], axes=[-1], keepdims=1),
        h.make_node("Sub", ["x", "mean"], ["d"]),
        h.make_node("ReduceMean", ["d"], ["noise"], axes=[-1], keepdims=1),
        h.make_node("Pow", ["d", "two"], ["sq"]),
        h.make_node("ReduceMean", ["sq"], ["var"], axes=[-1], keepdims=1),
        h.make_node("Add", ["var", "noise"], ["y"]),
    ]
    return make_model(nodes, {"x": [1, 8, 8, channels]}, ["y"], {"two": np.array(2.0, np.float32)})


def test_term_scales_follow_each_op_row():
    """Scales recomputed by hand from the reference values: Sub's terms are x and mean, a ReduceMean's
    are its input's elements, Conv's are input x filter values plus the bias; Pow has no row."""
    rng = np.random.default_rng(0)
    nodes = [h.make_node("ReduceMean", ["x"], ["mean"], axes=[1], keepdims=1), h.make_node("Sub", ["x", "mean"], ["d"]),
             h.make_node("Conv", ["d", "w", "b"], ["c"]), h.make_node("Pow", ["c", "two"], ["p"])]
    weights = {"w": rng.standard_normal((2, 3, 1, 1)).astype(np.float32) * 3, "b": np.float32([7.0, -9.0]),
               "two": np.array(2.0, np.float32)}
    mod = convert_onnx(make_model(nodes, {"x": [1, 3, 4, 4]}, ["p"], weights), "m")
    x = rng.standard_normal((1, 3, 4, 4)).astype(np.float32)
    mean = x.mean(axis=1, keepdims=True)
    ref = {"mean": mean, "d": x - mean}
    scale_of = term_scales(mod.main_func(), ref, {"x": x}, mod.weights)
    assert scale_of("mean") == pytest.approx(np.abs(x).max())
    assert scale_of("d") == pytest.approx(max(np.abs(x).max(), np.abs(mean).max()))
    assert scale_of("c") == pytest.approx(max(np.abs(x - mean).max() * np.abs(weights["w"]).max(), 9.0))
    assert scale_of("p") is None and scale_of("x") is None
    assert term_scales(mod.main_func(), {}, {}, {})("d") is None  # no reference value for an operand


def test_term_scale_of_a_sum_with_coefficients():
    """Add with coeff [2, -3] adds 2a and -3b: the terms are 2 max|a| and 3 max|b| large; SubConst's
    terms are its input and its constant."""
    from tpudsl.dialects import make_context
    from tpudsl.ir.parser import parse_module

    text = """func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
      %0 = "top.Input"(%arg0) : (tensor<4xf32>) -> tensor<4xf32> loc("a")
      %1 = "top.Input"(%arg1) : (tensor<4xf32>) -> tensor<4xf32> loc("b")
      %2 = "top.Add"(%0, %1) {coeff = [2.000000e+00, -3.000000e+00]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("s")
      %3 = "top.SubConst"(%2) {const_val = -2.500000e+01 : f64} : (tensor<4xf32>) -> tensor<4xf32> loc("c")
      return %3 : tensor<4xf32>
    }"""
    func = next(iter(parse_module(text, "t.mlir", make_context()).ops))
    values = {"a": np.float32([1, -5, 2, 0]), "b": np.float32([0.5, 1, -2, 1]), "s": np.float32([1, -13, 10, -3])}
    assert term_scales(func, values)("s") == pytest.approx(max(2 * 5, 3 * 2))
    assert term_scales(func, values)("c") == pytest.approx(25)


def run_transform(tmp_path, monkeypatch, model, x, capsys):
    onnx.save(model, tmp_path / "m.onnx")
    np.savez(tmp_path / "in.npz", x=x)
    monkeypatch.chdir(tmp_path)
    model_transform.run(["--model_name", "m", "--model_def", "m.onnx", "--mlir", "m.mlir", "--test_input", "in.npz"])
    return capsys.readouterr().out


def test_model_transform_passes_layer_norm_noise_and_says_so(tmp_path, monkeypatch, capsys):
    x = (0.8 + 0.1 * np.random.default_rng(0).standard_normal((1, 8, 8, 192))).astype(np.float32)
    out = run_transform(tmp_path, monkeypatch, layer_norm_model(), x, capsys)
    row = next(line for line in out.splitlines() if line.startswith("[noise "))
    assert "NOISE_LEVEL [PASSED]" in row and "noise floor" in row
    # The case this test exists for: by cosine alone, the tensor fails.
    assert float(re.search(r"cos (\S+)", row).group(1)) < 0.99
    assert out.splitlines()[-1] == "npz compare PASSED."


def test_model_transform_fails_a_small_mismatch_of_small_inputs(tmp_path, monkeypatch, capsys):
    """Inputs of 1e-9: a ReduceMean of them converted as a ReduceSum (values near 1e-8 instead of 1e-10,
    all below the ConvNeXt noise) is a real mismatch, and the small term scale keeps it from passing."""
    monkeypatch.setitem(onnx_ops.CONVERTERS, "ReduceMean", onnx_ops.CONVERTERS["ReduceSum"])
    nodes = [h.make_node("ReduceMean", ["x"], ["m"], axes=[-1], keepdims=1), h.make_node("Relu", ["m"], ["y"])]
    x = (1e-9 * np.random.default_rng(0).standard_normal((1, 4, 192))).astype(np.float32)
    with pytest.raises(TpudslError, match="validation failed at tensor 'm': NOT_SIMILAR"):
        run_transform(tmp_path, monkeypatch, make_model(nodes, {"x": [1, 4, 192]}, ["y"]), x, capsys)

"""Weight-only quantization (`--quantize W8F16 / W8BF16`, tpu.A16MatMul; docs/quantization.md
"Weight-only quantization"), each part against a reference written here:

* the stored int8 weights and scales against TPU-MLIR's formula written again (float64 scale
  max|w| / 127 stored as float32, q = std::round(w / scale) in float32: decimal's ROUND_HALF_UP);
* the Tpu interpreter's W8F16 MatMul against an exact reference: the weight dequantized (int8 times
  the f16 scale, rounded to f16), every output the exact sum (Fractions) of its products plus the
  f32 bias, rounded once to f16 by nearest-even on the exact value: bit-exact;
* a transformer block in W8F16 / W8BF16 against the Top F32 interpreter (cosine);
* model_deploy --quantize W8F16 / W8BF16 on the tiny chip (the A16MatMuls sliced by rows and
  columns, int8 and uint8 weights): the .bmodel on the cmodel bit-exact to the Tpu interpreter, and
  a cmodel dequantizing one ulp off fails that check; --q_group_size is refused by name.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.models import transformer_block
from tests.test_tpu_float import cosine, lower, run, top_module
from tpudsl.backend.cmodel import arith_half
from tpudsl.cli import model_deploy
from tpudsl.dialects.opdef import SPECS, AttrView, loc_name
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import load_module, save_module


def linear_model(w: np.ndarray, bias: np.ndarray, m: int) -> onnx.ModelProto:
    """y = x @ w + bias for x [m, K] (a MatMul with a weight and a bias: one top.MatMul)."""
    k, n = w.shape
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["mm"], name="mm"), helper.make_node("Add", ["mm", "b"], ["y"], name="y")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def a16_ops(top) -> list:
    return [op for op in top.main_func().walk() if op.name == "tpu.A16MatMul"]


def stored(top, op) -> tuple[np.ndarray, np.ndarray]:
    """An A16MatMul's stored weight [N, K] and scale [N, 1] (as their npz holds them)."""
    weight, scale = (top.weights[loc_name(v.owner)] for v in op.operands[1:3])
    return weight, scale


def weights_with_cases(rng) -> np.ndarray:
    """[K, N] float32: random channels, one of zeros, one whose values meet a half (1 of max 2:
    ratio 63.5, rounded away from zero to 64), one exactly at its maximum."""
    w = rng.standard_normal((16, 6)).astype(np.float32)
    w[:, 1] = 0.0
    w[:, 2] = 0.25
    w[:2, 2] = (2.0, 1.0)
    return w


def tpu_mlir_formula(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """TPU-MLIR's computePerChannelParam / weightQuantization (8 bits, signed, zero point 0) on
    [N, K] rows, written here with Python's Decimal for the rounding; a zero channel stores zeros."""
    scales = np.array([[np.float32(float(np.max(np.abs(row.astype(np.float64)))) / 127.0)] for row in w], np.float32)
    q = np.zeros(w.shape, np.int64)
    for n, row in enumerate(w):
        for k, v in enumerate(row):
            if scales[n, 0] != 0:
                ratio = float(np.float32(v) / scales[n, 0])  # float32 division, as C++ float / float
                q[n, k] = max(-128, min(127, int(Decimal(ratio).to_integral_value(ROUND_HALF_UP))))
    return q, scales


def test_int8_weights_and_scales_are_tpu_mlirs_per_channel_formula():
    rng = np.random.default_rng(0)
    w = weights_with_cases(rng)
    top = lower(top_module(linear_model(w, np.zeros(6, np.float32), 4)), "W8F16")
    (op,) = a16_ops(top)
    q, scale = stored(top, op)
    want_q, want_scale = tpu_mlir_formula(w.T)
    with np.errstate(invalid="ignore"):  # the zero channel: 0 / 0
        ties = int(np.sum(np.abs(np.abs(w.T / want_scale) % 1 - 0.5) == 0))
    assert ties >= 1  # the half-away-from-zero case is among them
    assert q.dtype == np.int8 and q.shape == (6, 16)
    np.testing.assert_array_equal(q.astype(np.int64), want_q)
    np.testing.assert_array_equal(scale, want_scale.astype(np.float16))  # stored in the activations' type
    assert q[2, 1] == 64 and not q[1].any()


def round_f16(exact: Fraction) -> float:
    """The float16 nearest `exact` (ties to even), chosen among the float16 values around it."""
    guess = np.float16(float(exact))
    candidates = {float(guess), float(np.nextafter(guess, np.float16(np.inf))),
                  float(np.nextafter(guess, np.float16(-np.inf)))}
    return min(candidates, key=lambda c: (abs(Fraction(c) - exact), int(np.float16(c).view(np.uint16)) & 1))


def test_w8f16_matmul_is_the_exact_sum_of_the_dequantized_weight_rounded_once():
    rng = np.random.default_rng(1)
    w = weights_with_cases(rng)
    bias = rng.standard_normal(6).astype(np.float32)
    top = lower(top_module(linear_model(w, bias, 5)), "W8F16")
    (op,) = a16_ops(top)
    q, scale = stored(top, op)
    x = rng.standard_normal((5, 16)).astype(np.float32)
    got = run(top, {"x": x}, keep_all=True)[loc_name(op)]
    x16 = x.astype(np.float16).astype(np.float64)
    deq = (q.astype(np.float64) * scale.astype(np.float64)).astype(np.float16).astype(np.float64)  # [N, K]
    assert len(op.operands) == 5 and loc_name(op.operands[4].owner) == "b"  # the Add fused as the f32 bias
    want = np.array([[round_f16(sum((Fraction(a) * Fraction(b) for a, b in zip(x16[i], deq[j], strict=True)),
                                    Fraction(float(bias[j]))))
                      for j in range(6)] for i in range(5)])
    np.testing.assert_array_equal(np.asarray(got, np.float64), want)


@pytest.mark.parametrize("mode, bound", [("W8F16", 0.999), ("W8BF16", 0.99)])
def test_transformer_block_in_weight_only_mode_matches_top_f32(mode, bound):
    model = transformer_block(seq_len=8, d_model=32, num_heads=2, d_ff=64)
    feed = {"x": np.random.default_rng(2).standard_normal((1, 8, 32)).astype(np.float32)}
    want = run(top_module(model), feed)["output"]
    top = lower(top_module(model), mode)
    # the six linears (q, k, v, out, ffn1, ffn2) are A16; the two attention MatMuls are computed
    assert len(a16_ops(top)) == 6
    assert sum(op.name == "tpu.MatMul" for op in top.main_func().walk()) == 2
    assert cosine(run(top, feed)["output"], want) >= bound


def two_linears(rng, m: int, k: int, hidden: int, n: int) -> onnx.ModelProto:
    """x [m, k] -> MatMul (a weight of both signs) + bias -> MatMul (a positive weight: uint8)."""
    w1 = rng.standard_normal((k, hidden)).astype(np.float32)
    w2 = np.abs(rng.standard_normal((hidden, n))).astype(np.float32) + 0.01
    b1 = rng.standard_normal(hidden).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w1"], ["mm1"], name="mm1"), helper.make_node("Add", ["mm1", "b1"], ["h"], name="h"),
         helper.make_node("MatMul", ["h", "w2"], ["y"], name="y")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"), numpy_helper.from_array(w2, "w2")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def two_linears_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("w8")
    rng = np.random.default_rng(3)
    save_module(top_module(two_linears(rng, 64, 96, 256, 48)), d / "lin.mlir", d / "lin_top_weights.npz")
    np.savez(d / "in.npz", x=rng.standard_normal((64, 96)).astype(np.float32))
    return d


def deploy_args(d, mode: str, *extra: str) -> list[str]:
    return ["--mlir", str(d / "lin.mlir"), "--quantize", mode, "--processor", "tiny", "--model",
            str(d / f"lin_{mode}.bmodel"), "--test_input", str(d / "in.npz"), *extra]


@pytest.mark.parametrize("mode", ["W8F16", "W8BF16"])
def test_model_deploy_bmodel_is_bit_exact_to_the_tpu_interpreter(two_linears_files, capsys, mode):
    """On the tiny chip both A16MatMuls are sliced (rows, and the second's columns), one weight int8,
    the other uint8; model_deploy's third comparison holds the cmodel to the interpreter bit for bit."""
    d = two_linears_files
    model_deploy.run(deploy_args(d, mode))
    err = capsys.readouterr().err
    assert f"bmodel check passed: 1 outputs of the cmodel equal the Tpu interpreter's ({mode}, bit-exact)" in err, err
    final = load_module(d / f"m_tiny_{mode.lower()}_final.mlir")
    ops = a16_ops(final)
    assert [AttrView(op.attributes, SPECS[op.name])["sign"] for op in ops] == [True, False]
    secs = [AttrView(op.attributes, SPECS[op.name]) for op in ops]
    assert any(a["nsecs"] * a.get("csecs", 1) > 1 for a in secs), [dict(a) for a in secs]  # sliced on tiny


def test_third_comparison_fails_when_the_cmodel_dequantizes_wrongly(two_linears_files, monkeypatch):
    """The cmodel's dequantized weight one ulp up (the dtype's next value) fails the bit-exact check."""
    real = arith_half.dequantize
    monkeypatch.setattr(arith_half, "dequantize", lambda q, s: np.nextafter(real(q, s), np.float16(np.inf)))
    with pytest.raises(TpudslError, match=r"bmodel check failed at tensor 'y'"):
        model_deploy.run(deploy_args(two_linears_files, "W8F16"))


def test_model_deploy_refuses_per_group_scales(two_linears_files):
    with pytest.raises(TpudslError, match=r"q_group_size=64 \(per-group weight-only quantization\) is not modelled"):
        model_deploy.run(deploy_args(two_linears_files, "W8F16", "--q_group_size", "64"))

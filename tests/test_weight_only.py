"""Weight-only quantization (`--quantize W8F16 / W8BF16 / W4F16 / W4BF16`, tpu.A16MatMul; docs/quantization.md
"Weight-only quantization"), each part against a reference written here:

* the stored integers, scales and zero points against TPU-MLIR's formulas written again (per
  channel: float64 scale max|w| / 127 stored as float32; per group: float32 2 max|w| / 255 with zero
  point 128, or (max - min) / 255 with zero point -round(min / scale); q = std::round(w / scale) in
  float32 (decimal's ROUND_HALF_UP) plus the zero point, saturated; W4's two per byte unpacked by
  shifts written here);
* the Tpu interpreter's W8F16 / W4F16 MatMul against an exact reference: the weight dequantized ((q - zp)
  times the f16 scale, rounded to f16), every output the exact sum (Fractions) of its products plus
  the f32 bias, rounded once to f16 by nearest-even on the exact value: bit-exact;
* a transformer block in W8F16 / W8BF16 against the Top F32 interpreter (cosine);
* model_deploy --quantize W8F16 / W8BF16 / W4F16 / W4BF16 on the tiny chip (the A16MatMuls sliced by rows and
  columns, int8 and uint8 weights, per channel and per group): the .bmodel on the cmodel bit-exact
  to the Tpu interpreter, and a cmodel dequantizing one ulp off fails that check; a group size that
  does not divide K is refused by name.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from fractions import Fraction

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.models import transformer_block
from tests.test_tpu_float import cosine, run, top_module
from tpudsl.backend.cmodel import arith_half
from tpudsl.cli import model_deploy
from tpudsl.dialects import make_context
from tpudsl.dialects.opdef import SPECS, AttrView, loc_name
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import load_module, save_module
from tpudsl.passes import pass_class


def linear_model(w: np.ndarray, bias: np.ndarray, m: int) -> onnx.ModelProto:
    """y = x @ w + bias for x [m, K] (a MatMul with a weight and a bias: one top.MatMul)."""
    k, n = w.shape
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["mm"], name="mm"), helper.make_node("Add", ["mm", "b"], ["y"], name="y")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def lower(top, mode: str, q_group_size: int = 0, q_symmetric: bool = False):
    """processor-assign and convert-top-to-tpu with the weight-only options."""
    ctx = make_context()
    pass_class("processor-assign")(chip="bm1684x", mode=mode).apply(ctx, top.module)
    pass_class("convert-top-to-tpu")(q_group_size=q_group_size, q_symmetric=q_symmetric).apply(ctx, top.module)
    top.module.verify()
    return top


def a16_ops(top) -> list:
    return [op for op in top.main_func().walk() if op.name == "tpu.A16MatMul"]


def stored(top, op) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An A16MatMul's stored weight [N, K] (4 bits: each byte's low nibble, then its high one),
    scale [N, G] and zero points [N, G] (zeros when none)."""
    weight, scale = (top.weights[loc_name(v.owner)] for v in op.operands[1:3])
    if AttrView(op.attributes, SPECS[op.name])["weight_bits"] == 4:
        weight = np.array([[(byte >> shift) & 15 for byte in row for shift in (0, 4)] for row in weight.tolist()])
    zp = op.operands[3]
    return weight, scale, np.zeros(scale.shape, np.int64) if zp.owner.name == "top.None" else top.weights[loc_name(zp.owner)]


def weights_with_cases(rng) -> np.ndarray:
    """[K, N] float32: random channels, one of zeros, one whose values meet a half (1 of max 2:
    ratio 63.5, rounded away from zero to 64), one exactly at its maximum."""
    w = rng.standard_normal((16, 6)).astype(np.float32)
    w[:, 1] = 0.0
    w[:, 2] = 0.25
    w[:2, 2] = (2.0, 1.0)
    return w


def std_round(v) -> int:
    """C's std::round of a float32 value: halves away from zero (decimal's ROUND_HALF_UP)."""
    return int(Decimal(float(v)).to_integral_value(ROUND_HALF_UP))


def tpu_mlir_formula(w: np.ndarray, size: int = 0, symmetric: bool = False, bits: int = 8):
    """TPU-MLIR's computePerChannelParam / computePerGroupParam and weightQuantization on [N, K]
    rows, written again element by element (4 bits per channel: asymmetric, max 15); a group or
    channel of zeros (TPU-MLIR divides by zero) stores its zero point. Returns (q, scale [N, G],
    zero point [N, G])."""
    f32 = np.float32
    qmax = 2**bits - 1
    if bits == 4 and not size:
        size = w.shape[1]
    groups = w.shape[1] // size if size else 1
    q, scale, zp = np.zeros(w.shape, np.int64), np.zeros((w.shape[0], groups), f32), np.zeros((w.shape[0], groups), np.int64)
    for n in range(w.shape[0]):
        for g in range(groups):
            part = w[n, g * size:(g + 1) * size] if size else w[n]
            if not size:  # per channel, signed: the division in double, stored as float
                scale[n, g], lo, hi = f32(float(np.max(np.abs(part.astype(np.float64)))) / 127.0), -128, 127
            elif symmetric:
                scale[n, g], zp[n, g], lo, hi = f32(f32(2) * f32(np.max(np.abs(part)))) / f32(qmax), qmax // 2 + 1, 0, qmax
            else:
                scale[n, g], lo, hi = max(f32(part.max()) - f32(part.min()), f32(1e-5)) / f32(qmax), 0, qmax
                zp[n, g] = min(qmax, max(0, -std_round(f32(part.min()) / scale[n, g])))
            for k, v in enumerate(part):
                at = g * size + k if size else k
                q[n, at] = min(hi, max(lo, (std_round(f32(v) / scale[n, g]) if scale[n, g] else 0) + zp[n, g]))
    return q, scale, zp


@pytest.mark.parametrize("mode, size, symmetric", [("W8F16", 0, False), ("W8F16", 4, False), ("W8F16", 4, True),
                                                   ("W4F16", 0, False), ("W4F16", 4, True)])
def test_integers_scales_and_zero_points_are_tpu_mlirs_formulas(mode, size, symmetric):
    rng = np.random.default_rng(0)
    w = weights_with_cases(rng)
    top = lower(top_module(linear_model(w, np.zeros(6, np.float32), 4)), mode, size, symmetric)
    (op,) = a16_ops(top)
    q, scale, zp = stored(top, op)
    bits = 4 if mode == "W4F16" else 8
    want_q, want_scale, want_zp = tpu_mlir_formula(w.T, size, symmetric, bits)
    assert op.operands[1].type.get_shape() == ((6, 8) if bits == 4 else (6, 16))  # 4 bits: two per byte
    assert q.shape == (6, 16) and q.dtype == (np.int8 if mode == "W8F16" and not size else q.dtype)
    np.testing.assert_array_equal(q.astype(np.int64), want_q)
    np.testing.assert_array_equal(scale, want_scale.astype(np.float16))  # stored in the activations' type
    np.testing.assert_array_equal(zp.astype(np.int64), want_zp)
    if mode == "W8F16" and not size:
        assert q[2, 1] == 64 and not q[1].any()  # the half rounded away from zero; the zero channel
        with np.errstate(invalid="ignore"):  # the zero channel: 0 / 0
            assert int(np.sum(np.abs(np.abs(w.T / want_scale) % 1 - 0.5) == 0)) >= 1


def round_f16(exact: Fraction) -> float:
    """The float16 nearest `exact` (ties to even), chosen among the float16 values around it."""
    guess = np.float16(float(exact))
    candidates = {float(guess), float(np.nextafter(guess, np.float16(np.inf))),
                  float(np.nextafter(guess, np.float16(-np.inf)))}
    return min(candidates, key=lambda c: (abs(Fraction(c) - exact), int(np.float16(c).view(np.uint16)) & 1))


@pytest.mark.parametrize("mode, size, symmetric", [("W8F16", 0, False), ("W8F16", 8, False), ("W8F16", 8, True),
                                                   ("W4F16", 0, False), ("W4F16", 8, True)])
def test_weight_only_matmul_is_the_exact_sum_of_the_dequantized_weight_rounded_once(mode, size, symmetric):
    rng = np.random.default_rng(1)
    w = weights_with_cases(rng)
    bias = rng.standard_normal(6).astype(np.float32)
    top = lower(top_module(linear_model(w, bias, 5)), mode, size, symmetric)
    (op,) = a16_ops(top)
    q, scale, zp = stored(top, op)
    x = rng.standard_normal((5, 16)).astype(np.float32)
    got = run(top, {"x": x}, keep_all=True)[loc_name(op)]
    x16 = x.astype(np.float16).astype(np.float64)
    per_k = 16 // scale.shape[1]
    deq = [[float(np.float16((int(q[j, k]) - int(zp[j, k // per_k])) * float(scale[j, k // per_k])))
            for k in range(16)] for j in range(6)]  # exact product in float64, rounded to f16 once
    assert len(op.operands) == 5 and loc_name(op.operands[4].owner) == "b"  # the Add fused as the f32 bias
    want = np.array([[round_f16(sum((Fraction(a) * Fraction(b) for a, b in zip(x16[i], deq[j], strict=True)),
                                    Fraction(float(bias[j]))))
                      for j in range(6)] for i in range(5)])
    np.testing.assert_array_equal(np.asarray(got, np.float64), want)


def test_a_scale_f16_cannot_hold_is_an_error_naming_the_weight_and_channel():
    w = -np.ones((16, 6), np.float32)  # signed
    w[:, 4] = 1e-9  # scale 1e-9 / 127: below float16's smallest subnormal, it would dequantize to 0
    with pytest.raises(TpudslError, match=r"y: weight 'w': the scale 7.87402e-12 of output channel 4 is not "
                                          r"representable in F16"):
        lower(top_module(linear_model(w, np.zeros(6, np.float32), 4)), "W8F16")
    lower(top_module(linear_model(w, np.zeros(6, np.float32), 4)), "W8BF16")  # bfloat16 holds it


@pytest.mark.parametrize("mode, bound", [("W8F16", 0.999), ("W8BF16", 0.999), ("W4F16", 0.98), ("W4BF16", 0.98)])
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


@pytest.mark.parametrize("mode, options", [("W8F16", ()), ("W8BF16", ()), ("W8F16", ("--q_group_size", "32")),
                                           ("W8BF16", ("--q_group_size", "32", "--q_symmetric")), ("W4F16", ()),
                                           ("W4BF16", ("--q_group_size", "32", "--q_symmetric"))])
def test_model_deploy_bmodel_is_bit_exact_to_the_tpu_interpreter(two_linears_files, capsys, mode, options):
    """On the tiny chip both A16MatMuls are sliced (rows, and the second's columns, its scales and
    zero points with them), per channel one weight int8, the other uint8; model_deploy's third
    comparison holds the cmodel to the interpreter bit for bit."""
    d = two_linears_files
    model_deploy.run(deploy_args(d, mode, *options))
    err = capsys.readouterr().err
    assert f"bmodel check passed: 1 outputs of the cmodel equal the Tpu interpreter's ({mode}, bit-exact)" in err, err
    final = load_module(d / f"m_tiny_{mode.lower()}_final.mlir")
    views = [AttrView(op.attributes, SPECS[op.name]) for op in a16_ops(final)]
    assert [a["sign"] for a in views] == [True, False]
    assert [a["q_group_size"] for a in views] == [32 if options else 0] * 2
    assert [a["weight_bits"] for a in views] == [4 if mode.startswith("W4") else 8] * 2
    with_zp = options or mode.startswith("W4")
    assert [str(op.operands[1].type.element_type) for op in a16_ops(final)] == (["ui8"] * 2 if with_zp else ["i8", "ui8"])
    assert any(a["nsecs"] * a.get("csecs", 1) > 1 for a in views), [dict(a) for a in views]  # sliced on tiny


def test_third_comparison_fails_when_the_cmodel_dequantizes_wrongly(two_linears_files, monkeypatch):
    """The cmodel's dequantized weight one ulp up (the dtype's next value) fails the bit-exact check."""
    real = arith_half.dequantize
    monkeypatch.setattr(arith_half, "dequantize", lambda *args: np.nextafter(real(*args), np.float16(np.inf)))
    with pytest.raises(TpudslError, match=r"bmodel check failed at tensor 'y'"):
        model_deploy.run(deploy_args(two_linears_files, "W8F16"))


def test_model_deploy_refuses_a_group_size_that_does_not_divide_k(two_linears_files):
    with pytest.raises(TpudslError, match=r"h: q_group_size=64 does not divide K = 96 of weight 'w1'"):
        model_deploy.run(deploy_args(two_linears_files, "W8F16", "--q_group_size", "64"))

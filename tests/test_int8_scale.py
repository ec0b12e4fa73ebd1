"""INT8 BatchNorm and Scale: a depthwise 1x1 INT8 Conv2D (docs/quantization.md, "INT8 lowering").

* The Tpu interpreter's int8 results of a BatchNorm (fused relu, a negative and a zero gamma) and a
  Scale after it, symmetric and asymmetric, against the formula written here in Python ints and
  fractions from the float parameters and the tensors' scales and zero points: filter sign(a) 127,
  bias round_half_away(b / (|a| / 127 s_in)), (m, n) of |a| / 127 s_in / s_out, HalfUp, + zp_out,
  saturated; exact, every element.
* A DenseNet-style model (pre-activation BN -> ReLU -> Conv in every dense layer, Concat,
  transition) through model_deploy INT8, symmetric and asymmetric: no tpu.Scale left in F32 (every
  op but the boundary Casts is int8), the .bmodel bit-exact to the Tpu interpreter, output cosine
  with Top reported.
"""

from __future__ import annotations

import itertools
import re
from fractions import Fraction

import numpy as np
import pytest

from tests.backend_support import deploy_int8, top_int8_module
from tests.models import densenet
from tests.test_requant import ref_round, ref_scale_and_shift
from tests.test_tpu_float import cosine, run
from tpudsl.ir.module import load_module
from tpudsl.lowering.top_to_tpu_int8 import int8_params

C, EPS = 6, 1e-3
SHAPE = (1, C, 5, 5)

AFFINE_MLIR = """module attributes {module.name = "m", module.state = "TOP_F32", module.weight_file = "m_weight.npz"} {
  func.func @main(%arg0: tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32> {
    %0 = "top.Input"(%arg0) : (tensor<1x6x5x5xf32>) -> tensor<1x6x5x5xf32> loc("x")
    %1 = "top.Weight"() : () -> tensor<6xf32> loc("mean")
    %2 = "top.Weight"() : () -> tensor<6xf32> loc("var")
    %3 = "top.Weight"() : () -> tensor<6xf32> loc("gamma")
    %4 = "top.Weight"() : () -> tensor<6xf32> loc("beta")
    %5 = "top.Weight"() : () -> tensor<1x6x1x1xf32> loc("a")
    %6 = "top.Weight"() : () -> tensor<1x6x1x1xf32> loc("b")
    %7 = "top.BatchNorm"(%0, %1, %2, %3, %4) {epsilon = 1.000000e-03 : f64, do_relu = true} : (tensor<1x6x5x5xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>) -> tensor<1x6x5x5xf32> loc("bn")
    %8 = "top.Scale"(%7, %5, %6) : (tensor<1x6x5x5xf32>, tensor<1x6x1x1xf32>, tensor<1x6x1x1xf32>) -> tensor<1x6x5x5xf32> loc("sc")
    return %8 : tensor<1x6x5x5xf32>
  }
}
"""


def affine_params() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(5)
    gamma = rng.uniform(0.3, 2.0, C) * np.array([1, -1, 1, 0, -1, 1])  # negative and zero channels
    return {k: np.asarray(v, np.float32) for k, v in {
        "mean": rng.standard_normal(C) * 0.3, "var": rng.uniform(0.2, 2.0, C), "gamma": gamma,
        "beta": rng.standard_normal(C) * 0.3, "a": rng.uniform(-2, 2, (1, C, 1, 1)),
        "b": rng.standard_normal((1, C, 1, 1)) * 0.5}.items()}


def lowered_affine(d, asymmetric: bool):
    """The BN -> Scale module calibrated (minmax, 4 samples) and lowered to INT8."""
    (d / "m.mlir").write_text(AFFINE_MLIR)
    np.savez(d / "m_weight.npz", **affine_params())
    return top_int8_module(load_module(d / "m.mlir"), "x", SHAPE, d, chip="bm1684x", samples=4, asymmetric=asymmetric)


def ref_affine(x: np.ndarray, a: list[float], b: list[float], q_in, q_out, dtype, relu: bool) -> np.ndarray:
    """y = x a[c] + b[c] in Conv's INT8 form, from its definition: filter sign(a) 127 at
    s_w = |a| / 127 (1 / 127 where a = 0: a zero filter), bias round_half_away(b / (s_w s_in)),
    acc = (x - zp_in) filter + bias, y = sat(round_half_up(acc m / 2^n) + zp_out), then the relu."""
    (s_in, zp_in), (s_out, zp_out) = ((Fraction(s), zp) for s, zp in (q_in, q_out))
    lo, hi = int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)
    y = np.zeros(x.shape, np.int64)
    for c in range(x.shape[1]):
        s_w = Fraction(abs(a[c])) / 127 if a[c] else Fraction(1, 127)
        w = 127 * (a[c] > 0) - 127 * (a[c] < 0)
        bias = ref_round(Fraction(b[c]) / (s_w * s_in), "HalfAwayFromZero")
        m, n = ref_scale_and_shift(float(s_w * s_in / s_out))
        for i, j in itertools.product(range(x.shape[2]), range(x.shape[3])):
            acc = (int(x[0, c, i, j]) - zp_in) * w + bias
            v = max(lo, min(hi, ref_round(Fraction(acc * m, 2**n), "HalfUp") + zp_out))
            y[0, c, i, j] = max(v, zp_out) if relu else v
    return y


@pytest.mark.parametrize("asymmetric", [False, True])
def test_batchnorm_and_scale_int8_are_the_formula(tmp_path, asymmetric):
    top = lowered_affine(tmp_path, asymmetric)
    assert [op.name for op in top.main_func().walk() if op.name.startswith("tpu.")] == \
        ["tpu.Cast", "tpu.Conv2D", "tpu.Conv2D", "tpu.Cast"]
    q = int8_params(top)
    got = run(top, {"x": np.random.default_rng(9).standard_normal(SHAPE).astype(np.float32) * 1.5}, keep_all=True)
    p = affine_params()
    scale = p["gamma"].astype(np.float64) / np.sqrt(p["var"].astype(np.float64) + EPS)
    a_bn = [float(v) for v in scale.astype(np.float32)]
    b_bn = [float(v) for v in (p["beta"] - p["mean"].astype(np.float64) * scale).astype(np.float32)]
    assert q["bn"][1] == 0  # a relu output: zero point 0 in both modes (uint8 when asymmetric)
    want_bn = ref_affine(got["x_int8"], a_bn, b_bn, q["x_int8"], q["bn"], got["bn"].dtype, relu=True)
    assert np.array_equal(got["bn"], want_bn)
    assert (got["bn"] == 0).mean() > 0.3  # the relu clamps: the zero channel's bias and negative sums
    want_sc = ref_affine(got["bn"], [float(v) for v in p["a"].ravel()], [float(v) for v in p["b"].ravel()],
                         q["bn"], q["sc_int8"], got["sc_int8"].dtype, relu=False)
    assert np.array_equal(got["sc_int8"], want_sc)
    assert got["bn"].dtype == (np.uint8 if asymmetric else np.int8)


@pytest.mark.parametrize("asymmetric", [False, True])
def test_densenet_block_deploys_int8_without_f32_scales(tmp_path, capsys, asymmetric):
    """BN -> ReLU -> Conv in every dense layer and the transition (nothing to fold them into) were
    tpu.Scale in F32 with Casts around each; now every op is int8 and the .bmodel is bit-exact."""
    model = densenet(input_size=16, num_classes=4, growth=4, blocks=(2, 1), init_channels=8)
    assert deploy_int8(tmp_path, "n", model, lambda rng: {"input": rng.random((1, 3, 16, 16), dtype=np.float32)},
                       "0.99,0.9", *(["--asymmetric"] if asymmetric else [])) == 0
    assert len(re.findall(r'"top.BatchNorm"', (tmp_path / "n.mlir").read_text())) == 5  # model_transform's module
    err = capsys.readouterr().err
    assert "1 outputs of the cmodel equal the Tpu interpreter's (INT8, bit-exact)" in err, err
    mode = "asym" if asymmetric else "sym"
    tpu = load_module(tmp_path / f"n_bm1684x_int8_{mode}_tpu.mlir")
    ops = [op for op in tpu.main_func().walk() if op.name.startswith("tpu.") and op.name != "tpu.Cast"]
    assert "tpu.Scale" not in {op.name for op in ops}
    assert all("quant.uniform" in str(op.results[0].type) for op in ops), [op.name for op in ops]
    assert sum(op.name == "tpu.Conv2D" and op.attributes["group"].value.data > 1 for op in ops) == 5
    got = np.load(tmp_path / f"n_bm1684x_int8_{mode}_tpu_outputs.npz")["output"]
    want = np.load(tmp_path / "n_top_outputs.npz")["output"]
    print(f"densenet INT8 {mode}: output cosine with Top {cosine(got, want):.6f}")
    assert cosine(got, want) >= 0.99

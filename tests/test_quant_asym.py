"""Asymmetric INT8: uint8/int8 activations with zero points.

* The quantization parameters against TPU-MLIR's getScaleAndZeroPoint written here with fractions.
* Kernels with zero points (Conv2D with pads, Add, AvgPool, Lut, RequantInt, Casts) against
  references written here with Python ints and fractions: (x - zp_in) in the sums, pads are real
  zeros, + zp_out, saturated to the storage range.
* ResNet-18-shaped model calibrated on random samples, deployed with --asymmetric: output cosine
  with Top >= 0.99, the file is NAME_bm1684x_int8_asym_tpu.mlir, its Conv/Add/pools are quantized
  with uint8 where the range is >= 0.
* Second opinion: onnxruntime's QDQ quantization with uint8 activations on the same ranges loses as
  much accuracy as we do (ResNet-18- and MobileNetV2-shaped).
"""

from __future__ import annotations

import collections
import itertools
from fractions import Fraction

import numpy as np
import onnx
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from tests.backend_support import compile_for
from tests.feature_tally import FeatureTally
from tests.models import resnet18
from tests.test_requant import ref_round
from tests.test_tpu_float import cosine, run, top_module
from tests.test_tpu_int8 import qdq_second_opinion, random_graphs
from tpudsl.backend import isa
from tpudsl.backend.bmodel import read_bmodel
from tpudsl.backend.cmodel import run_bmodel
from tpudsl.backend.codegen import without_instructions
from tpudsl.cli import model_deploy, model_transform
from tpudsl.dialects import make_context
from tpudsl.interp.kernel import KernelAttrs
from tpudsl.interp.kernels_tpu import TPU_KERNELS
from tpudsl.interp.requant import asymmetric_params
from tpudsl.ir.module import load_module, read_npz, save_module
from tpudsl.lowering.calibration import calibrate
from tpudsl.lowering.calibration_table import table_text
from tpudsl.passes import pass_class


def ref_params(lo: float, hi: float) -> tuple[Fraction, int, bool]:
    """getScaleAndZeroPoint on [min(lo, 0), max(hi, 0)]: qmin/qmax int8 when lo < 0, else uint8."""
    lo, hi = Fraction(min(lo, 0.0)), Fraction(max(hi, 0.0))
    qmin, qmax = (-128, 127) if lo < 0 else (0, 255)
    scale = (hi - lo) / (qmax - qmin)
    return scale, max(qmin, min(qmax, ref_round(qmin - lo / scale, "HalfAwayFromZero"))), lo < 0


@given(st.floats(-100, 100), st.floats(1e-3, 100), st.booleans())
def test_asymmetric_params_are_getscaleandzeropoint(lo, width, non_negative):
    lo = abs(lo) if non_negative else lo
    hi = lo + width
    scale, zp, signed = asymmetric_params(lo, hi)
    want_scale, want_zp, want_signed = ref_params(lo, hi)
    event("uint8" if not want_signed else "int8")
    assert signed == want_signed and zp == want_zp
    assert scale == pytest.approx(float(want_scale), rel=1e-15)


def attrs(values, out_dtype, zps, out_zp, scales=(None, None), shape=None):
    return KernelAttrs(values, [shape], [np.dtype(out_dtype)], scales, zero_points=(tuple(zps), out_zp))


def rq(acc: int, m: int, n: int, mode: str, zp: int, dtype) -> int:
    info = np.iinfo(dtype)
    return max(int(info.min), min(int(info.max), ref_round(Fraction(acc * m, 2**n), mode) + zp))


def test_conv2d_with_zero_points_is_the_formula():
    """Stored uint8 x with zp_in = 37 (pads are real zeros: (x - zp) = 0 there), int8 output
    with zp_out = -5."""
    rng = np.random.default_rng(21)
    x = rng.integers(0, 256, (1, 2, 4, 5)).astype(np.uint8)
    w = rng.integers(-127, 128, (3, 2, 3, 3)).astype(np.int8)
    bias = rng.integers(-3000, 3000, 3).astype(np.int32)
    mult, shift = [123457, 98765, 200001], [19, 18, 20]
    a = attrs({"kernel_shape": [3, 3], "strides": [1, 1], "pads": [1, 1, 1, 1], "group": 1, "dilations": [1, 1],
               "multiplier": mult, "rshift": shift, "round_mode": "HalfUp"}, np.int8, [37, 0, 0], -5)
    got = TPU_KERNELS["tpu.Conv2D"].run([x, w, bias], a)
    assert got.dtype == np.int8
    for c, i, j in itertools.product(range(3), range(4), range(5)):
        acc = int(bias[c])
        for ic, p, q in itertools.product(range(2), range(3), range(3)):
            r, s = i + p - 1, j + q - 1
            if 0 <= r < 4 and 0 <= s < 5:
                acc += (int(x[0, ic, r, s]) - 37) * int(w[c, ic, p, q])
        assert got[0, c, i, j] == rq(acc, mult[c], shift[c], "HalfUp", -5, np.int8), (c, i, j)


def test_add_avgpool_requant_with_zero_points_are_the_formulas():
    rng = np.random.default_rng(22)
    a8, b8 = rng.integers(-128, 128, (2, 3, 4)).astype(np.int8), rng.integers(0, 256, (1, 3, 4)).astype(np.uint8)
    got = TPU_KERNELS["tpu.Add"].run([a8, b8], attrs({"multipliers": [1234567, 765432], "rshifts": [21, 21]},
                                                      np.uint8, [-7, 100], 60))
    for idx in itertools.product(range(2), range(3), range(4)):
        acc = (int(a8[idx]) + 7) * 1234567 + (int(b8[0, idx[1], idx[2]]) - 100) * 765432
        assert got[idx] == rq(acc, 1, 21, "HalfAwayFromZero", 60, np.uint8), idx
    x = rng.integers(0, 256, (1, 2, 5, 5)).astype(np.uint8)
    got = TPU_KERNELS["tpu.Pool2D"].run([x], attrs(
        {"pool_mode": "Avg", "kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": True,
         "multiplier": 1000003, "rshift": 23, "round_mode": "HalfAwayFromZero"}, np.uint8, [20], 3, shape=(1, 2, 3, 3)))
    for c, i, j in itertools.product(range(2), range(3), range(3)):
        acc = sum(int(x[0, c, r, q]) - 20 for r in range(2 * i - 1, 2 * i + 2) for q in range(2 * j - 1, 2 * j + 2)
                  if 0 <= r < 5 and 0 <= q < 5)
        assert got[0, c, i, j] == rq(acc, 1000003, 23, "HalfAwayFromZero", 3, np.uint8), (c, i, j)
    got = TPU_KERNELS["tpu.RequantInt"].run([x], attrs({"multiplier": [3], "rshift": [1], "quant_mode": "MultiplierShift",
                                                         "round_mode": "HalfToEven"}, np.int8, [128], -2))
    assert [int(v) for v in got.ravel()] == [rq(int(v) - 128, 3, 1, "HalfToEven", -2, np.int8) for v in x.ravel()]


def test_casts_and_lut_with_zero_points():
    x = np.array([-1.0, -0.01, 0.0, 0.3, 2.0, 5.0], np.float32)
    got = TPU_KERNELS["tpu.Cast"].run([x], attrs({}, np.uint8, [0], 0, scales=(None, 0.01)))
    assert got.dtype == np.uint8 and list(got) == [0, 0, 0, 30, 200, 255]  # round(x / 0.01), saturated to [0, 255]
    got = TPU_KERNELS["tpu.Cast"].run([x], attrs({}, np.int8, [0], -20, scales=(None, 0.02)))
    assert list(got) == [-70, -20, -20, -5, 80, 127]  # round(x / 0.02) - 20, saturated to [-128, 127]
    back = TPU_KERNELS["tpu.Cast"].run([got], attrs({}, np.float32, [-20], 0, scales=(0.02, None)))
    assert list(back) == [np.float32((int(q) + 20) * 0.02) for q in got]
    q = np.array([0, 1, 200, 255], np.uint8)
    table = np.arange(256).astype(np.uint8)[::-1].copy()
    assert list(TPU_KERNELS["tpu.Lut"].run([q, table], attrs({}, np.uint8, [0, 0], 0))) == [255, 254, 55, 0]


# ---- models -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def resnet_deployed(tmp_path_factory):
    """ResNet-18-shaped, calibrated on 16 random samples, deployed with --asymmetric on bm1684x: the
    Tpu check, then the .bmodel and its third comparison (bit-exact, the records with zero points)."""
    d = tmp_path_factory.mktemp("asym")
    model = resnet18(input_size=32, num_classes=10, width=8)
    onnx.save(model, d / "r.onnx")
    np.savez(d / "in.npz", input=np.random.default_rng(7).random((1, 3, 32, 32), dtype=np.float32))
    model_transform.run(["--model_name", "r", "--model_def", str(d / "r.onnx"), "--mlir", str(d / "r.mlir"),
                         "--test_input", str(d / "in.npz")])
    rng = np.random.default_rng(0)
    feeds = {str(i): {"input": rng.random((1, 3, 32, 32), dtype=np.float32)} for i in range(16)}
    result = calibrate(str(d / "r.mlir"), list(feeds), feeds.__getitem__)
    (d / "table").write_text(table_text(result.table("kld"), 2048, 16))
    assert model_deploy.run(["--mlir", str(d / "r.mlir"), "--quantize", "INT8", "--asymmetric", "--processor",
                             "bm1684x", "--calibration_table", str(d / "table"), "--model", str(d / "r.bmodel"),
                             "--test_input", str(d / "r_in_f32.npz"), "--compare_all", "--tolerance", "0.95,0.7"]) == 0
    assert (d / "r.bmodel").exists()
    return model, d


def test_resnet18_asymmetric_close_to_top(resnet_deployed):
    model, d = resnet_deployed
    path = d / "r_bm1684x_int8_asym_tpu.mlir"
    assert path.exists() and not (d / "r_bm1684x_int8_sym_tpu.mlir").exists()
    tpu = load_module(path)
    assert "module.asymmetric = true" in path.read_text()
    kinds = {}
    for op in tpu.main_func().walk():
        if op.name in ("tpu.Conv2D", "tpu.Add", "tpu.Pool2D", "tpu.MatMul"):
            kinds.setdefault(op.name, set()).add(str(op.results[0].type).split("quant.uniform<")[1][:2])
    # every Conv2D/Add/pool/MatMul quantized (no fallback); ReLU outputs (range >= 0) are uint8
    assert set(kinds) == {"tpu.Conv2D", "tpu.Add", "tpu.Pool2D", "tpu.MatMul"}, kinds
    assert "u8" in kinds["tpu.Conv2D"] and "u8" in kinds["tpu.Pool2D"], kinds
    assert without_instructions(tpu.module) is None
    top = top_module(model)
    rng = np.random.default_rng(99)  # not the calibration samples
    for _ in range(2):
        feed = {"input": rng.random((1, 3, 32, 32), dtype=np.float32)}
        assert cosine(run(tpu, feed)["output"], run(top, feed)["output"]) >= 0.99


def test_resnet18_asymmetric_bmodel_is_bit_exact(resnet_deployed):
    """The third comparison again, here: the cmodel's output equals the Tpu interpreter's bit for bit,
    and the zero-point records (uint8 ReLU outputs, int8 tensors with zero points) are in the stream."""
    _, d = resnet_deployed
    bm = read_bmodel(str(d / "r.bmodel"))
    kinds = collections.Counter(type(r).__name__ for r in isa.decode(bm.commands))
    assert kinds["BdcConvQZ"] == 20 and kinds["BdcBinaryQZ"] == 8 and kinds["BdcMatMulQZ"] == 1, kinds
    assert kinds["BdcRequantZ"] >= 2 and kinds["BdcPoolQZ"] >= 1, kinds  # the casts; the global average pool
    got, _ = run_bmodel(bm, read_npz(str(d / "r_in_f32.npz")))
    want = np.load(d / "r_bm1684x_int8_asym_tpu_outputs.npz")["output"]
    assert np.array_equal(got["output"], want)


@pytest.mark.parametrize("name", ["resnet18", "mobilenetv2"])
def test_asymmetric_error_is_onnxruntime_qdqs(name, tmp_path, calibrated_cnn):
    """Second opinion: onnxruntime's quantize_static (QDQ, asymmetric uint8 activations,
    per-channel symmetric int8 weights) with every activation range overridden to our table's
    [min(lo, 0), max(hi, 0)]: the same grid as ours (an int8 tensor with zero point zp is ORT's uint8
    one with zp + 128). Over 8 inputs that are not the calibration samples our mean cosine with
    Top is within 0.005 of its mean cosine with the float model."""
    cnn = calibrated_cnn(name)  # 32 random samples, KLD (tests/calibrated_cnn.py), as test_tpu_int8's
    tpu = load_module(cnn.mlir)
    ctx = make_context()
    pass_class("import-calibration-table")(file=str(cnn.table_path), asymmetric=True).apply(ctx, tpu.module)
    pass_class("processor-assign")(chip="bm1684x", mode="INT8").apply(ctx, tpu.module)
    pass_class("convert-top-to-tpu")(asymmetric=True).apply(ctx, tpu.module)
    ranges = {k: (min(e.min, 0.0), max(e.max, 0.0)) for k, e in cnn.table.items()}
    ours, theirs = qdq_second_opinion(cnn.model, tpu, cnn.top, cnn.feeds, ranges, tmp_path, symmetric=False)
    assert abs(np.mean(ours) - np.mean(theirs)) <= 0.005, (ours, theirs)


def test_random_graphs_asymmetric_close_to_top(tmp_path_factory):
    """tests/test_tpu_int8.py's random conv/pool/add/mul/concat/activation graphs in asymmetric
    INT8 (minmax over 16 random samples and the input it then runs): output cosine >= 0.99 with
    Top; uint8 and int8 tensors with a zero point both occur in most examples: the input (values in
    [0, 1)) is uint8 in every example, and half of them start with a conv (mixed signs) and a
    LeakyRelu (alpha 0.1: its negative side a tenth of its positive one), int8 with a negative zero
    point by construction.

    The run input is calibrated too, so that every tensor's range covers it: this checks the
    lowering, not how well 16 samples predict a 17th. Calibrated on the 16 alone, a 17th input's
    5-value output leaves their range in about 2 draws of 17 (its largest beats the 16 others' with
    chance 1/17, its least too) and is clipped there: cosine 0.989 (concat, conv_dw, maxpool: an
    output of -1.553 against a range from -1.134) and 0.977 in 400 draws, 0.9999 and 1.0000 with
    the run input calibrated; the least of 500 draws calibrated so: 0.9993."""
    tally = FeatureTally(("uint8", "int8 with zero point"))

    def check(case):
        layers, model = case
        d = tmp_path_factory.mktemp("g")
        top = top_module(model)  # the float reference below, and the module calibrated and lowered
        save_module(top, d / "m.mlir")
        rng = np.random.default_rng(0)
        feed = {"input": np.random.default_rng(123).random((1, 4, 8, 8), dtype=np.float32)}
        feeds = {str(i): {"input": rng.random((1, 4, 8, 8), dtype=np.float32)} for i in range(16)} | {"run": feed}
        result = calibrate(str(d / "m.mlir"), list(feeds), feeds.__getitem__, need_histograms=False)
        (d / "table").write_text(table_text(result.table("minmax"), 2048, len(feeds)))
        tpu = load_module(d / "m.mlir")
        ctx = make_context()
        pass_class("import-calibration-table")(file=str(d / "table"), asymmetric=True).apply(ctx, tpu.module)
        pass_class("processor-assign")(chip="bm1684x", mode="INT8").apply(ctx, tpu.module)
        pass_class("convert-top-to-tpu")(asymmetric=True).apply(ctx, tpu.module)
        assert cosine(run(tpu, feed)["output"], run(top, feed)["output"]) >= 0.99, layers
        text = str(tpu.module)
        tally.record(kind for kind, present in (("uint8", "quant.uniform<u8" in text),
                                                ("int8 with zero point", ":-" in text)) if present)

    examples = max(10, settings.default.max_examples // 10)
    settings(max_examples=examples // 2)(given(random_graphs())(check))()
    settings(max_examples=examples - examples // 2)(given(random_graphs(("conv", "leaky")))(check))()
    tally.assert_each_in(1 / 2)


def test_a_cast_and_an_add_with_a_zero_point_compile_bit_exact(tmp_path):
    """A Cast and an Add with a zero point have records (BdcRequantZ, BdcBinaryQZ): nothing is left
    without instructions, and the cmodel computes what the Tpu interpreter computes."""
    q = "tensor<1x4x!quant.uniform<i8:f32, 1.000000e-02:-3>>"
    (tmp_path / "m.mlir").write_text(f'''module attributes {{module.name = "m", module.state = "TPU_LOWERED", module.mode = "INT8", module.chip = "bm1684x"}} {{
  func.func @main(%arg0: tensor<1x4xf32>) -> tensor<1x4xf32> {{
    %0 = "top.Input"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("x")
    %1 = "tpu.Cast"(%0) : (tensor<1x4xf32>) -> {q} loc("x_int8")
    %2 = "tpu.Add"(%1, %1) {{multipliers = [1, 1], rshifts = [0, 0]}} : ({q}, {q}) -> {q} loc("a")
    %3 = "tpu.Cast"(%2) : ({q}) -> tensor<1x4xf32> loc("y")
    return %3 : tensor<1x4xf32>
  }}
}}
''')
    top = load_module(tmp_path / "m.mlir")
    assert without_instructions(top.module) is None
    feed = {"x": np.linspace(-2, 2, 4, dtype=np.float32).reshape(1, 4)}
    want = run(top, feed)["y"]
    bm = compile_for(top, "bm1684x", str(tmp_path / "m.bmodel"))
    assert {type(r).__name__ for r in isa.decode(bm.commands)} >= {"BdcRequantZ", "BdcBinaryQZ"}
    assert np.array_equal(run_bmodel(bm, feed)[0]["y"], want)

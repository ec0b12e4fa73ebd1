"""Grouped INT8 Deconv (docs/quantization.md, "INT8 lowering"): the filter per output channel
(group, column) as plain i8, the Deconv summing into int32, a tpu.RequantIntAxis per channel.
The constants are recomputed here with fractions (tests/test_requant.py's references), the
accuracy is the Top interpreter's float result's (cosine), as for the other INT8 forms."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import onnx
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.feature_tally import FeatureTally
from tests.models.builder import GraphBuilder
from tests.test_requant import ref_round, ref_scale_and_shift
from tests.test_tpu_float import cosine, run, top_module
from tpudsl.dialects import make_context
from tpudsl.interp.module_interpreter import result_names
from tpudsl.ir.module import load_module, save_module
from tpudsl.lowering.calibration import calibrate
from tpudsl.lowering.calibration_table import table_text
from tpudsl.passes import pass_class


def deconv_model(group: int, ic: int, ocg: int, seed: int, relu: bool = False, strides=(2, 2), pads=(0, 0, 0, 0),
                 size: int = 5):
    """Conv -> grouped ConvTranspose (with bias; each output channel's filter a different size, so
    per-channel scales matter) [-> Relu]."""
    b = GraphBuilder("gdec", seed=seed)
    x = b.input("input", [1, ic, size, size])
    c = b.conv(x, "c", ic, ic, 3)
    icg = ic // group
    w = b.rng.standard_normal((ic, ocg, 3, 3)).astype(np.float32)
    w *= np.exp(b.rng.uniform(-3, 1, (group, 1, ocg, 1, 1))).astype(np.float32).repeat(icg, 1).reshape(ic, ocg, 1, 1)
    y = b.node("ConvTranspose", [c, b.const("dec.weight", w), b.small("dec.bias", (group * ocg,))], "dec",
               kernel_shape=[3, 3], strides=list(strides), pads=list(pads), group=group)
    b.output(b.relu(y, "out") if relu else y)
    return b.model()


def input_shape(model) -> list[int]:
    return [dim.dim_value for dim in model.graph.input[0].type.tensor_type.shape.dim]


def lowered(model, d, samples: int = 16, run_feed: dict | None = None):
    """INT8 lowering calibrated (minmax) on `samples` random inputs, and on `run_feed` too when given."""
    top = top_module(model)
    save_module(top, d / "m.mlir")
    shape = input_shape(model)
    rng = np.random.default_rng(0)
    feeds = {str(i): {"input": rng.standard_normal(shape).astype(np.float32)} for i in range(samples)}
    if run_feed is not None:
        feeds["run"] = run_feed
    result = calibrate(str(d / "m.mlir"), list(feeds), feeds.__getitem__, need_histograms=False)
    table = result.table("minmax")
    (d / "table").write_text(table_text(table, 2048, len(feeds)))
    top = load_module(d / "m.mlir")
    ctx = make_context()
    pass_class("import-calibration-table")(file=str(d / "table"), asymmetric=False).apply(ctx, top.module)
    pass_class("processor-assign")(chip="bm1684x", mode="INT8").apply(ctx, top.module)
    pass_class("convert-top-to-tpu")().apply(ctx, top.module)
    top.module.verify()
    return top, {k: e.threshold for k, e in table.items()}, shape


def ops_by_name(top):
    return {name: op for op in top.main_func().walk() for name in result_names(op)}


def test_grouped_deconv_constants_are_the_formulas(tmp_path):
    group, ic, ocg = 2, 4, 3
    model = deconv_model(group, ic, ocg, seed=4)
    weights = {t.name: np.asarray(onnx.numpy_helper.to_array(t)) for t in model.graph.initializer}
    top, th, _ = lowered(model, tmp_path)
    ops = ops_by_name(top)
    rq, acc = ops["dec_int8"], ops["dec_int32"]  # an output: its int8 op is `<name>_int8`, the Cast back to f32 `dec`
    assert rq.name == "tpu.RequantIntAxis" and acc.name == "tpu.Deconv"
    assert str(acc.results[0].type) == "tensor<1x6x11x11xi32>"
    s_in, s_out = (Fraction(float(np.float32(th[k]))) / 127 for k in ("c", "dec"))
    w, bias = weights["dec.weight"], weights["dec.bias"]
    icg = ic // group
    filt = top.weights[acc.operands[1].owner.location.desc.data]
    bias_q = top.weights[acc.operands[2].owner.location.desc.data].ravel()
    quant = top.weights[rq.operands[1].owner.location.desc.data].reshape(-1, 3)
    for g in range(group):
        for j in range(ocg):
            c = g * ocg + j
            block = w[g * icg:(g + 1) * icg, j]
            s_w = Fraction(float(np.abs(block).max())) / 127
            # quantize divides in float64 (docs/quantization.md), then rounds half away from zero
            want = [max(-127, min(127, ref_round(Fraction(float(v) / float(s_w)), "HalfAwayFromZero")))
                    for v in block.ravel()]
            assert filt[g * icg:(g + 1) * icg, j].ravel().tolist() == want, c
            s_w = Fraction(float(s_w))  # the lowering holds scales as doubles
            assert int(bias_q[c]) == ref_round(Fraction(float(bias[c])) / Fraction(float(s_w * Fraction(float(s_in)))),
                                               "HalfAwayFromZero"), c
            m, n = ref_scale_and_shift(float(s_w * s_in / s_out))
            assert quant[c].tolist() == [m, -n, 0], c


@st.composite
def grouped_cases(draw, group: int, depthwise: bool):
    """A Deconv of `group` groups, depthwise (4 groups of one input and one output channel each) if asked."""
    ic = 4 if depthwise else group * draw(st.integers(1, 2))
    ocg = 1 if depthwise else draw(st.integers(1, 3))
    strides = draw(st.sampled_from([(1, 1), (2, 2), (2, 1)]))
    pads = draw(st.sampled_from([(0, 0, 0, 0), (1, 1, 1, 1), (1, 0, 0, 1)]))
    return group, ic, ocg, strides, pads, draw(st.booleans()), draw(st.integers(0, 2**16))


# (group, depthwise) of each run, a quarter of the examples each
RUNS = ((1, False), (2, False), (4, False), (4, True))


def test_random_grouped_deconvs_close_to_top(tmp_path_factory):
    """Random grouped (depthwise too) transposed convolutions, calibrated (minmax) on 16 samples and
    the input they then run: INT8 output cosine >= 0.99 with Top (or both outputs all zero: a Relu
    that cuts everything, where cosine is undefined); groups > 1 (int32 Deconv + RequantIntAxis) in at
    least half of the examples, depthwise in a fifth (RUNS: by construction).

    The run input is calibrated too (as test_quant_asym's random graphs): this checks the lowering,
    not how well 16 standard-normal samples bound a 17th. Calibrated on the 16 alone, 1 of 1,191
    draws fell to 0.9846 (its output 3.93 against a threshold of 2.63, clipped), 0.9998 with the run
    input calibrated (docs/testing.md, int8cal)."""
    tally = FeatureTally(("groups > 1", "depthwise"))

    def check(case):
        group, ic, ocg, strides, pads, relu, seed = case
        model = deconv_model(group, ic, ocg, seed, relu, strides, pads)
        feed = {"input": np.random.default_rng(seed + 1).standard_normal(input_shape(model)).astype(np.float32)}
        top, _, _ = lowered(model, tmp_path_factory.mktemp("g"), run_feed=feed)
        names = {op.name for op in top.main_func().walk()}
        assert ("tpu.RequantIntAxis" in names) == (group > 1), names
        got, want = run(top, feed), run(top_module(model), feed)
        out = model.graph.output[0].name
        both_zero = not np.any(got[out]) and not np.any(want[out])
        assert both_zero or cosine(got[out], want[out]) >= 0.99, case
        tally.record({*(["groups > 1"] if group > 1 else []),
                      *(["depthwise"] if group > 1 and ocg == 1 and ic == group else [])})

    examples = max(10, settings.default.max_examples // 10)
    for group, depthwise in RUNS:
        settings(max_examples=max(1, examples // len(RUNS)))(given(grouped_cases(group, depthwise))(check))()
    tally.assert_each_in(1 / 2, ["groups > 1"])
    tally.assert_each_in(1 / 5, ["depthwise"])

"""--weight-reorder (tpudsl/backend/weight_reorder.py) and the Tpu interpreter's reading of the
layout it writes (kernels_tpu.py): the packing against TPU-MLIR's filter_reorder index formula
written out here as loops, the interpreter's tpu.Conv2D on a reordered filter against the Top
kernel on the plain one (exactly equal), and a whole ResNet-18-shaped model per float mode and
chip computing the same tensors before and after the pass."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.feature_tally import FeatureTally
from tests.interp_ref import run_kernel, run_top, top_attrs
from tests.models import resnet18
from tests.test_tpu_float import lower, run, top_module
from tpudsl.backend.weight_reorder import reorder_filter
from tpudsl.dialects import make_context
from tpudsl.dialects.opdef import SPECS, AttrView
from tpudsl.interp.kernel import KernelAttrs
from tpudsl.interp.kernels_tpu import TPU_KERNELS
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import TopModule
from tpudsl.ir.parser import parse_module
from tpudsl.passes import pass_class


def reference_reorder(w: np.ndarray, p: int) -> np.ndarray:
    """TPU-MLIR's filter_reorder (ConvUtils.h): trans = o*new_ic*new_hw + b*new_hw + k*P + inner."""
    oc, icg, kh, kw = w.shape
    new_ic, new_hw = -(-icg // p), kh * kw * p
    flat = np.zeros(oc * new_ic * new_hw, w.dtype)
    src = w.reshape(-1)
    for o in range(oc):
        for b in range(new_ic):
            for k in range(kh * kw):
                for inner in range(p):
                    if b * p + inner >= icg:
                        break
                    flat[o * new_ic * new_hw + b * new_hw + k * p + inner] = src[o * icg * kh * kw + (b * p + inner) * kh * kw + k]
    return flat.reshape(1, oc, new_ic, new_hw)


@st.composite
def conv_problems(draw, every_case: bool = False):
    """every_case: grouped, several blocks of 8 channels, the last one padded."""
    group = draw(st.sampled_from([2, 3] if every_case else [1, 1, 2, 3]))
    icg = draw(st.sampled_from([c for c in range(9, 21) if c % 8]) if every_case else st.integers(1, 20))
    ocg = draw(st.integers(1, 3))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    p = 8 if every_case else draw(st.sampled_from([1, 8, 16, 32]))
    stride = draw(st.integers(1, 2))
    return group, icg, ocg * group, kh, kw, p, stride, draw(st.integers(0, 2**16))


def test_reorder_and_interpreter_property():
    """Packing matches TPU-MLIR's formula, and tpu.Conv2D on the packed filter, run directly and
    prepared (filter unpacked at init), equals top.Conv on the plain one bit for bit; padded last
    blocks, several blocks and groups each occur often: in every one of the last quarter of the
    examples, by construction."""
    tally = FeatureTally(("padded block", "several blocks", "grouped"))

    def check(problem):
        group, icg, oc, kh, kw, p, stride, seed = problem
        rng = np.random.default_rng(seed)
        w = rng.standard_normal((oc, icg, kh, kw)).astype(np.float32)
        packed = reorder_filter(w, p)
        np.testing.assert_array_equal(packed, reference_reorder(w, p))
        x = rng.standard_normal((1, icg * group, 4, 5)).astype(np.float32)
        attrs = {"kernel_shape": [kh, kw], "strides": [stride, stride], "pads": [0, 0, 0, 0], "group": group}
        (expected,) = run_top("top.Conv", [x, w, None], attrs)
        a = top_attrs("tpu.Conv2D", {**attrs, "with_bias": False})
        (got,) = run_kernel(TPU_KERNELS["tpu.Conv2D"], [x, packed, None], a)
        np.testing.assert_array_equal(got, expected)
        # Prepared as init does it: unpacked once, the input channel count read from the input type.
        a = KernelAttrs(a, a.out_shapes, a.out_dtypes, in_shapes=[x.shape, packed.shape, None])
        prepared = TPU_KERNELS["tpu.Conv2D"].prepare([None, packed, None], a)
        np.testing.assert_array_equal(prepared([x, packed, None], a), expected)
        tally.record(case for case, present in (("padded block", icg % p != 0), ("several blocks", icg > p),
                                                ("grouped", group > 1)) if present)

    every_case = settings.default.max_examples // 4
    settings(max_examples=settings.default.max_examples - every_case)(given(conv_problems())(check))()
    settings(max_examples=every_case)(given(conv_problems(every_case=True))(check))()
    tally.assert_each_in(1 / 8)


def convs(top):
    return [op for op in top.module.walk() if op.name == "tpu.Conv2D"]


@pytest.mark.parametrize("mode, chip, p", [("F32", "bm1684x", 1), ("F16", "bm1684x", 32), ("BF16", "bm1688", 16),
                                           ("F16", "tiny", 8)])
def test_resnet18_same_tensors_after_reorder(mode, chip, p):
    """Every tensor of a lowered ResNet-18-shaped model is exactly what it was before the pass, and
    every Conv's filter has the layout for the mode's P (the stem's 3 input channels: one padded block)."""
    model = resnet18(input_size=16, num_classes=10, width=8)
    feed = {"input": np.random.default_rng(0).random((1, 3, 16, 16), dtype=np.float32)}
    top = top_module(model)
    ctx = make_context()
    pass_class("processor-assign")(chip=chip, mode=mode).apply(ctx, top.module)
    pass_class("convert-top-to-tpu")().apply(ctx, top.module)
    before = run(top, feed, keep_all=True)
    pass_class("weight-reorder")().apply(ctx, top.module)
    top.module.verify()
    assert len(convs(top)) >= 17  # the stem, 16 block convs, the downsampling shortcuts
    for conv in convs(top):
        w_shape = conv.operands[1].type.get_shape()
        a = AttrView(conv.attributes, SPECS["tpu.Conv2D"])
        (kh, kw), oc = a["kernel_shape"], conv.results[0].type.get_shape()[1]
        icg = conv.operands[0].type.get_shape()[1] // a["group"]
        assert w_shape == (1, oc, -(-icg // p), kh * kw * p), (w_shape, p)
    after = run(top, feed, keep_all=True)
    assert sorted(after) == sorted(before)
    for name in before:
        np.testing.assert_array_equal(after[name], before[name], err_msg=name)


TPU_CONV = """module attributes {{module.mode = "F16"{chip}}} {{
  func.func @main(%arg0: tensor<1x4x3x3xf16>) -> tensor<1x2x3x3xf16> {{
    %0 = "top.Input"(%arg0) : (tensor<1x4x3x3xf16>) -> tensor<1x4x3x3xf16> loc("x")
    %1 = "top.Weight"() : () -> tensor<2x4x1x1x{ty}> loc("w")
    %2 = "top.None"() : () -> none loc("none")
    %3 = "tpu.Conv2D"(%0, %1, %2) {{kernel_shape = [1, 1], pads = [0, 0, 0, 0], strides = [1, 1], with_bias = false}} : (tensor<1x4x3x3xf16>, tensor<2x4x1x1x{ty}>, none) -> tensor<1x2x3x3xf16> loc("conv")
    return %3 : tensor<1x2x3x3xf16>
  }}
}}"""


@pytest.mark.parametrize("chip, ty, weights, message", [
    ("", "f16", True, "weight-reorder: module.chip is not set; run --processor-assign first"),
    (', module.chip = "bm1684x"', "i8", True,
     "weight-reorder: tpu.Conv2D 'conv': a i8 filter has no reordered layout yet (float filters only)"),
    (', module.chip = "bm1684x"', "f16", False,
     "weight-reorder: the weight data is not loaded (the module names no readable weight file)"),
])
def test_what_is_not_modelled_is_an_error(chip, ty, weights, message):
    module = parse_module(TPU_CONV.format(chip=chip, ty=ty), "m.mlir", make_context())
    top = TopModule(module, {"w": np.ones((2, 4, 1, 1), np.float16 if ty == "f16" else np.int8)}) if weights else None
    with pytest.raises(TpudslError) as info:
        pass_class("weight-reorder")().apply(make_context(), module)
    assert str(info.value) == f"error: {message}"
    assert top is None or top.weights["w"].shape == (2, 4, 1, 1)  # (keeps the weights alive: a weak reference)

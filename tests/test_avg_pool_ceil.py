"""Ceil-mode AveragePools through the flow: Top and Tpu interpreters against onnxruntime (ONNX's
divisor: the window's input elements, or with count_include_pad its explicit pads too, never
the ceil overhang), the .bmodel bit-exact against the Tpu interpreter in F16, BF16 and INT8 (docs/lowering.md,
"Ceil-mode pools")."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from tests.backend_support import (assert_bit_exact, assert_f32_close, compile_for, compile_int8, int8_bit_exact,
                                   int8_module, interpret, lowered)
from tests.frontend_support import make_model, run_ort
from tpudsl.backend import isa
from tpudsl.backend.cmodel import run_bmodel
from tpudsl.dialects.attrs import from_attr

# name: (input shape, kernel, strides, pads, count_include_pad). Every case's ceil rule adds a
# window the floor rule would not (its last window reaches past the padded end) but "no overhang".
CASES = {
    "no pads": ((1, 3, 8, 10), [3, 3], [2, 2], [0, 0, 0, 0], 0),
    "no pads, pads counted": ((1, 3, 8, 10), [3, 3], [2, 2], [0, 0, 0, 0], 1),
    "pads": ((1, 3, 8, 6), [3, 3], [2, 2], [1, 1, 1, 1], 0),
    "asymmetric kernel, rows only": ((1, 2, 9, 7), [2, 3], [2, 2], [0, 1, 0, 1], 0),
    "pads counted, no overhang": ((1, 3, 7, 7), [3, 3], [2, 2], [1, 1, 1, 1], 1),
    # the divisor counts the explicit pads but not the overhang: ceil_overhang
    "pads counted": ((1, 3, 8, 6), [3, 3], [2, 2], [1, 1, 1, 1], 1),
    # the tiny chip's local memory splits its rows: only the last slice's record leaves rows uncounted
    "pads counted, rows sliced": ((1, 4, 96, 30), [3, 3], [2, 2], [1, 1, 1, 1], 1),
}
OVERHANG_UNCOUNTED = {"pads counted", "pads counted, rows sliced"}  # lowered with ceil_overhang


def _model(case: str, ceil_mode: int = 1):
    """The one-pool model (ceil_mode 1 unless told) at opset 19 (onnxruntime's ceil rule is opset
    19's: the last window starts inside the input or its begin pad); onnx's shape inference gives
    its output shape."""
    shape, kernel, strides, pads, cip = CASES[case]
    node = helper.make_node("AveragePool", ["x"], ["pool"], kernel_shape=kernel, strides=strides, pads=pads,
                            count_include_pad=cip, ceil_mode=ceil_mode)
    return make_model([node], {"x": shape}, ["pool"], opset=19), "pool"


def _input(case: str, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(CASES[case][0]).astype(np.float32)


def _pool_op(top):
    (op,) = [op for op in top.main_func().body.block.ops if op.name == "tpu.Pool2D"]
    return op


def _inferred(model) -> list[int]:
    """The output's spatial sizes as onnx's shape inference gives them."""
    return [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim[2:]]


def test_cases_really_add_a_window():
    """Every case's ceil rule gives more windows than the floor rule along some axis, except the
    one that shows a ceil_mode without overhang: else the tests below would not test the overhang.
    onnx's shape inference (the output shape the flow is given) agrees with onnxruntime's; the
    floor rule's sizes are onnx's shape inference's with ceil_mode=0."""
    for case in CASES:
        model, out = _model(case)
        floor = _inferred(_model(case, ceil_mode=0)[0])
        ceil = list(run_ort(model, {"x": _input(case)})[out].shape[2:])
        assert _inferred(model) == ceil, case
        assert (ceil != floor) == (case != "pads counted, no overhang"), (case, ceil, floor)


@pytest.mark.parametrize("case", CASES)
def test_top_and_tpu_f32_match_onnxruntime(case):
    """The Top interpreter and the lowered F32 Tpu module against onnxruntime; the Tpu op has no
    ceil_mode, and ceil_overhang only where the divisor counts explicit pads next to an overhang."""
    from tests.test_tpu_float import top_module

    model, out = _model(case)
    x = _input(case)
    want = run_ort(model, {"x": x})[out]
    top = top_module(model)
    np.testing.assert_allclose(interpret(top, {"x": x})[out], want, rtol=1e-6, atol=1e-6)
    tpu = lowered(model, "F32")
    np.testing.assert_allclose(interpret(tpu, {"x": x})[out], want, rtol=1e-6, atol=1e-6)
    attrs = _pool_op(tpu).attributes
    assert "ceil_mode" not in attrs and ("ceil_overhang" in attrs) == (case in OVERHANG_UNCOUNTED)


@pytest.mark.parametrize("mode", ["F16", "BF16"])
@pytest.mark.parametrize("case", CASES)
def test_tpu_half_within_one_rounding_of_onnxruntime(case, mode):
    """F16/BF16: onnxruntime's mean of the inputs rounded to the type, rounded once more, is
    within one unit of the last place of the Tpu interpreter's (the exact mean rounded once)."""
    import ml_dtypes

    dt = np.float16 if mode == "F16" else ml_dtypes.bfloat16
    model, out = _model(case)
    x = _input(case).astype(dt).astype(np.float32)
    want = run_ort(model, {"x": x})[out].astype(dt).astype(np.float32)
    got = interpret(lowered(model, mode), {"x": x})[out]
    ulp = np.abs(np.spacing(want.astype(dt)).astype(np.float32))
    assert np.all(np.abs(got - want) <= ulp), float(np.abs(got - want).max())


@pytest.mark.parametrize("mode", ["F16", "BF16"])
@pytest.mark.parametrize("case", CASES)
def test_bmodel_half_bit_exact(case, mode, tmp_path):
    """The .bmodel (tiny chip) equals the Tpu interpreter bit for bit, and its pool record's end
    pads hold the overhang."""
    model, out = _model(case)
    tpu = lowered(model, mode)
    pads = from_attr(_pool_op(tpu).attributes["pads"])
    assert pads != CASES[case][3] or case == "pads counted, no overhang"
    x = _input(case)
    want = interpret(tpu, {"x": x})
    bm = compile_for(tpu, "tiny", str(tmp_path / "m.bmodel"))
    got, _ = run_bmodel(bm, {"x": x})
    assert_bit_exact(got[out], want[out], out)
    records = [r for r in isa.decode(bm.commands) if isinstance(r, isa.BdcPool)]
    assert records and all(r.mode == isa.POOL_MODES["Avg"] for r in records)
    assert any(isinstance(r, isa.BdcPoolCeil) for r in records) == (case in OVERHANG_UNCOUNTED)
    if case == "pads counted, rows sliced":  # the overhang row is the last slice's only
        assert len(records) > 1 and sorted(r.uncounted_b for r in records) == [0] * (len(records) - 1) + [1]


def _int8(case: str, tmp_path):
    model, out = _model(case)
    return int8_module(model, CASES[case][0], tmp_path), out


@pytest.mark.parametrize("case", sorted(set(CASES) - OVERHANG_UNCOUNTED))
def test_bmodel_int8_bit_exact(case, tmp_path):
    """INT8: the pool is an INT8 tpu.Pool2D (no F32 fallback), close to onnxruntime, and the .bmodel
    equals the Tpu interpreter bit for bit."""
    top, out = _int8(case, tmp_path)
    op = _pool_op(top)
    assert "!quant.uniform" in str(op.results[0].type) and "ceil_mode" not in op.attributes
    x = _input(case, seed=0)  # the first calibration sample: nothing saturates
    got = interpret(top, {"x": x})[out]
    want = run_ort(_model(case)[0], {"x": x})[out]
    # half a step of the input's scale and of the output's (symmetric minmax: max / 127), with margin
    bound = 0.6 * (np.abs(x).max() + np.abs(want).max()) / 127
    assert np.abs(got - want).max() <= bound, (float(np.abs(got - want).max()), bound)
    int8_bit_exact(top, {"x": _input(case)}, str(tmp_path / "m.bmodel"))


def test_pads_counted_with_overhang_int8_falls_back(tmp_path):
    """count_include_pad with explicit pads and an overhang: INT8 keeps it in F32 (docs/lowering.md):
    the Tpu interpreter close to onnxruntime (the input's int8 rounding), the .bmodel's F32 pool
    within F32's tolerance of it."""
    case = "pads counted"
    top, out = _int8(case, tmp_path)
    op = _pool_op(top)
    assert "!quant.uniform" not in str(op.results[0].type) and "ceil_overhang" in op.attributes
    x = _input(case, seed=0)
    want = interpret(top, {"x": x})[out]
    np.testing.assert_allclose(want, run_ort(_model(case)[0], {"x": x})[out], atol=0.6 * np.abs(x).max() / 127)
    got, _ = run_bmodel(compile_int8(top, str(tmp_path / "m.bmodel")), {"x": x})
    assert_f32_close(got[out], want, out)

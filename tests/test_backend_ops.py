"""The backend's Permute, Softmax, LayerNorm, Reshape/Squeeze/Unsqueeze and 3-D-left MatMul, one op
at a time on the `tiny` chip (4 lanes x 16 KiB), shapes chosen so the op is sliced: cmodel vs the
Tpu interpreter, F32 within 1e-5 relative, F16/BF16 within 4 ulps (docs/backend.md)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from onnx import numpy_helper

from tests.backend_support import assert_f32_close, compile_for, interpret, lowered
from tests.test_backend_cmodel import ULP_TYPES, Graph
from tpudsl.backend import isa
from tpudsl.backend.cmodel import run_bmodel
from tpudsl.ir.printer import print_module


def _transpose(g: Graph) -> str:
    return g.node("Transpose", ["x"], (40, 2, 3, 50), perm=[2, 0, 1, 3])


def _transpose_3d(g: Graph) -> str:
    r = g.node("Reshape", ["x", _ints(g, [1, 6, 2000])], (1, 6, 2000))
    return g.node("Transpose", [r], (1, 2000, 6), perm=[0, 2, 1])  # viewed as (1, 1, 2000, 6): sliced along H


def _softmax_c(g: Graph) -> str:
    return g.node("Softmax", ["x"], (2, 3, 40, 50), axis=1)


def _softmax_last(g: Graph) -> str:
    return g.node("Softmax", ["x"], (2, 3, 40, 50), axis=-1)


def _log_softmax(g: Graph) -> str:
    return g.node("LogSoftmax", ["x"], (2, 3, 40, 50), axis=2)


def _layer_norm_last(g: Graph) -> str:
    return g.node("LayerNormalization", ["x", g.const((50,)), g.const((50,))], (2, 3, 40, 50), axis=-1,
                  epsilon=1e-5)


def _layer_norm_hw(g: Graph) -> str:  # weight only; normalizes h x w per (n, c) of an (40, 2, 6, 10) input
    g.shapes["x"] = (40, 2, 6, 10)
    return g.node("LayerNormalization", ["x", g.const((6, 10))], (40, 2, 6, 10), axis=2, epsilon=1e-3)


def _linear_3d(g: Graph) -> str:
    r = g.node("Reshape", ["x", _ints(g, [6, 40, 50])], (6, 40, 50))
    return g.node("MatMul", [r, g.const((50, 7))], (6, 40, 7))


def _batched_matmul(g: Graph) -> str:  # a weight right side, sliced with its batches
    r = g.node("Reshape", ["x", _ints(g, [6, 40, 50])], (6, 40, 50))
    return g.node("MatMul", [r, g.const((6, 50, 7))], (6, 40, 7))


def _attention_scores(g: Graph) -> str:  # Q x K^T, K^T a Permute
    r = g.node("Reshape", ["x", _ints(g, [12, 20, 50])], (12, 20, 50))
    return g.node("MatMul", [r, g.node("Transpose", [r], (12, 50, 20), perm=[0, 2, 1])], (12, 20, 20))


def _gelu(g: Graph) -> str:  # as torch exports it: canonicalize fuses the chain into Active GELU
    sqrt2, one, half = (_scalar(g, v) for v in (np.sqrt(2.0), 1.0, 0.5))
    erf = g.node("Erf", [g.node("Div", ["x", sqrt2], X)], X)
    return g.node("Mul", [g.node("Mul", ["x", g.node("Add", [erf, one], X)], X), half], X)


def _scalar(g: Graph, value: float) -> str:
    name = f"c{len(g.inits)}"
    g.inits.append(numpy_helper.from_array(np.array(value, np.float32), name))
    return name


def _ints(g: Graph, values: list[int]) -> str:
    name = f"s{len(g.inits)}"
    g.inits.append(numpy_helper.from_array(np.array(values, np.int64), name))
    return name


CASES = {"transpose": _transpose, "transpose_3d": _transpose_3d, "softmax_c": _softmax_c,
         "softmax_last": _softmax_last, "log_softmax": _log_softmax, "layer_norm_last": _layer_norm_last,
         "layer_norm_hw": _layer_norm_hw, "linear_3d": _linear_3d, "batched_matmul": _batched_matmul,
         "attention_scores": _attention_scores, "gelu": _gelu}
X = (2, 3, 40, 50)


def _run(tmp_path, case: str, mode: str, edit=lambda top: None):
    rng = np.random.default_rng(11)
    g = Graph(rng)
    g.shapes["x"] = X
    out = CASES[case](g)
    x = g.shapes["x"]
    top = lowered(g.model({"x": x}, out), mode)
    edit(top)
    feed = {"x": rng.standard_normal(x).astype(np.float32)}
    want = interpret(top, feed)
    bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
    got, _ = run_bmodel(bm, feed)
    secs = [int(v) for v in re.findall(r"\b[nh]secs = (\d+) : i64", print_module(top.module))]
    return got[out], want[out], secs, isa.decode(bm.commands), top


@pytest.mark.parametrize("case", sorted(CASES))
def test_op_is_sliced_and_matches_tpu_interpreter_f32(tmp_path, case):
    got, want, secs, _, _ = _run(tmp_path, case, "F32")
    assert max(secs) > 1, f"{case} was not sliced: {secs}"
    assert_f32_close(got, want, case)


@pytest.mark.parametrize("mode", sorted(ULP_TYPES))
@pytest.mark.parametrize("case", ["transpose", "softmax_c", "layer_norm_last"])
def test_op_f16_bf16_within_4_ulps(tmp_path, case, mode):
    got, want, _, _, _ = _run(tmp_path, case, mode)
    scale = np.abs(want).max().astype(ULP_TYPES[mode])
    assert np.abs(got.astype(np.float64) - want).max() <= 4 * float(np.spacing(scale))


def test_permute_is_moves_only_with_a_transposing_load(tmp_path):
    """Permute has no BDC record: per slice, one GDMA load through the input's permuted strides and
    one contiguous store (strides in elements of the (2, 3, 40, 50) input: n 6000, c 2000, h 50)."""
    _, _, _, records, _ = _run(tmp_path, "transpose", "F32")
    assert all(r.ENGINE == "gdma" for r in records)
    loads = [r for r in records if type(r) is isa.GdmaLoad]
    assert {(r.gn, r.gc, r.gh, r.gw) for r in loads} == {(50, 6000, 2000, 1)}


def test_squeeze_unsqueeze_copy_in_global_memory(tmp_path):
    """Without canonicalize (which folds them into Reshape), tpu.Unsqueeze / tpu.Squeeze reach
    codegen: each is one global-to-global copy of the tensor's bytes."""
    from tpudsl.dialects import make_context
    from tpudsl.frontend.onnx_import import convert_onnx
    from tpudsl.passes import pass_class

    g = Graph(np.random.default_rng(12))
    g.shapes["x"] = (2, 3, 4, 5)
    axes = _ints(g, [2])
    u = g.node("Unsqueeze", ["x", axes], (2, 3, 1, 4, 5))
    out = g.node("Relu", [g.node("Squeeze", [u, axes], (2, 3, 4, 5))], (2, 3, 4, 5))
    top = convert_onnx(g.model({"x": (2, 3, 4, 5)}, out), "m")
    ctx = make_context()
    pass_class("shape-infer")().apply(ctx, top.module)
    pass_class("processor-assign")(chip="tiny", mode="F32").apply(ctx, top.module)
    pass_class("convert-top-to-tpu")().apply(ctx, top.module)
    names = [op.name for op in top.main_func().body.block.ops]
    assert "tpu.Squeeze" in names and "tpu.Unsqueeze" in names, names
    feed = {"x": np.random.default_rng(13).standard_normal((2, 3, 4, 5)).astype(np.float32)}
    want = interpret(top, feed)
    bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
    assert sum(type(r) is isa.GdmaCopy for r in isa.decode(bm.commands)) == 2
    got, _ = run_bmodel(bm, feed)
    np.testing.assert_array_equal(got[out], want[out])


def _read_k_transposed(top) -> None:
    """MatMul(Q, Permute(K)) -> MatMul(Q, K) {right_transpose}: what TPU-MLIR's fusion produces."""
    from xdsl.dialects.builtin import IntegerAttr, i1

    mm = next(op for op in top.main_func().body.block.ops if op.name == "tpu.MatMul")
    mm.operands[1] = mm.operands[1].owner.operands[0]
    mm.attributes["right_transpose"] = IntegerAttr(1, i1)


def test_batched_right_transposed_matmul_reads_k_through_strides(tmp_path):
    """Batched with right_transpose: several batches per record, the right side read per slice
    through transposing strides ((batch, k, 1, n) of a (12, 20, 50) K: 1000, 1, 0, 50)."""
    got, want, secs, records, _ = _run(tmp_path, "attention_scores", "F32", _read_k_transposed)
    assert max(secs) > 1
    assert_f32_close(got, want, "scores")
    matmuls = [r for r in records if isinstance(r, isa.BdcMatMul)]
    assert sum(r.batch for r in matmuls) == 12 and len(matmuls) > 1 and all(r.bias_addr == isa.NO_ADDR for r in matmuls)
    right_loads = [records[i - 1] for i, r in enumerate(records) if isinstance(r, isa.BdcMatMul)]  # left, right, bdc
    assert {(r.gn, r.gc, r.gh, r.gw) for r in right_loads} == {(1000, 1, 0, 50)}


def test_transformer_block_deploys_end_to_end(tmp_path):
    """tests/models' encoder layer (LayerNorm, 3-D linears, attention MatMuls, Softmax, Permute,
    Reshape, GELU): compiled for the tiny chip, the cmodel matches the Tpu interpreter."""
    from tests.models.transformer import transformer_block

    model = transformer_block(seq_len=8, d_model=16, num_heads=2, d_ff=32, gelu="none")
    top = lowered(model)
    feed = {"x": np.random.default_rng(14).standard_normal((1, 8, 16)).astype(np.float32)}
    want = interpret(top, feed)
    got, _ = run_bmodel(compile_for(top, "tiny", str(tmp_path / "m.bmodel")), feed)
    assert list(got) == list(want)
    for name, w in want.items():
        assert_f32_close(got[name], w, name)


@pytest.mark.parametrize("starts, ends, axes, steps", [
    ([1, 3], [3, 120], [1, 2], [1, 2]),  # channels 1..2, every other row from 3
    ([-100, 0, 1], [1000, 50, 4], [2, 3, 0], [1, 2, 1]),  # negative start, clamped end, strided w
])
def test_slice_is_a_strided_window_move(tmp_path, starts, ends, axes, steps):
    """Slice on the tiny chip, sliced: each part is one GDMA load from the window's first element
    with strides times the steps, and one store; the result is the Tpu interpreter's exactly."""
    rng = np.random.default_rng(15)
    g = Graph(rng)
    x = (4, 3, 120, 50)
    g.shapes["x"] = x
    want_shape = np.zeros(x)[tuple(slice(None) if d not in axes else
                                   slice(starts[axes.index(d)], ends[axes.index(d)], steps[axes.index(d)])
                                   for d in range(4))].shape
    out = g.node("Slice", ["x", *(_ints(g, v) for v in (starts, ends, axes, steps))], want_shape)
    top = lowered(g.model({"x": x}, out))
    feed = {"x": rng.standard_normal(x).astype(np.float32)}
    want = interpret(top, feed)
    bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
    assert [op.name for op in top.main_func().body.block.ops if op.name.startswith("tpu.")] == ["tpu.Slice"]
    assert max(int(v) for v in re.findall(r"\b[nh]secs = (\d+) : i64", print_module(top.module))) > 1
    assert all(r.ENGINE == "gdma" for r in isa.decode(bm.commands))
    got, _ = run_bmodel(bm, feed)
    np.testing.assert_array_equal(got[out], want[out])


def test_upsample_nearest_sliced_mid_repeat(tmp_path):
    """Resize nearest x(3, 2) (-> tpu.Upsample) of a (2, 3, 25, 30) tensor on the tiny chip: sliced
    along H into parts that start inside a row's repeat; the result is the Tpu interpreter's exactly."""
    rng = np.random.default_rng(16)
    g = Graph(rng)
    g.shapes["x"] = (2, 3, 25, 30)
    scales = numpy_helper.from_array(np.array([1, 1, 3, 2], np.float32), "scales")
    g.inits.append(scales)
    out = g.node("Resize", ["x", "", "scales"], (2, 3, 75, 60), mode="nearest", nearest_mode="floor",
                 coordinate_transformation_mode="asymmetric")
    top = lowered(g.model({"x": (2, 3, 25, 30)}, out))
    assert "tpu.Upsample" in [op.name for op in top.main_func().body.block.ops]
    feed = {"x": rng.standard_normal((2, 3, 25, 30)).astype(np.float32)}
    want = interpret(top, feed)
    bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
    ups = [r for r in isa.decode(bm.commands) if isinstance(r, isa.BdcUpsample)]
    assert len(ups) > 2 and any(r.skip for r in ups), ups
    got, _ = run_bmodel(bm, feed)
    np.testing.assert_array_equal(got[out], want[out])

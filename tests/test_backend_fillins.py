"""The records added for issue 11 (opcodes 60-66): tpu.Scale (BdcScale), the tpu.Active modes of
BdcActiveX, tpu.RMSNorm (BdcRMSNorm), reflect/symmetric tpu.Pad (BdcPadReflect), tpu.Gather with
computed indices (GdmaGather), Div/Pow3/Mod/Remainder/Compare (BdcBinaryX) and Clip/Reciprocal/Pow/
Pow2/CompareConst (BdcConstX), on the `tiny` chip (4 lanes x 16 KiB) so that ops are sliced:
cmodel == Tpu interpreter, F32 within 1e-5 relative, F16/BF16 bit-exact (docs/quantization.md)."""

from __future__ import annotations

import re
from pathlib import Path

import ml_dtypes
import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from tests.backend_compare import cmodel_matches_interpreter, compare
from tests.backend_support import assert_bit_exact, assert_f32_close, compile_for, interpret, lowered
from tests.feature_tally import FeatureTally
from tpudsl.backend import isa
from tpudsl.backend.cmodel import run_bmodel
from tpudsl.dialects import make_context
from tpudsl.dialects.opdef import SPECS, AttrView
from tpudsl.dialects.tpu import ACTIVE_COEFFS, ACTIVE_MODES, GELU_MODES
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import load_module
from tpudsl.ir.printer import print_module
from tpudsl.passes import pass_class

HALF = {"F16": np.float16, "BF16": ml_dtypes.bfloat16}
# The record each new Tpu form compiles to.
RECORD_OF = {"scale": isa.BdcScale, "active": isa.BdcActiveX, "rmsnorm": isa.BdcRMSNorm,
             "pad": isa.BdcPadReflect, "gather": isa.GdmaGather, "binary_x": isa.BdcBinaryX, "const_x": isa.BdcConstX,
             "select": isa.BdcSelect}


def build(nodes, inputs: dict[str, np.ndarray], out: str, inits: dict[str, np.ndarray], opset: int = 17):
    types = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64}
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(k, types[v.dtype], v.shape)
                                           for k, v in inputs.items()],
                              [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


# ONNX ops that lower to a BdcActiveX mode, with an input range inside their domain.
ONNX_ACTIVES = {"HardSigmoid": ({"alpha": 0.3, "beta": 0.4}, 17), "HardSwish": ({}, 17), "Elu": ({"alpha": 0.7}, 17),
                "Softplus": ({}, 17), "Softsign": ({}, 17), "Mish": ({}, 18), "Erf": ({}, 17), "Sin": ({}, 17),
                "Log": ({}, 17), "Round": ({}, 17), "Gelu": ({"approximate": "tanh"}, 20)}


@st.composite
def cases(draw, kind: str):
    """(kind, ONNX model, feed): one new op on a random input, big enough on tiny to be sliced."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    # Too big for tiny's 16 KiB lanes to hold one image's input and result at once (F16: 128 x 33 x 2
    # bytes each, 16.5 KiB): every op but the gather is sliced, by construction.
    shape = (draw(st.integers(1, 3)), draw(st.integers(1, 6)), draw(st.integers(128, 160)), draw(st.integers(33, 40)))
    x = rng.standard_normal(shape).astype(np.float32)
    if kind == "scale":
        c = shape[1]
        inits = {"g": rng.uniform(0.5, 2, c), "b": rng.standard_normal(c), "m": rng.standard_normal(c),
                 "v": rng.uniform(0.5, 2, c)}
        node = helper.make_node("BatchNormalization", ["x", "g", "b", "m", "v"], ["y"], epsilon=1e-3)
        return kind, build([node], {"x": x}, "y", {k: v.astype(np.float32) for k, v in inits.items()}), {"x": x}
    if kind == "active":
        op = draw(st.sampled_from(sorted(ONNX_ACTIVES)))
        attrs, opset = ONNX_ACTIVES[op]
        x = np.abs(x) + np.float32(0.05) if op == "Log" else x * np.float32(2)
        return kind, build([helper.make_node(op, ["x"], ["y"], **attrs)], {"x": x}, "y", {}, opset), {"x": x}
    if kind == "rmsnorm":
        rank = draw(st.integers(2, 4))
        x = x.reshape(-1, *shape[5 - rank:])  # the leading dims merged
        node = helper.make_node("RMSNormalization", ["x", "g"], ["y"], epsilon=draw(st.sampled_from([1e-5, 1e-2])))
        return kind, build([node], {"x": x}, "y", {"g": rng.standard_normal(x.shape[-1]).astype(np.float32)}, 23), \
            {"x": x}
    if kind == "pad":  # ONNX reflect needs pads below the dim's size; wrap (opset 19) too here
        pads = [draw(st.integers(0, min(3, d - 1))) for d in shape * 2]
        mode = draw(st.sampled_from(["reflect", "wrap"]))
        node = helper.make_node("Pad", ["x", "p"], ["y"], mode=mode)
        return kind, build([node], {"x": x}, "y", {"p": np.array(pads, np.int64)}, 19 if mode == "wrap" else 17), \
            {"x": x}
    if kind in ("binary_x", "const_x"):
        return (kind, *_elementwise_x_case(draw, kind, rng, x))
    if kind == "select":  # Where(x > b, x, y) with b and y broadcast along some dims or constant
        b, y = (rng.standard_normal([draw(st.sampled_from([d, 1])) for d in shape]).astype(np.float32) for _ in "by")
        feed, inits = {"x": x, "b": b}, {}
        if draw(st.booleans()):
            feed["y"] = y
        else:
            inits["y"] = np.array(draw(st.sampled_from([-1.5, 1e-3, 7.1])), np.float32)
        nodes = [helper.make_node("Greater", ["x", "b"], ["c"]), helper.make_node("Where", ["c", "x", "y"], ["out"])]
        return kind, build(nodes, feed, "out", inits), feed
    rank, axis = draw(st.integers(1, 4)), draw(st.integers(-1, 3))
    x = x.reshape(-1, *shape[5 - rank:])[:64]  # rank 1: one row, which tiny's layer-group cannot split
    axis = axis % rank
    idx = rng.integers(-x.shape[axis], x.shape[axis], draw(st.sampled_from([(3,), (2, 2), (1,)]))).astype(np.int64)
    node = helper.make_node("Gather", ["x", "i"], ["y"], axis=axis)
    return kind, build([node], {"x": x, "i": idx}, "y", {}), {"x": x, "i": idx}


def _elementwise_x_case(draw, kind: str, rng: np.random.Generator, x: np.ndarray):
    """An ONNX element-wise op of BdcBinaryX (two tensors, the second broadcast along some dims) or
    BdcConstX (a tensor and constants); values on a 0.5 grid so that comparisons tie."""
    x = np.round(x * 4) / np.float32(2)
    b = np.round(rng.standard_normal([draw(st.sampled_from([d, 1])) for d in x.shape]) * 4).astype(np.float32) / 2
    away = np.where(np.abs(b) < 0.5, np.float32(0.5), b)  # a divisor away from 0
    c = np.array(draw(st.sampled_from([-1.5, 0.5, 2.0])), np.float32)
    cast = helper.make_node("Cast", ["z"], ["y"], to=TensorProto.FLOAT)
    op = draw(st.sampled_from(["Div", "Pow", "Mod", "Remainder", "Less", "Equal", "GreaterOrEqual"] if kind == "binary_x"
                              else ["Clip", "Reciprocal", "Pow", "Pow2", "Greater", "Equal"]))
    if kind == "binary_x":
        feed = {"x": np.abs(x) + np.float32(0.5) if op == "Pow" else x,
                "b": away if op in ("Div", "Mod", "Remainder") else b}
        onnx_op, attrs = {"Remainder": ("Mod", {"fmod": 0}), "Mod": ("Mod", {"fmod": 1})}.get(op, (op, {}))
        if op in ("Less", "Equal", "GreaterOrEqual"):
            return build([helper.make_node(op, ["x", "b"], ["z"]), cast], feed, "y", {}), feed
        return build([helper.make_node(onnx_op, ["x", "b"], ["y"], **attrs)], feed, "y", {}), feed
    if op == "Clip":
        node = helper.make_node("Clip", ["x", "lo", "hi"], ["y"])
        return build([node], {"x": x}, "y", {"lo": np.array(-0.5, np.float32), "hi": np.array(1.0, np.float32)}), \
            {"x": x}
    if op == "Reciprocal":
        feed = {"x": np.where(np.abs(x) < 0.5, np.float32(0.5), x)}
        return build([helper.make_node("Reciprocal", ["x"], ["y"])], feed, "y", {}), feed
    if op in ("Pow", "Pow2"):  # x ** c on x > 0, c ** x on c > 0
        feed = {"x": np.abs(x) + np.float32(0.5) if op == "Pow" else x}
        ins = ["x", "c"] if op == "Pow" else ["c", "x"]
        return build([helper.make_node("Pow", ins, ["y"])], feed, "y", {"c": np.abs(c) if op == "Pow2" else c}), feed
    return build([helper.make_node(op, ["x", "c"], ["z"]), cast], {"x": x}, "y", {"c": c}), {"x": x}


# One property per kind (hypothesis's draws of a kind cluster when one strategy picks it), each
# case in F32, F16 and BF16 (the modes by construction): 4 cases per kind in CI, 96 runs in all.
@pytest.mark.parametrize("kind", sorted(RECORD_OF))
def test_new_records_match_the_tpu_interpreter(tmp_path, kind):
    """Random cases of the op, each in F32, F16 and BF16: the new record is the one compiled, and
    the ops computed in local memory (all but the gather, a global move) are sliced along N or H
    in every case, by construction (cases() makes them too big for one section)."""
    tally = FeatureTally(() if kind == "gather" else ("sliced",))

    @settings(max_examples=max(4, settings.default.max_examples // 48))
    @given(cases(kind))
    def check(case):
        _, model, feed = case
        for mode in ("F32", "F16", "BF16"):
            compiled = cmodel_matches_interpreter(lowered(model, mode), feed, mode, tmp_path / "m.bmodel")
            records = {type(r) for r in compiled.records}
            assert RECORD_OF[kind] in records, (kind, records)
            tally.record({"sliced"} if compiled.sliced else set())

    check()
    tally.assert_each_in(1)


# Every BdcActiveX mode from the Top op the lowering makes it from (the dialect's tables read backwards).
TOP_OF_MODE = {**{mode: (top, "") for top, mode in ACTIVE_MODES.items()},
               **{mode: ("top.GELU", f'{{approx_mode = "{approx}"}}') for approx, mode in GELU_MODES.items()},
               **{mode: (top, "{" + ", ".join(f"{n} = {0.3 + 0.2 * i} : f64" for i, n in enumerate(names)) + "}")
                  for top, (mode, names) in ACTIVE_COEFFS.items()}}
DOMAIN = {"LN": (0.05, 3), "RSQRT": (0.05, 3), "ARCCOS": (-0.95, 0.95), "ARCTANH": (-0.95, 0.95),
          "ARCSIN": (-0.95, 0.95), "ARCCOSH": (1.05, 4)}


def top_text(op: str, attrs: str, shape: tuple[int, ...], out_shape: tuple[int, ...] | None = None) -> str:
    t, u = (f"tensor<{'x'.join(map(str, s))}xf32>" for s in (shape, out_shape or shape))
    return (f'module attributes {{module.chip = "ALL", module.mode = "F32", module.name = "m", module.platform = '
            f'"ONNX", module.state = "TOP_F32", module.weight_file = "m_w.npz"}} {{\n'
            f"  func.func @main(%arg0: {t}) -> {u} {{\n"
            f'    %0 = "top.Input"(%arg0) : ({t}) -> {t} loc("x")\n'
            f'    %1 = "{op}"(%0) {attrs} : ({t}) -> {u} loc("y")\n'
            f"    return %1 : {u}\n  }}\n}}\n")


def lowered_text(path: Path, text: str, mode: str):
    path.write_text(text)
    top = load_module(path)
    ctx = make_context()
    pass_class("processor-assign")(chip="tiny", mode=mode).apply(ctx, top.module)
    pass_class("convert-top-to-tpu")().apply(ctx, top.module)
    return top


@pytest.mark.parametrize("mode", list(isa.ACTIVE_EXTRA_MODES))
def test_every_active_extra_mode(tmp_path, mode):
    """Each mode alone, sliced along N and H, F32; the record carries the mode's code."""
    op, attrs = TOP_OF_MODE[mode]
    shape = (2, 5, 40, 30)
    top = lowered_text(tmp_path / "m.mlir", top_text(op, attrs, shape), "F32")
    lo, hi = DOMAIN.get(mode, (-3, 3))
    feed = {"x": np.random.default_rng(len(mode)).uniform(lo, hi, shape).astype(np.float32)}
    want = interpret(top, feed)
    bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
    assert {r.mode for r in isa.decode(bm.commands) if isinstance(r, isa.BdcActiveX)} == {isa.ACTIVE_EXTRA_MODES[mode]}
    assert re.search(r"\bhsecs = [2-9]", print_module(top.module))
    got, _ = run_bmodel(bm, feed)
    assert_f32_close(got["y"], want["y"], mode)


def binary_top_text(op: str, attrs: str, x: tuple[int, ...], b: tuple[int, ...]) -> str:
    t, u = (f"tensor<{'x'.join(map(str, s))}xf32>" for s in (x, b))
    return (f'module attributes {{module.chip = "ALL", module.mode = "F32", module.name = "m", module.platform = '
            f'"ONNX", module.state = "TOP_F32", module.weight_file = "m_w.npz"}} {{\n'
            f"  func.func @main(%arg0: {t}, %arg1: {u}) -> {t} {{\n"
            f'    %0 = "top.Input"(%arg0) : ({t}) -> {t} loc("x")\n'
            f'    %1 = "top.Input"(%arg1) : ({u}) -> {u} loc("b")\n'
            f'    %2 = "{op}"(%0, %1) {attrs} : ({t}, {u}) -> {t} loc("y")\n'
            f"    return %2 : {t}\n  }}\n}}\n")


COMPARISONS = [k for k in isa.ELEMENTWISE_X_OPS if k not in ("Div", "Pow", "Mod", "Remainder", "PRelu", "Clip")]
# Top op and attributes of every BdcBinaryX / BdcConstX function, by (record, op key).
ELEMENTWISE_X_CASES = {
    **{("binary", k): (f"top.{k}", "") for k in ("Div", "Mod", "Remainder")},
    ("binary", "Div reversed"): ("top.Div", "{is_reverse = true}"),
    ("binary", "Pow"): ("top.Pow3", ""),
    ("binary", "PRelu"): ("top.PRelu", ""),
    **{("binary", k): ("top.Compare", f'{{mode = "{k}"}}') for k in COMPARISONS},
    ("const", "Clip"): ("top.Clip", "{min = -0.5 : f64, max = 1.0 : f64}"),
    ("const", "Div"): ("top.Reciprocal", "{const_val = 1.5 : f64, do_relu = true}"),
    ("const", "Pow"): ("top.Pow", "{exponent = 1.5 : f64}"),
    ("const", "Pow reversed"): ("top.Pow2", "{const_val = 1.5 : f64}"),
    **{("const", f"{k} inversed={inv}"): ("top.CompareConst", f'{{mode = "{k}", const_val = 0.5 : f64, '
                                                                  f"inversed = {str(inv).lower()}}}")
       for k in COMPARISONS for inv in (False, True) if not (k == "Not" and inv)},  # (const == 0: no tensor)
}


@pytest.mark.parametrize("record, key", list(ELEMENTWISE_X_CASES), ids=[f"{r} {k}" for r, k in ELEMENTWISE_X_CASES])
def test_every_elementwise_x_function(tmp_path, record, key):
    """Each function alone in F32, sliced, on values of a 0.5 grid (comparisons tie, And/Xor/Not
    see zeros); a binary op's second operand broadcast along C and W (PRelu's along N, H and W)."""
    op, attrs = ELEMENTWISE_X_CASES[(record, key)]
    shape, bshape = (2, 5, 40, 30), (1, 5, 1, 1) if key == "PRelu" else (2, 1, 40, 1)  # a PRelu slope: per channel
    rng = np.random.default_rng(len(key))
    x, b = (np.round(rng.standard_normal(s) * 4).astype(np.float32) / 2 for s in (shape, bshape))
    if key.startswith("Pow"):
        x, b = np.abs(x) + np.float32(0.5), np.clip(b, -2, 2)
    if key in ("Div", "Mod", "Remainder", "Div reversed"):
        x, b = (np.where(np.abs(v) < 0.5, np.float32(0.5), v) for v in (x, b))
    text = binary_top_text(op, attrs, shape, bshape) if record == "binary" else top_text(op, attrs, shape)
    top = lowered_text(tmp_path / "m.mlir", text, "F32")
    feed = {"x": x, "b": b} if record == "binary" else {"x": x}
    want = interpret(top, feed)
    bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
    cls = isa.BdcBinaryX if record == "binary" else isa.BdcConstX
    assert {r.op for r in isa.decode(bm.commands) if isinstance(r, cls)} == {isa.ELEMENTWISE_X_OPS[key.split()[0]]}
    assert re.search(r"\b[nh]secs = [2-9]", print_module(top.module))
    got, _ = run_bmodel(bm, feed)
    assert_f32_close(got["y"], want["y"], key)


@pytest.mark.parametrize("pad_mode", ["symmetric", "wrap"])
@pytest.mark.parametrize("mode", ["F32", "BF16"])
def test_symmetric_and_wrap_pads_wider_than_the_tensor(tmp_path, mode, pad_mode):
    """tpu.Pad symmetric (TPU-MLIR's mode; no ONNX form) and wrap (ONNX's, opset 19) with pads past
    the input's size along N, C, H and W (the edge elements repeat, period 2 x size; circular,
    period size), sliced."""
    shape = (2, 3, 30, 7)
    text = top_text("top.Pad", f'{{mode = "{pad_mode}", paddings = [1, 2, 20, 5, 2, 1, 17, 6]}}', shape, (5, 6, 67, 18))
    top = lowered_text(tmp_path / "m.mlir", text, mode)
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    want = interpret(top, {"x": x})
    np.testing.assert_array_equal(want["y"], np.pad(x, [(1, 2), (2, 1), (20, 17), (5, 6)], mode=pad_mode)
                                  .astype(HALF.get(mode, np.float32)).astype(np.float32))
    bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
    assert any(isinstance(r, isa.BdcPadReflect) and r.mode == isa.REFLECT_MODES[pad_mode]
               for r in isa.decode(bm.commands))
    assert re.search(r"\b[nh]secs = [2-9]", print_module(top.module))
    got, _ = run_bmodel(bm, {"x": x})
    np.testing.assert_array_equal(got["y"], want["y"])  # a move: exact in every mode


@pytest.mark.parametrize("bad", [6, -7])
def test_gather_index_out_of_range_is_a_cmodel_error_naming_it(tmp_path, bad):
    x = np.zeros((4, 6, 5), np.float32)
    idx = np.array([0, bad, 1], np.int64)
    top = lowered(build([helper.make_node("Gather", ["x", "i"], ["y"], axis=1)], {"x": x, "i": idx}, "y", {}))
    bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
    with pytest.raises(TpudslError, match=rf"cmodel: gdma: gather: index {bad} is outside \[-6, 6\) at instruction 0 "
                                          r"\(y\)"):
        run_bmodel(bm, {"x": x, "i": idx})


def test_reflect_index_against_numpy():
    """isa.reflect_index (the record's definition, used by slicing and the cmodel) against np.pad's
    reflect, symmetric and wrap modes, pads up to three times the size."""
    for size in range(1, 6):
        for mode in ("reflect", "symmetric", "wrap"):
            pad = 3 * size
            want = np.pad(np.arange(size), pad, mode=mode)
            got = isa.reflect_index(np.arange(-pad, size + pad), size, isa.REFLECT_MODES[mode])
            np.testing.assert_array_equal(got, want, err_msg=f"{mode} size {size}")


def test_onnx_model_with_the_new_ops_matches_onnxruntime_through_the_cmodel(tmp_path):
    """Independent of both interpreters: BatchNorm, HardSwish, reflect Pad and a Gather of indices
    given at run time (negative ones too), compiled for tiny, the cmodel against onnxruntime (F32,
    1e-5 relative)."""
    import onnxruntime as ort

    rng = np.random.default_rng(9)
    c = 4
    inits = {"g": rng.uniform(0.5, 2, c), "b": rng.standard_normal(c), "m": rng.standard_normal(c),
             "v": rng.uniform(0.5, 2, c)}
    nodes = [helper.make_node("BatchNormalization", ["x", "g", "b", "m", "v"], ["bn"]),
             helper.make_node("HardSwish", ["bn"], ["hs"]),
             helper.make_node("Pad", ["hs", "p"], ["pad"], mode="reflect"),
             helper.make_node("Gather", ["pad", "i"], ["y"], axis=3)]
    feed = {"x": rng.standard_normal((2, c, 40, 30)).astype(np.float32), "i": np.array([[-1, 0], [33, -35]], np.int64)}
    inits = {k: v.astype(np.float32) for k, v in inits.items()}
    inits["p"] = np.array([0, 0, 3, 2, 0, 0, 1, 4], np.int64)
    model = build(nodes, feed, "y", inits, 17)
    (want,) = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feed)
    top = lowered(model)
    ops = {op.name for op in top.main_func().body.block.ops}
    assert {"tpu.Scale", "tpu.Active", "tpu.Pad", "tpu.Gather"} <= ops, ops
    got, _ = run_bmodel(compile_for(top, "tiny", str(tmp_path / "m.bmodel")), feed)
    assert_f32_close(got["y"], want, "y")


def test_batch_norm_fused_relu_and_relu6_reach_the_cmodel(tmp_path):
    """BatchNorm -> Relu and BatchNorm -> Clip(0, 6) (canonicalize fuses both: do_relu, relu_limit 6)
    become tpu.Scale with the relu and no Relu/Clip op, compiled for tiny: the cmodel against
    onnxruntime (F32, 1e-5 relative), both clamps showing."""
    import onnxruntime as ort

    rng = np.random.default_rng(11)
    c = 3
    inits = {f"{k}{i}": v.astype(np.float32) for i in (1, 2) for k, v in (
        ("g", rng.uniform(2, 4, c)), ("b", rng.standard_normal(c)), ("m", rng.standard_normal(c)),
        ("v", rng.uniform(0.5, 2, c)))}
    nodes = [helper.make_node("BatchNormalization", ["x", "g1", "b1", "m1", "v1"], ["bn1"]),
             helper.make_node("Relu", ["bn1"], ["r"]),
             helper.make_node("BatchNormalization", ["r", "g2", "b2", "m2", "v2"], ["bn2"]),
             helper.make_node("Clip", ["bn2", "lo", "hi"], ["y"])]
    inits |= {"lo": np.array(0, np.float32), "hi": np.array(6, np.float32)}
    feed = {"x": (rng.standard_normal((2, c, 40, 30)) * 2).astype(np.float32)}
    model = build(nodes, feed, "y", inits, 17)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, feed)
    assert (want == 0).any() and (want == 6).any()
    top = lowered(model)
    ops = [op for op in top.main_func().body.block.ops if op.name.startswith("tpu.")]
    scales = [op for op in ops if op.name == "tpu.Scale"]
    fused = [AttrView(s.attributes, SPECS["tpu.Scale"]) for s in scales]
    assert [(a["do_relu"], a["relu_limit"]) for a in fused] == [(True, -1.0), (True, 6.0)]
    assert not {op.name for op in ops} & {"tpu.Relu", "tpu.Clip", "tpu.Active"}
    got, _ = run_bmodel(compile_for(top, "tiny", str(tmp_path / "m.bmodel")), feed)
    assert_f32_close(got["y"], want, "y")


@pytest.mark.parametrize("name", ["efficientnet_silu", "efficientnet_hardswish", "densenet"])
def test_zoo_models_that_stopped_before_now_compile_and_match(tmp_path, name):
    """The zoo models whose deploy stopped before issue 11 (SiLU and HardSigmoid/HardSwish
    activations, a BatchNorm no conv absorbs: tpu.Scale), small, on bm1684x with groups of one: the
    cmodel matches the Tpu interpreter (F32, 1e-5 relative)."""
    from tests import models

    model = {"efficientnet_silu": lambda: models.efficientnet(input_size=16, max_repeats=1, width=0.25,
                                                              num_classes=10),
             "efficientnet_hardswish": lambda: models.efficientnet(input_size=16, max_repeats=1, width=0.25,
                                                                   num_classes=10, act="hardswish"),
             "densenet": lambda: models.densenet(input_size=32, growth=8, blocks=(2, 2), init_channels=8,
                                                 num_classes=10)}[name]()
    feed = models.random_inputs(model)
    top = lowered(model, chip="bm1684x")
    ops = {op.name for op in top.main_func().body.block.ops}
    assert ops & {"tpu.Scale", "tpu.Active"}, ops
    want = interpret(top, feed)
    bm = compile_for(top, "bm1684x", str(tmp_path / "m.bmodel"), opt=1)  # (opt=2's search: bench/zoo_deploy.py)
    assert {type(r) for r in isa.decode(bm.commands)} & {isa.BdcScale, isa.BdcActiveX}
    got, _ = run_bmodel(bm, feed)
    for k, w in want.items():
        assert_f32_close(got[k], w, k)


@pytest.mark.parametrize("x_shape, y_shape", [((3, 1, 5), (2, 3, 40, 5)), ((1, 3, 1, 50), (2, 3, 40, 50)),
                                              ((40, 1), (2, 3, 40, 50)), ((4,), (3, 200, 4)),
                                              ((1, 2, 1, 16, 16), (1, 2, 2, 16, 16))])  # repeat_kv: folds to 4-D
@pytest.mark.parametrize("mode", ["F32", "BF16"])
def test_expand_is_a_load_with_zero_strides(tmp_path, x_shape, y_shape, mode):
    """tpu.Expand is a move: per slice one GDMA load whose strides are 0 along the broadcast dims,
    and one store; no BDC record, so the result is the Tpu interpreter's exactly."""
    x = np.random.default_rng(11).standard_normal(x_shape).astype(np.float32)
    node = helper.make_node("Expand", ["x", "s"], ["y"])
    top = lowered(build([node], {"x": x}, "y", {"s": np.array(y_shape, np.int64)}), mode)
    assert "tpu.Expand" in {op.name for op in top.main_func().body.block.ops}
    want = interpret(top, {"x": x})
    bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
    records = isa.decode(bm.commands)
    assert any(type(r) is isa.GdmaLoad and 0 in (r.gn, r.gc, r.gh, r.gw) and r.n * r.c * r.h * r.w > 1
               for r in records)
    got, _ = run_bmodel(bm, {"x": x})
    np.testing.assert_array_equal(got["y"], want["y"])


def test_a_per_channel_vector_prelu_slope_is_refused_naming_it(tmp_path):
    """A 1-D slope of C values on a 4-D input: the interpreter reads it along C (TPU-MLIR's form),
    broadcasting would read it along W (here W == C, so a wrong answer would not even fail on
    shape): the backend refuses it by name."""

    text = binary_top_text("top.PRelu", "", (1, 3, 4, 3), (3,))
    top = lowered_text(tmp_path / "m.mlir", text, "F32")
    with pytest.raises(TpudslError, match=r"backend: 'tpu.PReluOp' op \"y\": a 1-D slope read per channel"):
        compile_for(top, "tiny", str(tmp_path / "m.bmodel"))


def test_new_elementwise_records_join_a_layer_group(tmp_path):
    """Clip (BdcConstX), Div (BdcBinaryX, reading the group's input in place) and HardSwish
    (BdcActiveX) between two convs on tiny: opt=2 makes the five ops one group sliced along H, and
    the cmodel matches the Tpu interpreter (F32, 1e-5 relative)."""
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((1, 4, 40, 30)).astype(np.float32), rng.standard_normal((4, 4, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Clip", ["c", "lo", "hi"], ["k"]), helper.make_node("Div", ["k", "x"], ["d"]),
             helper.make_node("HardSwish", ["d"], ["h"]), helper.make_node("Conv", ["h", "w"], ["y"], pads=[1, 1, 1, 1])]
    top = lowered(build(nodes, {"x": x}, "y", {"w": w, "lo": np.array(-0.5, np.float32),
                                               "hi": np.array(0.5, np.float32)}))
    want = interpret(top, {"x": x})
    bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
    (group,) = bm.header["layer_groups"]
    assert group["ops"] == ["c", "k", "d", "h", "y"] and group["hsecs"] > 1, group
    assert {isa.BdcConstX, isa.BdcBinaryX, isa.BdcActiveX} <= {type(r) for r in isa.decode(bm.commands)}
    got, _ = run_bmodel(bm, {"x": x})
    assert_f32_close(got["y"], want["y"], "y")


@pytest.mark.parametrize("op, mode, block, shape", [("DepthToSpace", "DCR", 2, (2, 12, 60, 40)),
                                                    ("DepthToSpace", "CRD", 3, (2, 18, 90, 60)),
                                                    ("SpaceToDepth", None, 2, (2, 3, 120, 80))])
def test_depth2space_is_one_strided_move_per_block_position(tmp_path, op, mode, block, shape):
    """tpu.Depth2Space (and its inverse): per slice of the depth side's grid and per block position
    (i, j), one GDMA load of one strided view and one store to the other; sliced, exact."""
    x = np.random.default_rng(12).standard_normal(shape).astype(np.float32)
    node = helper.make_node(op, ["x"], ["y"], blocksize=block, **({"mode": mode} if mode else {}))
    top = lowered(build([node], {"x": x}, "y", {}))
    assert "tpu.Depth2Space" in {o.name for o in top.main_func().body.block.ops}
    want = interpret(top, {"x": x})
    bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
    records = isa.decode(bm.commands)
    assert all(r.ENGINE == "gdma" for r in records)
    assert re.search(r"\b[nh]secs = [2-9]", print_module(top.module))
    assert sum(type(r) is isa.GdmaStore for r in records) % (block * block) == 0
    got, _ = run_bmodel(bm, {"x": x})
    np.testing.assert_array_equal(got["y"], want["y"])


@pytest.mark.parametrize("x_shape, reps", [((2, 3, 20, 30), (1, 2, 3, 1)), ((3, 40), (2, 1)), ((1, 4, 8), (2, 1, 3)),
                                           ((2, 3, 40, 50), (2, 1, 2, 2)),
                                           ((1, 2, 1, 16, 16), (1, 1, 2, 1, 1)),  # repeat_kv's .repeat
                                           ((2, 3, 4, 5, 6), (1, 2, 1, 1, 3))])  # 4 and 5 merge: (2, 3, 20, 6)
def test_tile_moves_each_input_part_to_every_repeat(tmp_path, x_shape, reps):
    """tpu.Tile: per slice of the input's grid, one load and one store per repeat (the product of
    the repeats), no BDC record; the result is the Tpu interpreter's exactly."""
    x = np.random.default_rng(13).standard_normal(x_shape).astype(np.float32)
    top = lowered(build([helper.make_node("Tile", ["x", "r"], ["y"])], {"x": x}, "y", {"r": np.array(reps, np.int64)}))
    assert "tpu.Tile" in {o.name for o in top.main_func().body.block.ops}
    want = interpret(top, {"x": x})
    bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
    records = isa.decode(bm.commands)
    assert all(r.ENGINE == "gdma" for r in records)
    assert sum(type(r) is isa.GdmaStore for r in records) % int(np.prod(reps)) == 0
    got, _ = run_bmodel(bm, {"x": x})
    np.testing.assert_array_equal(got["y"], want["y"])


def test_a_tile_of_rank_5_that_does_not_fold_to_4d_is_refused_naming_it(tmp_path):
    """Every dim repeated: no neighbours merge into one tiled dim, so no 4-D view holds the tile."""
    x = np.zeros((2, 3, 4, 5, 6), np.float32)
    top = lowered(build([helper.make_node("Tile", ["x", "r"], ["y"])], {"x": x}, "y",
                        {"r": np.array([2, 2, 2, 2, 2], np.int64)}))
    with pytest.raises(TpudslError, match=r"backend: 'tpu.Tile' op \"y\": input \[2, 3, 4, 5, 6\] tiled by "
                                          r"\[2, 2, 2, 2, 2\] does not fold to 4-D; not modelled"):
        compile_for(top, "tiny", str(tmp_path / "m.bmodel"))


@pytest.mark.parametrize("mode", sorted(HALF))
def test_active_extra_agrees_with_the_interpreter_on_every_16_bit_input(mode):
    """Each BdcActiveX mode computes one element alone and rounds once, so the interpreter's and the
    cmodel's results must be equal for all 65,536 inputs of the type (NaNs and infinities too):
    the same float32 formula on both sides, and ERF (whose float32 kernel rounds 6 F16 inputs apart)
    the float64 math.erf value rounded once on both."""
    from tpudsl.backend.cmodel import arith_extra
    from tpudsl.interp.kernel import KernelAttrs, run_kernel
    from tpudsl.interp.kernels_tpu import TPU_KERNELS

    dt = np.dtype(HALF[mode])
    x = np.arange(1 << 16, dtype=np.uint16).view(dt)
    held = x if dt == np.float16 else x.astype(np.float32)  # how the interpreter holds bf16
    coeffs = {m: [0.3, 0.6][:len(names)] for _, (m, names) in ACTIVE_COEFFS.items()}
    for name, code in isa.ACTIVE_EXTRA_MODES.items():
        extra = {"coeffs": coeffs[name]} if name in coeffs else {}
        with np.errstate(all="ignore"):
            want = run_kernel(TPU_KERNELS["tpu.Active"], [held], KernelAttrs({"mode": name, **extra}, out_shapes=[x.shape],
                                                                               out_dtypes=[dt]))[0]
            got = arith_extra.active_extra(x, code, *(coeffs.get(name, []) + [0.0, 0.0])[:2]).astype(dt)
        assert_bit_exact(got, np.asarray(want), name)


@pytest.mark.parametrize("inversed", [False, True])
@pytest.mark.parametrize("mode", ["F32", "F16"])
def test_masked_fill(tmp_path, inversed, mode):
    """tpu.MaskedFill (no ONNX form): the constant where cond != 0 (inversed: where cond == 0), cond
    broadcast along C and W, sliced; F16: the constant rounded once to the type, as the interpreter."""
    attrs = f"{{inversed = {str(inversed).lower()}, const_val = 0.1 : f64}}"
    text = binary_top_text("top.MaskedFill", attrs, (2, 1, 40, 1), (2, 5, 40, 30))
    text = text.replace("-> tensor<2x1x40x1xf32> loc(\"y\")", "-> tensor<2x5x40x30xf32> loc(\"y\")")
    text = text.replace("-> tensor<2x1x40x1xf32> {", "-> tensor<2x5x40x30xf32> {")
    text = text.replace("return %2 : tensor<2x1x40x1xf32>", "return %2 : tensor<2x5x40x30xf32>")
    top = lowered_text(tmp_path / "m.mlir", text, mode)
    rng = np.random.default_rng(3)
    feed = {"x": (rng.integers(0, 2, (2, 1, 40, 1)) * 2.5).astype(np.float32),
            "b": rng.standard_normal((2, 5, 40, 30)).astype(np.float32)}
    want = interpret(top, feed)
    bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
    assert any(isinstance(r, isa.BdcSelect) for r in isa.decode(bm.commands))
    assert re.search(r"\b[nh]secs = [2-9]", print_module(top.module))
    got, _ = run_bmodel(bm, feed)
    compare(got["y"], want["y"], "y", mode)


def test_reduce_l1_l2_prod_f32(tmp_path):
    """ReduceL1/L2/Prod (BdcReduce modes 4-6; F16/BF16: tests/test_backend_index_ops.py) in F32 over
    neighbouring axes of a 4-D input, on tiny so that the kept rows are sliced: cmodel within 1e-5
    of the Tpu interpreter. Products of values in +-[0.7, 1.4] stay far from overflow and underflow.
    Each op has its own runs; a quarter of its examples are sliced by construction (at least
    3x8x32x12 to 3x9x35x13, one of N or C reduced: tiny needs several sections for the kept rows)."""
    tally = FeatureTally(("ReduceL1", "ReduceL2", "ReduceProd", "sliced"))

    def check(onnx_op, seed, first, count, keepdims, big):
        rng = np.random.default_rng(seed)
        low, high = ([3, 8, 32, 12], [4, 10, 36, 14]) if big else ([2, 2, 16, 8], [5, 13, 41, 17])
        shape = tuple(int(d) for d in rng.integers(low, high))
        axes = list(range(first, min(first + count, 4)))
        x = (rng.uniform(0.7, 1.4, shape) * rng.choice([-1, 1], shape)).astype(np.float32)
        node = helper.make_node(onnx_op, ["x", "a"], ["y"], keepdims=int(keepdims))
        top = lowered(build([node], {"x": x}, "y", {"a": np.array(axes, np.int64)}, 18), "F32")
        compiled = cmodel_matches_interpreter(top, {"x": x}, "F32", tmp_path / "m.bmodel")
        modes = {r.mode for r in compiled.records if isinstance(r, isa.BdcReduce)}
        assert modes == {isa.REDUCE_MODES[onnx_op]}, modes
        tally.record({onnx_op, *(["sliced"] if compiled.sliced else [])})

    per_op = max(4, settings.default.max_examples // 48)
    for onnx_op in ("ReduceL1", "ReduceL2", "ReduceProd"):
        for big, examples, first, count in ((False, per_op - per_op // 4, st.integers(0, 2), st.integers(1, 2)),
                                            (True, per_op // 4, st.integers(0, 1), st.just(1))):
            settings(max_examples=examples)(given(st.just(onnx_op), st.integers(0, 2**16), first, count, st.booleans(),
                                                  st.just(big))(check))()
    tally.assert_each_in(1 / 4, ["ReduceL1", "ReduceL2", "ReduceProd"])
    tally.assert_each_in(1 / 6, ["sliced"])

"""ModuleInterpreter: lifecycle, names, memory plan, errors, and the DragGAN dynamic-filter regression.

Modules are built with the module API (new_top_module + opdef.create); references are
onnxruntime single-node models or plain numpy written here."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from interp_ref import assert_close, ort_run, rand
from xdsl.dialects.builtin import TensorType, UnrankedTensorType, f32
from xdsl.ir import SSAValue

from tests.feature_tally import FeatureTally
import tpudsl.dialects.top  # noqa: F401  (defines the Top ops)
from tpudsl.dialects.opdef import SPECS, create, infer_shapes
from tpudsl.interp import KERNELS, ModuleInterpreter, evaluate_op
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import TopModule, new_top_module, save_module


class Builder:
    """A Top module under construction: inputs by name, weights, ops with inferred result types."""

    def __init__(self, inputs: dict[str, tuple[int, ...]]):
        self.mod: TopModule = new_top_module("t", [TensorType(f32, s) for s in inputs.values()])
        self.block = self.mod.main_func().body.block
        self.values = {}
        for arg, (name, shape) in zip(self.block.args, inputs.items(), strict=True):
            self.values[name] = self.op("top.Input", [arg], loc=name)

    def weight(self, name: str, array: np.ndarray) -> SSAValue:
        return self.mod.add_weight(name, array).results[0]

    def none(self) -> SSAValue:
        op = create("top.None", [], [tpudsl_none_type()], loc="none")
        self.block.add_op(op)
        return op.results[0]

    def op(self, name: str, operands, attrs=None, loc: str = "", n_results: int = 1):
        probe = create(name, operands, [UnrankedTensorType(f32)] * n_results, attrs)
        shapes = infer_shapes(probe, SPECS[name])
        probe.drop_all_references()
        op = create(name, operands, [TensorType(f32, s) for s in shapes], attrs, loc=loc)
        self.block.add_op(op)
        return op.results[0] if n_results == 1 else list(op.results)

    def finish(self, *outputs: SSAValue) -> TopModule:
        self.mod.set_outputs(list(outputs))
        self.mod.module.verify()
        return self.mod


def tpudsl_none_type():
    from xdsl.dialects.builtin import NoneType

    return NoneType()


def interpreter(mod: TopModule) -> ModuleInterpreter:
    m = ModuleInterpreter(mod.module, mod.weights)
    m.init()
    return m


# ---- DragGAN: a filter computed by other ops must be read at inference time -------------------

def test_conv_with_a_filter_computed_from_a_weight():
    rng = np.random.default_rng(1)
    x, w0, bias = rand(rng, 1, 3, 6, 6), rand(rng, 4, 3, 3, 3), rand(rng, 4)
    b = Builder({"x": x.shape})
    w = b.op("top.MulConst", [b.weight("w0", w0)], {"const_val": 2.0}, loc="w_scaled")
    y = b.op("top.Conv", [b.values["x"], w, b.weight("bias", bias)], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, loc="y")
    m = interpreter(b.finish(y))
    (expected,) = ort_run("Conv", [x, w0 * 2, bias], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]})
    assert_close(m.inference({"x": x})["y"], expected)


def test_conv_filter_from_a_model_input_changes_between_runs():
    rng = np.random.default_rng(2)
    b = Builder({"x": (1, 2, 5, 5), "w": (3, 2, 3, 3)})
    y = b.op("top.Conv", [b.values["x"], b.values["w"], b.none()], {"kernel_shape": [3, 3]}, loc="y")
    m = interpreter(b.finish(y))
    for _ in range(2):  # a filter copied in init (still unknown there) would break both runs
        x, w = rand(rng, 1, 2, 5, 5), rand(rng, 3, 2, 3, 3)
        (expected,) = ort_run("Conv", [x, w], {"kernel_shape": [3, 3]})
        assert_close(m.inference({"x": x, "w": w})["y"], expected)


def test_modulated_conv_filter_from_a_style_input():
    """StyleGAN2/DragGAN modulation: filter = weight * style, style a model input."""
    rng = np.random.default_rng(12)
    x, w0 = rand(rng, 1, 3, 6, 6), rand(rng, 4, 3, 3, 3)
    b = Builder({"x": x.shape, "style": (1, 3, 1, 1)})
    filt = b.op("top.Mul", [b.weight("w0", w0), b.values["style"]], loc="modulated")
    y = b.op("top.Conv", [b.values["x"], filt, b.none()], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, loc="y")
    m = interpreter(b.finish(y))
    for _ in range(2):
        style = rand(rng, 1, 3, 1, 1, low=0.5, high=2.0)
        (w,) = ort_run("Mul", [w0, style])
        (expected,) = ort_run("Conv", [x, w], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]})
        assert_close(m.inference({"x": x, "style": style})["y"], expected)


@pytest.mark.parametrize("reordered", [True, False])
def test_deconv_with_a_permuted_dynamic_filter(reordered):
    """ReorderDynWeight's shape: filter -> Permute[1,0,2,3] -> Deconv.

    reordered=true: the permute turns an ONNX [ic, oc, k, k] filter into [oc, ic, k, k].
    reordered=false: the permute output itself is the ONNX-layout filter."""
    rng = np.random.default_rng(3)
    x = rand(rng, 1, 4, 3, 3)
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2], "dynweight_reorderd": reordered}
    w_shape = (4, 3, 2, 2) if reordered else (3, 4, 2, 2)  # ic=4, oc=3
    b = Builder({"x": x.shape, "w": w_shape})
    filt = b.op("top.Permute", [b.values["w"]], {"order": [1, 0, 2, 3]}, loc="y_reorder_permute")
    y = b.op("top.Deconv", [b.values["x"], filt, b.none()], attrs, loc="y")
    m = interpreter(b.finish(y))
    for _ in range(2):
        w = rand(rng, *w_shape)
        onnx_filter = w if reordered else w.transpose(1, 0, 2, 3)
        (expected,) = ort_run("ConvTranspose", [x, onnx_filter], {"kernel_shape": [2, 2], "strides": [2, 2]})
        assert_close(m.inference({"x": x, "w": w})["y"], expected)


def test_deconv_with_a_filter_computed_from_a_weight():
    rng = np.random.default_rng(4)
    x, w0 = rand(rng, 1, 2, 4, 4), rand(rng, 3, 2, 3, 3)  # [oc, ic, k, k] weight
    b = Builder({"x": x.shape})
    filt = b.op("top.Permute", [b.weight("w0", w0)], {"order": [1, 0, 2, 3]}, loc="filter_onnx")
    y = b.op("top.Deconv", [b.values["x"], filt, b.none()], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, loc="y")
    m = interpreter(b.finish(y))
    (expected,) = ort_run("ConvTranspose", [x, w0.transpose(1, 0, 2, 3)], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]})
    assert_close(m.inference({"x": x})["y"], expected)


def test_prepare_sees_weights_but_never_computed_operands():
    seen = []

    def spy_prepare(static, attrs):
        seen.append([s is not None for s in static])
        return KERNELS["top.Conv"].run

    kernels = {**KERNELS, "top.Conv": type(KERNELS["top.Conv"])(KERNELS["top.Conv"].run, spy_prepare)}
    rng = np.random.default_rng(5)
    b = Builder({"x": (1, 2, 4, 4), "w": (2, 2, 1, 1)})
    y1 = b.op("top.Conv", [b.values["x"], b.weight("w0", rand(rng, 2, 2, 1, 1)), b.none()], {"kernel_shape": [1, 1]}, loc="y1")
    y2 = b.op("top.Conv", [y1, b.values["w"], b.none()], {"kernel_shape": [1, 1]}, loc="y2")
    mod = b.finish(y2)
    ModuleInterpreter(mod.module, mod.weights, kernels).init()
    assert seen == [[False, True, False], [False, False, False]]


# ---- names, outputs, keep_all, memory plan ---------------------------------------------------

def _chain():
    """x -> Relu(a) -> MulConst(b) -> Add(a, b) = c, and x -> Sigmoid(d); returns (c, d)."""
    b = Builder({"x": (2, 3)})
    a = b.op("top.Relu", [b.values["x"]], loc="a")
    m = b.op("top.MulConst", [a], {"const_val": 3.0}, loc="b")
    c = b.op("top.Add", [a, m], loc="c")
    d = b.op("top.Sigmoid", [b.values["x"]], loc="d")
    return b.finish(c, d)


def test_outputs_are_keyed_by_loc_names_and_computed():
    x = rand(np.random.default_rng(6), 2, 3)
    out = interpreter(_chain()).inference({"x": x})
    assert list(out) == ["c", "d"]
    relu = np.maximum(x, 0)
    assert_close(out["c"], relu + relu * 3)
    assert_close(out["d"], 1 / (1 + np.exp(-x)))


@pytest.mark.parametrize("flag", ["keep_all", "dump_all"])
def test_keep_all_returns_every_tensor(flag):
    x = rand(np.random.default_rng(7), 2, 3)
    out = interpreter(_chain()).inference({"x": x}, **{flag: True})
    assert set(out) == {"x", "a", "b", "c", "d"}
    assert_close(out["b"], np.maximum(x, 0) * 3)


def test_tensors_are_freed_after_their_last_user():
    plan = interpreter(_chain()).freed_after()
    # top.Input "x" drops the raw argument (also named x); its own result is last read by d (the
    # Sigmoid); a and b by c (the Add); the outputs c and d are kept.
    assert plan == {"x": ["x"], "a": [], "b": [], "c": ["a", "b"], "d": ["x"]}


def test_unnamed_inputs_fall_back_to_argument_order():
    rng = np.random.default_rng(11)
    x, w = rand(rng, 2, 3), rand(rng, 3, 4)
    b = Builder({"x": x.shape, "w": w.shape})
    # MatMul reads the block arguments directly, so they have no top.Input (and no name).
    y = b.op("top.MatMul", [b.block.args[0], b.block.args[1], b.none()], loc="y")
    for name in ("x", "w"):
        input_op = b.values[name].owner
        input_op.detach()
        input_op.erase()
    m = interpreter(b.finish(y))
    assert m.input_names == ["arg0", "arg1"]
    (expected,) = ort_run("MatMul", [x, w])
    assert_close(m.inference({"arg0": x, "arg1": w})["y"], expected)


def test_missing_input_is_a_clear_error():
    with pytest.raises(TpudslError, match=r"missing inputs \['x'\]"):
        interpreter(_chain()).inference({"y": np.zeros((2, 3), np.float32)})


def test_input_of_the_wrong_shape_is_a_clear_error():
    with pytest.raises(TpudslError, match=r"input 'x' has shape \(3, 2\), the module expects \(2, 3\)"):
        interpreter(_chain()).inference({"x": np.zeros((3, 2), np.float32)})


def test_a_failing_kernel_names_the_op():
    b = Builder({"x": (4,), "i": (2,)})
    y = b.op("top.Gather", [b.values["x"], b.values["i"]], {"axis": 0}, loc="g")
    m = interpreter(b.finish(y))
    with pytest.raises(TpudslError, match=r"'top.Gather' op \"g\" failed: IndexError"):
        m.inference({"x": np.zeros(4, np.float32), "i": np.array([1.0, 9.0], np.float32)})


def test_op_without_kernel_is_named_in_the_error():
    kernels = {k: v for k, v in KERNELS.items() if k != "top.MulConst"}
    mod = _chain()
    with pytest.raises(TpudslError, match=r"'top.MulConst' op \"b\" has no interpreter kernel"):
        ModuleInterpreter(mod.module, mod.weights, kernels).init()


def test_multi_result_ops_name_results_after_the_op():
    x = rand(np.random.default_rng(8), 2, 6)
    b = Builder({"x": x.shape})
    parts = b.op("top.Split", [b.values["x"]], {"axis": 1, "num": 3}, loc="s", n_results=3)
    out = interpreter(b.finish(*parts)).inference({"x": x})
    assert list(out) == ["s", "s_1", "s_2"]
    for got, expected in zip(out.values(), ort_run("Split", [x], {"axis": 1, "num_outputs": 3}, n_outputs=3, opset=18)):
        assert_close(got, expected)


def test_from_file_runs_a_saved_module(tmp_path):
    rng = np.random.default_rng(9)
    x, w0 = rand(rng, 1, 2, 5, 5), rand(rng, 3, 2, 3, 3)
    b = Builder({"x": x.shape})
    y = b.op("top.Conv", [b.values["x"], b.weight("w0", w0), b.none()], {"kernel_shape": [3, 3], "do_relu": True}, loc="y")
    save_module(b.finish(y), tmp_path / "m.mlir")
    m = ModuleInterpreter.from_file(tmp_path / "m.mlir")
    m.init()
    (conv,) = ort_run("Conv", [x, w0], {"kernel_shape": [3, 3]})
    assert_close(m.inference({"x": x})["y"], np.maximum(conv, 0))
    m.deinit()
    with pytest.raises(TpudslError, match="before init"):
        m.inference({"x": x})


def test_evaluate_op_folds_one_op():
    rng = np.random.default_rng(10)
    x, w = rand(rng, 1, 2, 4, 4), rand(rng, 2, 2, 3, 3)
    b = Builder({"x": x.shape, "w": w.shape})
    y = b.op("top.Conv", [b.values["x"], b.values["w"], b.none()], {"kernel_shape": [3, 3], "do_relu": True}, loc="y")
    (expected,) = ort_run("Conv", [x, w], {"kernel_shape": [3, 3]})
    (got,) = evaluate_op(y.owner, [x, w, None])
    assert_close(got, np.maximum(expected, 0))


def test_every_top_op_has_a_kernel():
    structural = {"top.Weight", "top.None"}  # the interpreter itself provides their values
    missing = sorted(n for n in SPECS if n.startswith("top.") and n not in KERNELS and n not in structural)
    assert not missing, f"Top ops without an interpreter kernel: {missing}"


def test_every_kernel_has_a_top_op():
    """The other way round: a kernel no op reaches is dead code, or an op nobody defined."""
    orphans = sorted(n for n in KERNELS if n not in SPECS)
    assert not orphans, f"interpreter kernels without a Top op: {orphans}"


# ---- BLAS threads ------------------------------------------------------------------------------

def _blas_threads() -> set[int]:
    from threadpoolctl import threadpool_info

    return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}


@pytest.mark.parametrize("threads", [1, 2])
def test_inference_runs_with_the_requested_blas_threads_and_restores_them(threads):
    """Kernels run inside the limit (a spy kernel reads threadpoolctl's view), and the caller's
    setting is back afterwards."""
    seen = []

    def spy(ins, attrs):
        seen.append(_blas_threads())
        return KERNELS["top.Relu"].run(ins, attrs)

    kernels = {**KERNELS, "top.Relu": type(KERNELS["top.Relu"])(spy)}
    before = _blas_threads()
    it = ModuleInterpreter(_chain().module, {}, kernels, threads=threads)
    it.init()
    it.inference({"x": rand(np.random.default_rng(8), 2, 3)})
    assert seen == [{threads}]
    assert _blas_threads() == before


def test_default_threads_is_half_the_cores_capped():
    from tpudsl.interp import threads as t

    assert ModuleInterpreter(_chain().module).threads == t.default_threads()
    assert t.default_threads() == max(1, min(t.MAX_DEFAULT_THREADS, t.available_cpus() // 2))


@pytest.mark.parametrize("bad", [0, -2, 1.5, True])
def test_threads_must_be_a_positive_integer(bad):
    with pytest.raises(TpudslError, match="threads must be a positive integer"):
        ModuleInterpreter(_chain().module, threads=bad)


# ---- Permute read only by MatMul: a view, no copy --------------------------------------------

def naive_matmul(a, b):
    """Batched a @ b in float64, one output element's sum over k at a time."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    y = np.zeros((*a.shape[:-1], b.shape[-1]))
    for k in range(a.shape[-1]):
        y += a[..., :, k : k + 1] * b[..., k : k + 1, :]
    return y


PERMUTE_CASES = ("view", "last axis moved", "add", "output")


@st.composite
def permute_matmuls(draw, case, side):
    rank = draw(st.sampled_from([3, 4] if case == "last axis moved" else [2, 3, 4]))
    shape = tuple(draw(st.integers(2, 5)) for _ in range(rank))  # no size-1 axis: a permutation moves data
    order = list(draw(st.permutations(range(rank - 1))))
    lowest = rank - 2 if case == "view" else 0
    highest = rank - 3 if case == "last axis moved" else rank - 1
    order.insert(draw(st.integers(lowest, highest)), rank - 1)  # where the input's last axis goes
    assume(order != sorted(order))  # the identity is x itself on every path
    return dict(shape=shape, order=order, side=side,
                reader="matmul" if case in ("view", "last axis moved") else case,
                cols=draw(st.integers(1, 4)), seed=draw(st.integers(0, 2**16)))


def test_permute_read_by_matmul_is_a_view_property():
    """x -> Permute (random rank 2-4 and order) -> MatMul (as left or right operand), sometimes also
    read by an Add or returned: equal to a float64 loop. The Permute's result is a view exactly when
    MatMul is its only reader and the input's last axis stays one of the last two (BLAS reads such a
    matrix as it is); each case must occur in a tenth of the examples: each case and each side has
    its own eighth of them, by construction."""
    tally = FeatureTally(("view", "copy: last axis moved", "copy: another reader", "right operand"))

    def check(p):
        rng = np.random.default_rng(p["seed"])
        shape, order = p["shape"], p["order"]
        x = rand(rng, *shape)
        permuted = tuple(shape[i] for i in order)
        other_shape = ((*permuted[:-2], permuted[-1], p["cols"]) if p["side"] == "left"
                       else (*permuted[:-2], p["cols"], permuted[-2]))
        other = rand(rng, *other_shape)
        b = Builder({"x": shape, "o": other_shape})
        t = b.op("top.Permute", [b.values["x"]], {"order": order}, loc="t")
        left, right = (t, b.values["o"]) if p["side"] == "left" else (b.values["o"], t)
        y = b.op("top.MatMul", [left, right, b.none()], loc="y")
        outputs = [y]
        if p["reader"] == "add":
            outputs.append(b.op("top.Add", [t, t], loc="s"))
        elif p["reader"] == "output":
            outputs.append(t)
        out = interpreter(b.finish(*outputs)).inference({"x": x, "o": other}, keep_all=True)
        xt = np.transpose(x, order)
        expected = naive_matmul(xt, other) if p["side"] == "left" else naive_matmul(other, xt)
        depth = permuted[-1] if p["side"] == "left" else permuted[-2]
        np.testing.assert_allclose(out["y"], expected, rtol=0, atol=1e-5 * (1 + depth))
        np.testing.assert_array_equal(out["t"], xt)
        keeps_last = len(shape) - 1 in order[-2:]
        view = p["reader"] == "matmul" and keeps_last
        assert np.shares_memory(out["t"], out["x"]) == view
        tally.record(case for case, present in (
            ("view", view), ("copy: last axis moved", not keeps_last), ("copy: another reader", p["reader"] != "matmul"),
            ("right operand", p["side"] == "right")) if present)

    for case in PERMUTE_CASES:
        for side in ("left", "right"):
            settings(max_examples=5, deadline=None)(given(permute_matmuls(case, side))(check))()
    tally.assert_each_in(1 / 10)


# ---- Permute -> LayerNorm over the moved axis (ConvNeXt's NCHW -> NHWC -> LayerNorm) ------------

LN_READERS = ("matmul", "permute back", "add", "output")


@st.composite
def permuted_layer_norms(draw, reader, affine):
    rank = draw(st.integers(2, 4))
    shape = tuple(draw(st.integers(2, 6)) for _ in range(rank))
    k = draw(st.integers(0, rank - 2))  # the axis that goes last and is normalised
    order = [ax for ax in range(rank) if ax != k] + [k]
    return dict(shape=shape, order=order, reader=reader, affine=affine, seed=draw(st.integers(0, 2**16)))


def test_layer_norm_of_a_permuted_input_property():
    """x -> Permute (axis k to the end) -> LayerNorm (last axis) -> MatMul, a Permute back, an Add or
    the output: equal to float64. The Permute is then a view of x (LayerNorm reads it as it is), and
    LayerNorm's result is a view in x's layout exactly when every reader takes strided operands
    (MatMul, Permute); a Permute back to x's order is then no copy at all. Each reader, with and
    without the affine parameters, has its own 4 examples: every case by construction."""
    tally = FeatureTally((*LN_READERS, "affine", "no parameters", "permute back without a copy"))

    def check(p):
        rng = np.random.default_rng(p["seed"])
        shape, order = p["shape"], p["order"]
        x = rand(rng, *shape, low=-2, high=2) + 1
        c = shape[order[-1]]
        w, bias = rand(rng, c), rand(rng, c)
        m = rand(rng, c, 3)
        b = Builder({"x": shape})
        t = b.op("top.Permute", [b.values["x"]], {"order": order}, loc="t")
        params = [b.weight("w", w), b.weight("b", bias)] if p["affine"] else [b.none(), b.none()]
        y = b.op("top.LayerNorm", [t, *params], {"axis": -1, "eps": 1e-5}, loc="y")
        if p["reader"] == "matmul":
            out = b.op("top.MatMul", [y, b.weight("m", m), b.none()], loc="out")
        elif p["reader"] == "permute back":
            out = b.op("top.Permute", [y], {"order": list(np.argsort(order))}, loc="out")
        elif p["reader"] == "add":
            out = b.op("top.Add", [y, y], loc="out")
        else:
            out = y
        got = interpreter(b.finish(out)).inference({"x": x}, keep_all=True)
        xt = np.transpose(x, order).astype(np.float64)
        centred = xt - xt.mean(-1, keepdims=True)
        want = centred / np.sqrt((centred**2).mean(-1, keepdims=True) + 1e-5)
        if p["affine"]:
            want = want * w + bias
        assert np.all(np.abs(got["y"] - want) <= 2e-6 * (np.abs(want) + 2)), np.max(np.abs(got["y"] - want))
        if p["reader"] == "matmul":
            np.testing.assert_allclose(got["out"], naive_matmul(got["y"], m), rtol=0, atol=1e-5 * (1 + c))
        elif p["reader"] == "permute back":
            np.testing.assert_array_equal(got["out"], np.transpose(got["y"], np.argsort(order)))
        elif p["reader"] == "add":
            np.testing.assert_array_equal(got["out"], got["y"] + got["y"])
        assert np.shares_memory(got["t"], got["x"]) and not got["t"].flags.c_contiguous
        assert (not got["y"].flags.c_contiguous) == (p["reader"] in ("matmul", "permute back"))
        if p["reader"] == "permute back":
            assert np.shares_memory(got["out"], got["y"])
        tally.record({p["reader"], "affine" if p["affine"] else "no parameters",
                      *(["permute back without a copy"] if p["reader"] == "permute back" else [])})

    for reader in LN_READERS:
        for affine in (True, False):
            settings(max_examples=4, deadline=None)(given(permuted_layer_norms(reader, affine))(check))()
    tally.assert_each_in(1 / 10)

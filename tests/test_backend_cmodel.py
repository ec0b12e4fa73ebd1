"""The backend end to end: random chains and small DAGs of conv / deconv / pool / pad / element-wise / concat /
matmul compiled for the `tiny` chip (4 lanes x 16 KiB, so ops are sliced along N and H), run on
the cmodel and compared with the Tpu interpreter (F32: 1e-5 relative). Each slicing kind must
occur in enough examples; the dynamic-filter Conv and the bounds-check message have their own tests."""

from __future__ import annotations

import dataclasses
import re
import warnings

import numpy as np
import pytest
from hypothesis import currently_in_test_context, event, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from tests.backend_support import assert_bit_exact, assert_f32_close, compile_for, interpret, lowered
from tests.feature_tally import FeatureTally, forced_runs, run_each
from tpudsl.backend import isa
from tpudsl.backend.cmodel import run_bmodel
from tpudsl.interp import run_module
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.printer import print_module


class Graph:
    """An ONNX graph under construction: tensors by name with their NCHW shapes."""

    def __init__(self, rng: np.random.Generator):
        self.rng, self.nodes, self.inits, self.shapes = rng, [], [], {}

    def const(self, shape) -> str:
        name = f"w{len(self.inits)}"
        self.inits.append(numpy_helper.from_array(self.rng.standard_normal(shape).astype(np.float32), name))
        return name

    def ints(self, values: list[int]) -> str:
        name = f"i{len(self.inits)}"
        self.inits.append(numpy_helper.from_array(np.array(values, np.int64), name))
        return name

    def node(self, op: str, inputs: list[str], shape, **attrs) -> str:
        out = f"t{len(self.nodes)}_{op.lower()}"
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        self.shapes[out] = tuple(shape)
        return out

    def model(self, inputs: dict[str, tuple], output: str):
        graph = helper.make_graph(
            self.nodes, "g", [helper.make_tensor_value_info(k, TensorProto.FLOAT, v) for k, v in inputs.items()],
            [helper.make_tensor_value_info(output, TensorProto.FLOAT, self.shapes[output])], self.inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _window(draw, size: int, dilate: bool = False):
    """kernel, stride, pads, output size and dilation of one spatial axis (dilation only if asked)."""
    k = draw(st.integers(1, min(3, size)))
    d = draw(st.integers(1, 2)) if dilate and (k - 1) * 2 + 1 <= size else 1
    s = draw(st.integers(1, 2))
    p0, p1 = draw(st.integers(0, k - 1)), draw(st.integers(0, k - 1))
    return k, s, p0, p1, (size + p0 + p1 - (k - 1) * d - 1) // s + 1, d


def _one_batch_fits_tiny(h: int, w: int, k: int = 6) -> bool:
    """Whether one batch of an (h, w) x (w, k) MatMul fits the tiny chip's local memory (4 lanes of
    16 KiB in 4 banks of 4 KiB, 16-byte EU rows): layer-group splits a batched MatMul only between
    batches, and each of its h left rows and h output rows puts one element per EU row on each lane
    (w, resp. k, over the lanes), plus the right side's part, w rows of k floats (F32, the widest).
    The left and right parts are the op's inputs; tiny's bank rule puts the output in a bank they do
    not touch, so it starts at the bank boundary after them: without that, (64, 45) x (45, k) seemed
    to fit in 14,720 bytes while the compiler rightly needs 17,408 (12,480 bytes of inputs reach
    into the fourth bank, which leaves none for the output). A batch that does not fit is
    layer-group's documented "needs N bytes ... even in slices of one row" rejection, not a case to
    compare; k: the largest the generator draws."""
    lanes, eu, bank = 4, 16, 1 << 12
    rows = -(-w // lanes)
    inputs = h * rows * eu + rows * -(-k * 4 // eu) * eu
    return -(-inputs // bank) * bank + h * -(-k // lanes) * eu <= 1 << 14


NEW_OPS = ("permute", "softmax", "layernorm", "slice", "batched_matmul")  # each must occur (as its Tpu op) in enough examples
GROWING = ("deconv", "pad", "resize")  # the first op of `networks(growing=KIND)`


@st.composite
def networks(draw, growing: str = ""):
    """(model, input feed): a chain of 1-5 ops, each reading the last tensor or an earlier one;
    `growing`: that kind (one of GROWING, a reducing kind of HALF_FORCED, or "slice") first.
    Without it the draws are the ones the chains had before Deconv, Pad and Resize existed, so the
    other kinds keep their examples."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    g = Graph(rng)
    # a forced batched MatMul: up to 16 rows, so that one batch fits the tiny chip well within
    # _one_batch_fits_tiny
    rows = (3, 16) if growing == "batched_matmul" else (3, 80)
    x = (draw(st.integers(1, 4)), draw(st.integers(1, 8)), draw(st.integers(*rows)), draw(st.integers(2, 48)))
    g.shapes["x"] = x
    tensors = ["x"]
    first = [growing] if growing else []
    for first_kind in first + [None] * draw(st.integers(1, 5)):
        # the op after a forced first one reads it: as each op reads one of the last two tensors, the
        # first is then an ancestor of the output (not dead code that the lowering drops)
        src = tensors[-1] if first and len(tensors) == 2 else draw(st.sampled_from(tensors[-2:]))
        n, c, h, w = g.shapes[src]
        kinds = [k for k in NEW_OPS if k != "batched_matmul" or _one_batch_fits_tiny(h, w)]
        kind = first_kind or draw(st.sampled_from(["conv", "conv", "pool", "binary", "concat", "relu", *kinds]))
        if kind == "conv":
            kh, sh, pt, pb, oh, dh = _window(draw, h, dilate=True)
            kw, sw, pl, pr, ow, dw = _window(draw, w, dilate=True)
            dw_ok = draw(st.booleans())
            group, oc = (c, c * draw(st.integers(1, 2))) if dw_ok else (1, draw(st.integers(1, 6)))
            ins = [src, g.const((oc, c // group, kh, kw))] + ([g.const((oc,))] if draw(st.booleans()) else [])
            out = g.node("Conv", ins, (n, oc, oh, ow), kernel_shape=[kh, kw], strides=[sh, sw],
                         pads=[pt, pl, pb, pr], group=group, dilations=[dh, dw])
        elif kind == "pool":
            kh, sh, pt, pb, oh, _ = _window(draw, h)
            kw, sw, pl, pr, ow, _ = _window(draw, w)
            pt, pb, pl, pr = (min(p, k // 2) for p, k in ((pt, kh), (pb, kh), (pl, kw), (pr, kw)))  # ONNX: pad < k/2
            oh, ow = (h + pt + pb - kh) // sh + 1, (w + pl + pr - kw) // sw + 1
            op = draw(st.sampled_from(["MaxPool", "AveragePool"]))
            extra = {"count_include_pad": draw(st.integers(0, 1))} if op == "AveragePool" else {}
            out = g.node(op, [src], (n, c, oh, ow), kernel_shape=[kh, kw], strides=[sh, sw],
                         pads=[pt, pl, pb, pr], **extra)
        elif kind == "binary":
            same = [t for t in tensors if g.shapes[t] == g.shapes[src]]
            other = draw(st.sampled_from(same))
            out = g.node(draw(st.sampled_from(["Add", "Sub", "Mul", "Max", "Min"])), [src, other], (n, c, h, w))
        elif kind == "concat":
            same = [t for t in tensors if g.shapes[t][0] == n and g.shapes[t][2:] == (h, w)]
            other = draw(st.sampled_from(same))
            out = g.node("Concat", [src, other], (n, c + g.shapes[other][1], h, w), axis=1)
        elif kind == "permute":
            order = draw(st.permutations(range(4)))
            out = g.node("Transpose", [src], tuple(g.shapes[src][d] for d in order), perm=list(order))
        elif kind == "softmax":
            out = g.node(draw(st.sampled_from(["Softmax", "LogSoftmax"])), [src], (n, c, h, w),
                         axis=draw(st.integers(-4, 3)))
        elif kind == "layernorm":
            # normalizes h x w or w; a reduced row spreads one element per EU row over the lanes
            # (docs/backend.md), so h x w only where its weights fit the tiny chip
            axis = draw(st.integers(2, 3)) if h * w <= 256 else 3
            norm = (n, c, h, w)[axis:]
            out = g.node("LayerNormalization", [src, g.const(norm), g.const(norm)], (n, c, h, w), axis=axis,
                         epsilon=1e-5)
        elif kind == "slice":
            axis, size = draw(st.sampled_from([(2, h), (3, w)]))
            begin, step = draw(st.integers(-size, size - 1)), draw(st.integers(1, 3))
            end = draw(st.integers(begin % size + 1, size + 2))
            rows = len(range(size)[begin:end:step])
            out = g.node("Slice", [src, *(g.ints([v]) for v in (begin, end, axis, step))],
                         tuple(rows if d == axis else s for d, s in enumerate((n, c, h, w))))
        elif kind == "deconv":  # ConvTranspose: stride, dilation, pads < kernel, output_padding, groups
            oc_g, group = draw(st.integers(1, 3)), draw(st.sampled_from([g for g in (1, 2) if c % g == 0]))
            geo = []
            for size in (h, w):
                k, s, d = draw(st.integers(1, 3)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
                p0 = draw(st.integers(0, k - 1))  # at least one output row and column (the input may have 1 or 2)
                p1 = draw(st.integers(0, min(k - 1, (size - 1) * s + (k - 1) * d - p0)))
                op_ = draw(st.integers(0, max(s, d) - 1))
                geo.append((k, s, d, p0, p1, op_, (size - 1) * s + (k - 1) * d + 1 - p0 - p1 + op_))
            (kh, sh, dh, pt, pb, oph, oh), (kw, sw, dw, pl, pr, opw, ow) = geo
            out = g.node("ConvTranspose", [src, g.const((c, oc_g, kh, kw))], (n, oc_g * group, oh, ow),
                         kernel_shape=[kh, kw], strides=[sh, sw], dilations=[dh, dw], pads=[pt, pl, pb, pr],
                         output_padding=[oph, opw], group=group)
        elif kind == "pad":
            widths = [draw(st.integers(d == 2, 3)) if d in (2, 3, 6, 7) else draw(st.integers(0, 1)) for d in range(8)]
            mode = draw(st.sampled_from(["constant", "edge"]))
            out = g.node("Pad", [src, g.ints(widths)], tuple(sz + widths[d] + widths[d + 4] for d, sz in
                                                             enumerate((n, c, h, w))), mode=mode)
        elif kind == "resize":  # -> tpu.Interp (tpu.Upsample for whole nearest scales); exact float scales
            scales = [draw(st.sampled_from([sc for sc in (0.5, 1.5, 2.0, 2.5) if int(size * sc) >= 1])) for size in (h, w)]
            mode = draw(st.sampled_from(["nearest", "linear"]))
            coord = draw(st.sampled_from(["align_corners", "half_pixel", "pytorch_half_pixel", "asymmetric"]))
            extra = {"nearest_mode": draw(st.sampled_from(["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]))
                     } if mode == "nearest" else {}
            name = f"sc{len(g.inits)}"
            g.inits.append(numpy_helper.from_array(np.array([1, 1, *scales], np.float32), name))
            out = g.node("Resize", [src, "", name], (n, c, int(h * scales[0]), int(w * scales[1])), mode=mode,
                         coordinate_transformation_mode=coord, **extra)
        elif kind == "batched_matmul":  # (n, c) batches of (h, w) x (w, k)
            k = draw(st.integers(1, 6))
            out = g.node("MatMul", [src, g.const((n, c, w, k))], (n, c, h, k))
        else:
            out = g.node("Relu", [src], (n, c, h, w))
        tensors.append(out)
    out = tensors[-1]
    if draw(st.booleans()):  # a classifier head: flatten and a fully connected layer
        n, c, h, w = g.shapes[out]
        if c * h * w <= 512:
            flat = g.node("Flatten", [out], (n, c * h * w))
            k = draw(st.integers(1, 12))
            out = g.node("Gemm", [flat, g.const((k, c * h * w)), g.const((k,))], (n, k), transB=1)
    feed = {"x": rng.standard_normal(x).astype(np.float32)}
    return g.model({"x": x}, out), feed


def _secs(text: str, key: str) -> list[int]:
    return [int(v) for v in re.findall(rf"\b{key} = (\d+) : i64", text)]


def assert_chain_close(model, feed, got: dict, want: dict) -> None:
    """F32: the cmodel within 1e-5 of the Tpu interpreter on each output's scale, or, where float32
    cannot promise that, each of them within its worst-case float32 error of the float64 value
    (tests/f64_bound.py; docs/testing.md "F32 chains"). Measured on the Deconv-first chains: every
    intermediate tensor of both within 1-3e-7 of float64, and outputs 1.1e-5 to 8.6e-5 apart where
    the last ops amplify that (a LayerNorm over rows of 2 values, 1/std up to 316; a Softmax of
    logits up to 2,830; a Gemm summing to 0.46 from 420 products of up to 19), the interpreter as
    far from float64 as the cmodel (2.4e-5 against 1.6e-6 on one LayerNorm, 2.3e-5 against 6.9e-5
    on one Softmax); both within 0.1 of their bound there."""
    try:
        for name, w in want.items():
            assert_f32_close(got[name], w, name)
    except AssertionError as close:
        # imported here: onnx's reference evaluator is not needed by the many files importing Graph
        from tests.f64_bound import reference_and_bound

        for name, (exact, bound) in reference_and_bound(model, feed).items():
            for side, value in (("cmodel", got[name]), ("Tpu interpreter", want[name])):
                err = np.abs(value.astype(np.float64) - exact)
                assert (err <= bound).all(), f"{close}; the {side} is off float64 by {err.max()}, " \
                                             f"{(err / bound).max():.3g} times its float32 bound"
        if currently_in_test_context():  # (a property's example; events exist only there)
            event("F32 within float32's bound, not 1e-5")


NETWORK_FEATURES = ("sliced along H", "sliced along N", "op Permute", "op Softmax", "op LayerNorm", "op Slice",
                    "op batched MatMul")
# (the first op of a forced run, the feature it must show): the Tpu op floors by construction
NETWORK_FORCED = (("slice", "op Slice"), ("layernorm", "op LayerNorm"), ("softmax", "op Softmax"),
                  ("batched_matmul", "op batched MatMul"))


def test_random_networks_cmodel_matches_tpu_interpreter(tmp_path):
    """Slicing is layer-group's outcome on random chains: drawn. The Tpu ops are drawn too (a
    Permute may fold away; an op no later op reads is dead code), and each but Permute also has a
    forced run of a twentieth (NETWORK_FORCED) whose chains start with it, the next op reading it
    (an ancestor of the output: it reaches the backend, asserted). Drawn, "op Slice" fell to 9 and
    "op LayerNorm" to 11 of 200 in the dev profile."""
    tally = FeatureTally(NETWORK_FEATURES)

    def check(net, forced):
        model, feed = net
        top = lowered(model)
        want = interpret(top, feed)
        bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
        got, _ = run_bmodel(bm, feed)
        assert_chain_close(model, feed, got, want)
        text = print_module(top.module)
        feats = [feature for feature, present in (
            ("sliced along H", max(_secs(text, "hsecs"), default=1) > 1),
            ("sliced along N", max(_secs(text, "nsecs"), default=1) > 1),
            *((f"op {op}", f'"tpu.{op}"' in text) for op in ("Permute", "Softmax", "LayerNorm", "Slice")),
            ("op batched MatMul",
             re.search(r'"tpu.MatMul"\(.*tensor<\d+x\d+x\d+x\d+xf32.*, tensor<\d+x\d+x\d+x\d+xf32', text) is not None))
            if present]
        assert set(forced) <= set(feats), (forced, feats)
        tally.record(feats)

    total = settings.default.max_examples
    run_each(check, forced_runs(networks(), [(networks(growing=kind), (feature,)) for kind, feature in NETWORK_FORCED],
                                total, total // 20))
    tally.assert_each_in(1 / 20)


@pytest.mark.parametrize("first", GROWING)
def test_random_growing_networks_cmodel_matches_tpu_interpreter(tmp_path, first):
    """Chains that start with a Deconv (strides, dilations, pads, output_padding, groups), a Pad
    (constant or edge, every dim) or a Resize (nearest or linear, every Tpu coordinate mode, up or
    down) and go on as above; canonicalize may fold a Pad into a following conv, and a Resize by
    whole nearest scales is a tpu.Upsample, so the Tpu op must be there in 1 of 20 examples. 13
    examples in ci (a fifteenth of the budget): at 25 the op was in every example of each kind."""
    op = {"deconv": "Deconv", "pad": "Pad", "resize": "Interp"}[first]
    tally = FeatureTally((f"op {op}",))

    @settings(max_examples=max(13, settings.default.max_examples // 15))
    @given(networks(growing=first))
    def check(net):
        model, feed = net
        top = lowered(model)
        want = interpret(top, feed)
        got, _ = run_bmodel(compile_for(top, "tiny", str(tmp_path / "m.bmodel")), feed)
        assert_chain_close(model, feed, got, want)
        tally.record([f"op {op}"] if f'"tpu.{op}"' in print_module(top.module) else [])

    check()
    tally.assert_each_in(1 / 20)


HALF_MODES = ["BF16", "F16"]


# (the first op of a forced run, its Tpu op, the run's share of the examples): each reducing kind's floor by
# construction (drawn alone, MatMul fell to 3 and 4, Conv2D to 6, LayerNorm to 1 of 50 in the dev profile)
HALF_FORCED = (("conv", "tpu.Conv2D", 1 / 10), ("batched_matmul", "tpu.MatMul", 1 / 10),
               ("softmax", "tpu.Softmax", 1 / 25), ("layernorm", "tpu.LayerNorm", 1 / 25))


@pytest.mark.parametrize("mode", HALF_MODES)
def test_random_networks_f16_bf16_bit_exact(tmp_path, mode):
    """F16/BF16: every output bit-exact to the Tpu interpreter (each reduction is its exact value
    rounded once, docs/quantization.md "F16/BF16 arithmetic"), through chains of several reducing
    ops; the reducing ops (conv, MatMul, Softmax, LayerNorm) must each occur in enough examples
    (average pools are rarer here: tests/test_half_exact.py and test_backend_ops cover them): a
    drawn run and a forced run per kind (HALF_FORCED: that op first), each forced example asserting
    its Tpu op, each kind's floor its forced share."""
    kinds = ("tpu.Conv2D", "tpu.MatMul", "tpu.Softmax", "tpu.LayerNorm", "pool_mode Avg")
    tally = FeatureTally(kinds)
    budget = max(50, settings.default.max_examples // 4)
    forced = [(first, op, max(1, round(budget * share))) for first, op, share in HALF_FORCED]

    def check(net, must):
        model, feed = net
        top = lowered(model, mode)
        want = interpret(top, feed)
        got, _ = run_bmodel(compile_for(top, "tiny", str(tmp_path / "m.bmodel")), feed)
        for name, w in want.items():
            assert_bit_exact(got[name], w, name)
        text = print_module(top.module)
        assert must in text, must
        tally.record(kind for kind in kinds if kind in text)

    settings(max_examples=budget - sum(n for _, _, n in forced))(given(networks(), st.just("tpu."))(check))()
    for first, op, n in forced:
        settings(max_examples=n)(given(networks(growing=first), st.just(op))(check))()
    for _, op, n in forced:
        tally.assert_each_in(n / budget, [op])


def test_an_ill_conditioned_f32_output_is_held_to_float32s_bound(tmp_path):
    """A LayerNorm over rows of 2 nearly equal values (after a 1x1 conv; 1/std up to 1/sqrt(eps)
    = 316): float32 cannot promise 1e-5 of the output's scale there (the Tpu interpreter itself is
    further than that from float64), so `assert_chain_close` would hold the cmodel and the
    interpreter each to its worst-case float32 bound: both are within it, it is at most 1e-2 of the
    scale (not vacuous), and a LayerNorm without eps, written out here, misses it by far."""
    from tests.f64_bound import reference_and_bound

    rng = np.random.default_rng(4)
    g = Graph(rng)
    g.shapes["x"] = (1, 2, 64, 2)
    conv = g.node("Conv", ["x", g.const((2, 2, 1, 1))], (1, 2, 64, 2), kernel_shape=[1, 1])
    out = g.node("LayerNormalization", [conv, g.const((2,)), g.const((2,))], (1, 2, 64, 2), axis=3, epsilon=1e-5)
    model = g.model({"x": (1, 2, 64, 2)}, out)
    x = rng.standard_normal((1, 2, 64, 1)).astype(np.float32)
    feed = {"x": np.concatenate([x, x + rng.uniform(-2e-3, 2e-3, x.shape).astype(np.float32)], axis=3)}
    top = lowered(model)
    want = interpret(top, feed)
    got, _ = run_bmodel(compile_for(top, "tiny", str(tmp_path / "m.bmodel")), feed)
    (exact, bound), = reference_and_bound(model, feed).values()
    scale = np.abs(exact).max()
    assert np.abs(want[out] - exact).max() > 1e-5 * scale  # measured: 3.8e-5, the cmodel's too
    assert bound.max() <= 1e-2 * scale  # measured: 3.5e-3
    for side in (got[out], want[out]):
        assert (np.abs(side - exact) <= bound).all()  # measured: 0.03 of the bound at most
    filt, w, b = (numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer)
    rows = np.einsum("oc,nchw->nohw", filt[:, :, 0, 0], feed["x"])  # the conv's output, in float64
    centred = rows - rows.mean(axis=3, keepdims=True)
    no_eps = centred / np.sqrt((centred**2).mean(axis=3, keepdims=True)) * w + b
    assert (np.abs(no_eps - exact) > bound).any()
    # as the properties see it: float64 rounded to float32 is 3.8e-5 of the scale from the
    # interpreter (not within 1e-5) but within its bound; the LayerNorm without eps is not
    assert_chain_close(model, feed, {out: exact.astype(np.float32)}, want)
    with pytest.raises(AssertionError, match="times its float32 bound"):
        assert_chain_close(model, feed, {out: no_eps.astype(np.float32)}, want)


def test_f32_overflow_inside_the_cmodel_is_inf_without_a_warning(tmp_path):
    """Exp then Mul(y, y) in F32: exp(89) and exp(50)^2 pass float32's largest value inside the
    records' arithmetic. The cmodel gives inf where the Tpu interpreter does (and finite values
    equal within 1e-5 elsewhere), with numpy's warnings turned into errors here: engine.execute's
    errstate (and inference's, on the interpreter's side) is what keeps the overflow silent."""
    g = Graph(np.random.default_rng(0))
    g.shapes["x"] = (1, 2, 4, 4)
    e = g.node("Exp", ["x"], (1, 2, 4, 4))
    out = g.node("Mul", [e, e], (1, 2, 4, 4))
    x = np.linspace(-3, 3, 32, dtype=np.float32).reshape(1, 2, 4, 4)
    x[0, 0, 0, :3] = [89.0, 50.0, 43.0]  # exp overflows; its square does; neither (e^86 < 3.4e38)
    feed = {"x": x}
    top = lowered(g.model({"x": (1, 2, 4, 4)}, out))
    bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        want = interpret(top, feed)
        got, _ = run_bmodel(bm, feed)
    assert np.isposinf(want[out][0, 0, 0, :2]).all() and np.isfinite(want[out][0, 0, 0, 2])
    assert np.array_equal(np.isposinf(got[out]), np.isposinf(want[out]))
    finite = np.isfinite(want[out])
    assert_f32_close(got[out][finite], want[out][finite], out)


@pytest.mark.parametrize("mode", ["F16", "BF16"])
def test_half_reductions_overflowing_are_inf_without_a_warning(tmp_path, mode):
    """ReduceSum and ReduceMean over C in F16/BF16 whose exact sums pass the type's largest value
    (the DragGAN case): inf where the exact sum is beyond it, bit-exact between the Tpu interpreter
    and the cmodel, no numpy warning (warnings are errors here: the interpreter's reduction helpers,
    interp/half.py, have no errstate of their own, and inference's without over= turns this red)."""
    big = {"F16": 40000.0, "BF16": 2.0e38}[mode]
    g = Graph(np.random.default_rng(0))
    g.shapes["x"] = (1, 3, 2, 4)
    total = g.node("ReduceSum", ["x", g.ints([1])], (1, 1, 2, 4), keepdims=1)
    out = g.node("ReduceMean", [total], (1, 1, 2, 1), axes=[3], keepdims=1)  # axes an attribute before opset 18
    x = np.full((1, 3, 2, 4), 1.0, np.float32)
    x[0, :2, 0, :2] = big  # two of three terms: the sum overflows, a third of it would not
    top = lowered(g.model({"x": (1, 3, 2, 4)}, out), mode)
    bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        want = run_module(top.module, top.weights, {"x": x}, keep_all=True)
        got, _ = run_bmodel(bm, {"x": x})
    assert np.isposinf(np.float64(want[total][0, 0, 0, :2])).all() and np.isfinite(np.float64(want[total][0, 0, 1])).all()
    assert np.isposinf(np.float64(got[out][0, 0, 0, 0])) and np.isfinite(np.float64(got[out][0, 0, 1, 0]))
    assert_bit_exact(got[out], want[out], out)


def test_dynamic_filter_conv_is_loaded_whole_from_its_activation(tmp_path):
    """Conv whose filter is computed (Relu of a second input): the filter is an activation, loaded
    whole from its activation address, while the input is sliced along H."""
    rng = np.random.default_rng(1)
    g = Graph(rng)
    g.shapes.update(x=(1, 2, 100, 30), f=(3, 2, 3, 3))
    filt = g.node("Relu", ["f"], (3, 2, 3, 3))
    out = g.node("Conv", ["x", filt], (1, 3, 100, 30), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    model = g.model({"x": (1, 2, 100, 30), "f": (3, 2, 3, 3)}, out)
    feed = {"x": rng.standard_normal((1, 2, 100, 30)).astype(np.float32),
            "f": rng.standard_normal((3, 2, 3, 3)).astype(np.float32)}
    top = lowered(model)
    want = interpret(top, feed)
    bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
    conv = next(op for op in top.main_func().body.block.ops if op.name == "tpu.Conv2D")
    assert conv.operands[1].owner.name == "tpu.Relu"
    assert conv.attributes["hsecs"].value.data > 1
    filter_addr = conv.operands[1].type.encoding.value.data
    loads = [r for r in isa.decode(bm.commands) if type(r) is isa.GdmaLoad and r.gaddr == filter_addr]
    assert [(r.n, r.c, r.h, r.w) for r in loads] == [(1, 3, 2, 9)]  # whole: (1, oc, ic, kh*kw)
    got, _ = run_bmodel(bm, feed)
    assert_f32_close(got[out], want[out], out)


def _conv_bmodel(tmp_path):
    rng = np.random.default_rng(2)
    g = Graph(rng)
    g.shapes["x"] = (1, 4, 8, 8)
    out = g.node("Conv", ["x", g.const((4, 4, 3, 3))], (1, 4, 8, 8), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    top = lowered(g.model({"x": (1, 4, 8, 8)}, out))
    return compile_for(top, "tiny", str(tmp_path / "m.bmodel")), {"x": rng.standard_normal((1, 4, 8, 8), np.float32)}


def test_out_of_bounds_local_access_names_instruction_op_and_lane(tmp_path):
    bm, feed = _conv_bmodel(tmp_path)
    records = isa.decode(bm.commands)
    i, load = next((i, r) for i, r in enumerate(records) if type(r) is isa.GdmaLoad and r.c == 4 and r.h == 8)
    records[i] = dataclasses.replace(load, laddr=0x3F10)
    bm.commands = isa.encode(records)
    with pytest.raises(TpudslError) as info:
        run_bmodel(bm, feed)
    assert re.fullmatch(rf"error: cmodel: gdma: dst_offset 0x400f >= 0x4000 \(lane 3\) at instruction {i} \(t0_conv\)",
                        str(info.value)), str(info.value)


def test_out_of_bounds_global_access_is_an_error(tmp_path):
    bm, feed = _conv_bmodel(tmp_path)
    records = isa.decode(bm.commands)
    i = max(i for i, r in enumerate(records) if isinstance(r, isa.GdmaStore))
    records[i] = dataclasses.replace(records[i], gaddr=0x10)
    bm.commands = isa.encode(records)
    with pytest.raises(TpudslError, match=rf"cmodel: gdma: dst_address 0x10\.\.0x410 is outside global memory "
                                          rf"\[0x1000, 0x[0-9a-f]+\) at instruction {i} \(t0_conv\)"):
        run_bmodel(bm, feed)


def test_headers_the_schema_accepts_but_the_cmodel_cannot_run_are_one_error(tmp_path):
    """What the header schema cannot see, the cmodel checks before it runs, one TpudslError each
    (each was a traceback or a silent run before): an input or output outside the global memory the
    header gives, a coefficient blob larger than its 'coeff_mem_bytes', a memory this machine cannot
    hold, engine counts that are not the stream's, a barrier in a one-core stream."""
    bm, feed = _conv_bmodel(tmp_path)
    h, records = bm.header, isa.decode(bm.commands)
    gmem_end = 0x1000 + h["coeff_mem_bytes"] + h["activation_mem_bytes"]  # tiny's global memory from 0x1000
    sync = [*records[:2], isa.CoreSync(0), *records[2:]]
    for changes, commands, message in [
        ({"inputs": [{**h["inputs"][0], "address": 0}]}, bm.commands,
         rf"'inputs\[0\]' \('x', 1024 bytes at 0x0\) is not inside global memory \[0x1000, {gmem_end:#x}\)"),
        ({"outputs": [{**h["outputs"][0], "address": gmem_end - 16}]}, bm.commands,
         rf"'outputs\[0\]' \('t0_conv', 1024 bytes at {gmem_end - 16:#x}\) is not inside global memory"),
        ({"coeff_mem_bytes": len(bm.coeffs) - 1}, bm.commands,
         rf"the coeffs section holds {len(bm.coeffs)} bytes, more than the header's 'coeff_mem_bytes' "
         rf"{len(bm.coeffs) - 1}"),
        ({"activation_mem_bytes": 1 << 62}, bm.commands,
         rf"cmodel: cannot allocate the bmodel's global memory, {h['coeff_mem_bytes'] + (1 << 62)} bytes"),
        ({"gdma_count": h["gdma_count"] - 1, "bdc_count": h["bdc_count"] + 1}, bm.commands,
         rf"the command stream holds {h['gdma_count']} GDMA and {h['bdc_count']} BDC instructions, the header says "
         rf"{h['gdma_count'] - 1} and {h['bdc_count'] + 1}"),
        ({"gdma_count": h["gdma_count"] + 1}, isa.encode(sync),
         r"barrier 0 \(CoreSync\) at instruction 2 of a one-core bmodel: barriers are for several cores"),
    ]:
        with pytest.raises(TpudslError, match=message):
            run_bmodel(dataclasses.replace(bm, header={**h, **changes}, commands=commands, debug=[]), feed)


def test_weights_too_big_for_local_memory_name_op_size_and_limit(tmp_path):
    g = Graph(np.random.default_rng(3))
    g.shapes["x"] = (1, 32, 4, 4)  # two groups: not sliced along C (a conv of one group or depthwise is)
    out = g.node("Conv", ["x", g.const((16, 16, 9, 9))], (1, 16, 4, 4), kernel_shape=[9, 9], pads=[4, 4, 4, 4],
                 group=2)
    top = lowered(g.model({"x": (1, 32, 4, 4)}, out))
    with pytest.raises(TpudslError, match=r"layer-group: 'tpu.Conv2D' op \"t0_conv\": its weights \(loaded whole, "
                                          r"never sliced\) need 20736 bytes per lane; chip tiny has 16384"):
        compile_for(top, "tiny", str(tmp_path / "m.bmodel"))


@pytest.mark.parametrize("h, w, k", [(62, 45, 6), (63, 45, 6), (63, 45, 4), (64, 45, 4), (74, 37, 6), (75, 37, 6)])
def test_one_batch_fits_tiny_is_layer_groups_bound(tmp_path, h, w, k):
    """The generator's hand count of a batched MatMul's batch (_one_batch_fits_tiny) on both sides
    of its bound: where it fits, the compiled MatMul matches the Tpu interpreter; where not, layer-group
    refuses it with its message. (64, 45) x (45, 4) passed the count without the bank rule but is refused."""
    g = Graph(np.random.default_rng(h * w * k))
    g.shapes["x"] = (1, 2, h, w)
    out = g.node("MatMul", ["x", g.const((1, 2, w, k))], (1, 2, h, k))
    top = lowered(g.model({"x": (1, 2, h, w)}, out))
    if not _one_batch_fits_tiny(h, w, k):
        with pytest.raises(TpudslError, match=r"layer-group: 'tpu.MatMul' op \"t0_matmul\" needs \d+ bytes of local "
                                              r"memory per lane even in slices of one row; chip tiny has 16384"):
            compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
        return
    feed = {"x": np.random.default_rng(k).standard_normal((1, 2, h, w)).astype(np.float32)}
    want = interpret(top, feed)
    got, _ = run_bmodel(compile_for(top, "tiny", str(tmp_path / "m.bmodel")), feed)
    for name, value in want.items():
        assert_f32_close(got[name], value, name)


def test_model_runner_runs_a_bmodel_by_name_and_profiles_it(tmp_path, capsys):
    from tpudsl.cli import model_runner

    rng = np.random.default_rng(4)
    g = Graph(rng)
    g.shapes["x"] = (1, 4, 8, 8)
    conv = g.node("Conv", ["x", g.const((4, 4, 3, 3))], (1, 4, 8, 8), kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    out = g.node("MaxPool", [conv], (1, 4, 4, 4), kernel_shape=[2, 2], strides=[2, 2])
    top = lowered(g.model({"x": (1, 4, 8, 8)}, out))
    feed = {"x": rng.standard_normal((1, 4, 8, 8), np.float32)}
    want = interpret(top, feed)
    header = compile_for(top, "tiny", str(tmp_path / "m.bmodel")).header
    np.savez(tmp_path / "in.npz", **feed)
    model_runner.run(["--input", str(tmp_path / "in.npz"), "--model", str(tmp_path / "m.bmodel"),
                      "--output", str(tmp_path / "out.npz"), "--profile"])
    got = dict(np.load(tmp_path / "out.npz"))
    assert list(got) == [out]
    assert_f32_close(got[out], want[out], out)
    lines = capsys.readouterr().out.splitlines()
    assert {line.split()[0] for line in lines[1:]} == {conv, out, "total"}
    serial, overlapped = (int(line.split()[-1 if k == 0 else -2]) for k, line in enumerate(lines[-2:]))
    assert (serial, overlapped) == (header["estimated_cycles"], header["overlapped_cycles"])  # codegen's
    assert lines[-1].startswith("total with GDMA and BDC overlapped") and overlapped <= serial


@pytest.mark.parametrize("par", [1, 2])
def test_reordered_conv_filter_layout(tmp_path, par):
    """A filter in --weight-reorder's layout [1, oc, ceil(ic/P), kh*kw*P] (docs/bmodel.md:
    reordered[0, o, b, k*P + p] = filter[o, b*P + p, k], zero-filled) computes what the plain filter does."""
    rng = np.random.default_rng(6)
    g = Graph(rng)
    g.shapes["x"] = (1, 3, 12, 10)
    out = g.node("Conv", ["x", g.const((5, 3, 3, 2))], (1, 5, 10, 9), kernel_shape=[3, 2])
    top = lowered(g.model({"x": (1, 3, 12, 10)}, out))
    feed = {"x": rng.standard_normal((1, 3, 12, 10), np.float32)}
    want = interpret(top, feed)
    conv = next(op for op in top.main_func().body.block.ops if op.name == "tpu.Conv2D")
    weight_op = conv.operands[1].owner
    plain = top.weight_of(weight_op).reshape(5, 3, 6)
    blocks = -(-3 // par)
    packed = np.zeros((1, 5, blocks, 6 * par), np.float32)
    for o in range(5):
        for c in range(3):
            for k in range(6):
                packed[0, o, c // par, k * par + c % par] = plain[o, c, k]
    from xdsl.dialects.builtin import TensorType, f32
    from xdsl.rewriter import Rewriter

    top.weights[next(k for k, v in top.weights.items() if v is top.weight_of(weight_op))] = packed
    Rewriter.replace_value_with_new_type(weight_op.results[0], TensorType(f32, packed.shape))
    bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
    convs = [r for r in isa.decode(bm.commands) if isinstance(r, isa.BdcConv)]
    assert {r.ic_parallel for r in convs} == {par}
    got, _ = run_bmodel(bm, feed)
    assert_f32_close(got[out], want[out], out)


def test_model_runner_bmodel_bad_inputs_are_one_line_errors(tmp_path):
    """Also with --dump_all_tensors (the inputs are checked before the run); with --profile too, it
    is an error (two runs)."""
    from tpudsl.cli import model_runner

    g = Graph(np.random.default_rng(8))
    g.shapes["x"] = (1, 2, 4, 4)
    g.node("Relu", ["x"], (1, 2, 4, 4))
    compile_for(lowered(g.model({"x": (1, 2, 4, 4)}, "t0_relu")), "tiny", str(tmp_path / "m.bmodel"))
    np.savez(tmp_path / "bad.npz", x=np.zeros((1, 2, 4, 5), np.float32))
    argv = ["--input", str(tmp_path / "bad.npz"), "--model", str(tmp_path / "m.bmodel"), "--output", str(tmp_path / "o.npz")]
    with pytest.raises(TpudslError, match=r"input 'x' has shape 1x2x4x5, expected shape 1x2x4x4"):
        model_runner.run(argv)
    with pytest.raises(TpudslError, match=r"input 'x' has shape 1x2x4x5, expected shape 1x2x4x4"):
        model_runner.run([*argv, "--dump_all_tensors"])
    with pytest.raises(TpudslError, match=r"--profile and --dump_all_tensors are two runs of a .bmodel: give one"):
        model_runner.run([*argv, "--dump_all_tensors", "--profile"])
    assert not (tmp_path / "o.npz").exists()

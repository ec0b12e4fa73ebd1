"""Conv results handed to convs in channels-last layout (kernels_nn._conv_view, chosen by the
interpreter's plan when every reader is a Winograd conv): random conv -> readers modules against
onnxruntime, every value by name, and which values are channels-last views against the rule."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import onnxruntime as ort

from onnx_node.harness import apply_canonicalize, convert_onnx
from tpudsl.interp import ModuleInterpreter, kernels_nn

from tests.feature_tally import FeatureTally, forced_runs, run_each

# conv kinds: (kernel, stride, group is the channel count); thresholds lowered below so that small
# channel counts take Winograd
KINDS = {"winograd": (3, 1, False), "pointwise": (1, 1, False), "im2col": (3, 2, False), "depthwise": (3, 1, True)}
PRODUCES_CHANNELS_LAST = ("winograd", "pointwise")


@st.composite
def modules(draw):
    # the structure from one seed: hypothesis' derandomized draws favour the first choices so much
    # that the rarer combinations (a depthwise reader beside the copying ones) missed their floors
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    readers = ["winograd"] * int(rng.integers(1, 3))
    if rng.random() < 0.6:  # a reader that keeps NCHW beside them
        readers.append(str(rng.choice(["sigmoid", "depthwise", "pointwise", "im2col"])))
    return dict(producer=str(rng.choice(["winograd", "pointwise", "im2col", "depthwise"], p=[0.4, 0.4, 0.1, 0.1])),
                readers=readers, returned=bool(rng.random() < 0.25), n=int(rng.integers(1, 3)),
                c=int(rng.integers(2, 7)), size=int(rng.integers(4, 12)), relu=bool(rng.random() < 0.5),
                seed=int(rng.integers(0, 2**16)))


def readers_beside(p, extra, returned):
    """p's producer made one with a channels-last form, read by its Winograd convs and `extra`."""
    producer = p["producer"] if p["producer"] in PRODUCES_CHANNELS_LAST else PRODUCES_CHANNELS_LAST[p["seed"] % 2]
    return {**p, "producer": producer, "readers": [r for r in p["readers"] if r == "winograd"] + extra,
            "returned": returned}


LAYOUT_FEATURES = ("channels-last handoff", "a depthwise reader keeps NCHW", "a Sigmoid reader keeps NCHW",
                   "a pointwise or im2col reader keeps NCHW", "returned keeps NCHW",
                   "Winograd reads a channels-last input", "batch 2", "fused relu on the handoff")
# Runs showing their cases in every example, a tenth of the 80 each (drawn, "batch 2" fell to 0 of
# 80 and "a Sigmoid reader keeps NCHW" to 7 in the dev profile): the handoff to Winograd readers
# only, on a batch of 2 with the relu fused; a depthwise reader beside them, the result returned;
# a Sigmoid and a pointwise or im2col reader beside them.
LAYOUT_FORCED = (
    (modules().map(lambda p: {**readers_beside(p, [], False), "n": 2, "relu": True}),
     ("channels-last handoff", "Winograd reads a channels-last input", "batch 2", "fused relu on the handoff")),
    (modules().map(lambda p: readers_beside(p, ["depthwise"], True)),
     ("a depthwise reader keeps NCHW", "returned keeps NCHW")),
    (modules().map(lambda p: readers_beside(p, ["sigmoid", ("pointwise", "im2col")[p["seed"] % 2]], p["returned"])),
     ("a Sigmoid reader keeps NCHW", "a pointwise or im2col reader keeps NCHW")))


def conv_node(rng, kind, x, y, c, inits, relu):
    k, s, depthwise = KINDS[kind]
    w = rng.uniform(-1, 1, (c, 1 if depthwise else c, k, k)).astype(np.float32)
    b = rng.uniform(-1, 1, c).astype(np.float32)
    inits += [numpy_helper.from_array(w, f"{y}_w"), numpy_helper.from_array(b, f"{y}_b")]
    conv = helper.make_node("Conv", [x, f"{y}_w", f"{y}_b"], [y if not relu else f"{y}_pre"], strides=[s, s],
                            pads=[k // 2] * 4, group=c if depthwise else 1)
    return [conv] + ([helper.make_node("Relu", [f"{y}_pre"], [y])] if relu else [])


def test_conv_results_go_channels_last_to_convs_that_copy_their_input(monkeypatch):
    """A Winograd or pointwise conv (or another kind, which has no channels-last form) read by 1-2
    Winograd convs and maybe a depthwise, pointwise or im2col conv or a Sigmoid beside them, or also
    returned: every value equals onnxruntime's, and the producer's result is a channels-last view
    exactly when it has that form and every reader is a Winograd conv. Each case in a tenth of the
    80 examples: 56 drawn, then three runs of 8 (LAYOUT_FORCED) that show their cases in every
    example."""
    for name, value in (("WINOGRAD_MIN_CHANNELS", 1), ("WINOGRAD_MIN_TILES", 1), ("WINOGRAD_F4_MIN_TILES", 4)):
        monkeypatch.setattr(kernels_nn, name, value)
    tally = FeatureTally(LAYOUT_FEATURES)

    def check(p, forced):
        rng = np.random.default_rng(p["seed"])
        c, inits = p["c"], []
        nodes = conv_node(rng, p["producer"], "x", "a", c, inits, p["relu"])
        outs = ["a"] if p["returned"] else []
        for i, kind in enumerate(p["readers"]):
            if kind == "sigmoid":
                nodes.append(helper.make_node("Sigmoid", ["a"], [f"r{i}"]))
            else:
                nodes += conv_node(rng, kind, "a", f"r{i}", c, inits, False)
            outs.append(f"r{i}")
        shape = [p["n"], c, p["size"], p["size"]]
        graph = helper.make_graph(nodes, "layout", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                                  [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        x = rng.uniform(-1, 1, shape).astype(np.float32)
        expected = dict(zip(outs, ort_session(model).run(outs, {"x": x}), strict=True))
        expected_a = ort_session(_with_output(model, "a")).run(["a"], {"x": x})[0]
        top = apply_canonicalize(convert_onnx(model, "layout"))  # the Relu fused into the conv
        it = ModuleInterpreter(top.module, top.weights, threads=1)
        it.init()
        got = it.inference({"x": x}, keep_all=True)
        it.deinit()
        for name, want in [*expected.items(), ("a", expected_a)]:
            np.testing.assert_allclose(got[name], want, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(want).max())),
                                       err_msg=name)
        convs_copy = all(r == "winograd" for r in p["readers"])
        handoff = p["producer"] in PRODUCES_CHANNELS_LAST and convs_copy and not p["returned"]
        a = got["a"]
        assert (a.strides[1] == a.itemsize and not a.flags.c_contiguous) == handoff, (p, a.strides)
        seen = {f for f, present in (
            ("channels-last handoff", handoff),
            ("a depthwise reader keeps NCHW", p["producer"] in PRODUCES_CHANNELS_LAST and "depthwise" in p["readers"]),
            ("a Sigmoid reader keeps NCHW", p["producer"] in PRODUCES_CHANNELS_LAST and "sigmoid" in p["readers"]),
            ("a pointwise or im2col reader keeps NCHW",
             p["producer"] in PRODUCES_CHANNELS_LAST and {"pointwise", "im2col"} & set(p["readers"])),
            ("returned keeps NCHW", p["producer"] in PRODUCES_CHANNELS_LAST and p["returned"]),
            ("Winograd reads a channels-last input", handoff and "winograd" in p["readers"]),
            ("batch 2", handoff and p["n"] == 2), ("fused relu on the handoff", handoff and p["relu"])) if present}
        assert seen.issuperset(forced), f"a forced example without {set(forced) - seen}: {p}"
        tally.record(seen)

    each = 8
    run_each(check, forced_runs(modules(), LAYOUT_FORCED, 80, each))
    tally.assert_each_in(each / 80)


def ort_session(model):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def _with_output(model, name):
    """`model` with value `name` as its only output."""
    graph = helper.make_graph(model.graph.node, "layout", model.graph.input,
                              [helper.make_tensor_value_info(name, TensorProto.FLOAT, None)], model.graph.initializer)
    return helper.make_model(graph, opset_imports=model.opset_import)

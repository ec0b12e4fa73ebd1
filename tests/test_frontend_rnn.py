"""ONNX LSTM and GRU: convert_onnx + the Top kernels (tpudsl/interp/kernels_rnn.py) against
onnxruntime, over directions, layouts, initial states, bias and GRU's linear_before_reset; a
property over random sizes; and the refusals of what is not modelled."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from frontend_support import check, make_model, run_ort, run_top
from hypothesis import settings
from hypothesis import strategies as st
from onnx import helper, numpy_helper

from feature_tally import FeatureTally, forced_runs, run_each
from onnx_node.harness import assert_close
from tpudsl.dialects.attrs import from_attr
from tpudsl.frontend.onnx_import import convert_onnx
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import TopModule

GATES = {"LSTM": 4, "GRU": 3}
STATES = {"LSTM": ("initial_h", "initial_c"), "GRU": ("initial_h",)}
OUTPUTS = {"LSTM": ("Y", "Y_h", "Y_c"), "GRU": ("Y", "Y_h")}


def rnn_model(op: str, seq: int, batch: int, size: int, hidden: int, direction: str = "forward", layout: int = 0,
              bias: bool = True, states: bool = True, outputs: tuple[bool, ...] = (True, True, True),
              seed: int = 0, peepholes: bool = False, **attrs):
    """A single LSTM/GRU node with constant weights (scaled so that the gates do not all saturate)
    and its feed; `outputs` says which results the node names (the others are ""); `peepholes`:
    an LSTM's P. The weights and the feed (transposed for layout 1) depend on the seed, not on the layout."""
    rng = np.random.default_rng(seed)
    dirs, gates = (2 if direction == "bidirectional" else 1), GATES[op]
    scale = 1 / np.sqrt(hidden)
    inits = {"W": rng.uniform(-scale, scale, (dirs, gates * hidden, size)),
             "R": rng.uniform(-scale, scale, (dirs, gates * hidden, hidden))}
    names = ["X", "W", "R"]
    if bias or states:
        names.append("B" if bias else "")
        if bias:
            inits["B"] = rng.uniform(-scale, scale, (dirs, 2 * gates * hidden))
    feed = {"X": rng.standard_normal((seq, batch, size)).astype(np.float32)}
    if states:
        names.append("")  # sequence_lens
        for s in STATES[op]:
            names.append(s)
            feed[s] = rng.standard_normal((dirs, batch, hidden)).astype(np.float32)
    if peepholes:
        names += [""] * (7 - len(names)) + ["P"]
        inits["P"] = rng.uniform(-1, 1, (dirs, 3 * hidden))
    if layout:
        feed = {k: v.transpose(1, 0, 2) for k, v in feed.items()}
    outs = [name if used else "" for name, used in zip(OUTPUTS[op], outputs, strict=False)]
    while outs and not outs[-1]:
        outs.pop()
    node = helper.make_node(op, names, outs, hidden_size=hidden, direction=direction, layout=layout, **attrs)
    model = make_model([node], {k: v.shape for k, v in feed.items()}, [o for o in outs if o],
                       {k: v.astype(np.float32) for k, v in inits.items()}, opset=14)
    return model, feed


def check_rnn(op: str, *args, layout: int = 0, **kwargs) -> TopModule:
    """convert_onnx + the Top interpreter against onnxruntime. onnxruntime refuses layout 1
    (batch-major), so a layout 1 model is checked against the layout 0 twin (same weights) on the
    transposed feed, its outputs transposed back: Y [seq, dirs, batch, H] -> [batch, seq, dirs, H],
    the final states [dirs, batch, H] -> [batch, dirs, H]."""
    model, feed = rnn_model(op, *args, layout=layout, **kwargs)
    if not layout:
        return check(model, feed, op_names=[f"top.{op}"])
    twin, _ = rnn_model(op, *args, layout=0, **kwargs)
    ref = run_ort(twin, {k: v.transpose(1, 0, 2) for k, v in feed.items()})
    mod = convert_onnx(model, "test")
    ours = run_top(mod, feed)
    for name, want in ref.items():
        want = want.transpose(2, 0, 1, 3) if name == "Y" else want.transpose(1, 0, 2)
        assert_close(ours[name], want, 1e-4, 1e-5, what=f"output {name}")
    return mod


@pytest.mark.parametrize("op", ["LSTM", "GRU"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("layout", [0, 1])
def test_against_onnxruntime(op, direction, layout):
    check_rnn(op, 5, 3, 4, 6, direction, layout=layout)


@pytest.mark.parametrize("op", ["LSTM", "GRU"])
@pytest.mark.parametrize("bias,states", [(False, False), (False, True), (True, False)])
def test_without_bias_or_initial_states(op, bias, states):
    model, feed = rnn_model(op, seq=4, batch=2, size=3, hidden=5, direction="bidirectional", bias=bias, states=states)
    check(model, feed)


@pytest.mark.parametrize("linear_before_reset", [0, 1])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_gru_linear_before_reset(linear_before_reset, direction):
    model, feed = rnn_model("GRU", seq=4, batch=2, size=3, hidden=5, direction=direction,
                            linear_before_reset=linear_before_reset)
    mod = check(model, feed)
    gru = next(op for op in mod.module.walk() if op.name == "top.GRU")
    assert from_attr(gru.attributes["linear_before_reset"]) is bool(linear_before_reset)


@pytest.mark.parametrize("op", ["LSTM", "GRU"])
def test_only_some_outputs(op):
    """A node that names only its last output (Y and the others `none`)."""
    used = (False, False, True) if op == "LSTM" else (False, True)
    model, feed = rnn_model(op, seq=3, batch=2, size=3, hidden=4, direction="reverse", outputs=used)
    check(model, feed)


PROPERTY_FEATURES = ("bidirectional", "reverse", "layout 1")


@st.composite
def rnn_cases(draw, direction: str | None = None, layout: int | None = None):
    """(op, sizes, keyword arguments of check_rnn): random sizes, optional operands and GRU's
    linear_before_reset; `direction` and `layout` drawn unless given."""
    op = draw(st.sampled_from(["LSTM", "GRU"]))
    sizes = tuple(draw(st.integers(1, high)) for high in (6, 4, 5, 8))  # seq, batch, input, hidden
    kwargs = {"direction": direction or draw(st.sampled_from(["forward", "reverse", "bidirectional"])),
              "layout": draw(st.integers(0, 1)) if layout is None else layout,
              "bias": draw(st.booleans()), "states": draw(st.booleans()), "seed": draw(st.integers(0, 2**16))}
    if op == "GRU":
        kwargs["linear_before_reset"] = draw(st.integers(0, 1))
    return op, sizes, kwargs


def test_random_sizes_against_onnxruntime():
    """Random sizes, directions, layouts, optional operands and (GRU) linear_before_reset; each of
    bidirectional, reverse and layout 1 in at least a fifth of the examples by construction."""
    tally = FeatureTally(PROPERTY_FEATURES)
    total = max(10, settings.default.max_examples // 4)
    each = total // 5

    def prop(case, forced):
        op, sizes, kwargs = case
        check_rnn(op, *sizes, **kwargs)
        tally.record(name for name, present in (
            ("bidirectional", kwargs["direction"] == "bidirectional"), ("reverse", kwargs["direction"] == "reverse"),
            ("layout 1", kwargs["layout"] == 1)) if present)

    forced = [(rnn_cases(direction="bidirectional"), ("bidirectional",)), (rnn_cases(direction="reverse"), ("reverse",)),
              (rnn_cases(layout=1), ("layout 1",))]
    run_each(prop, forced_runs(rnn_cases(), forced, total, each))
    tally.assert_each_in(each / total)


@pytest.mark.parametrize("attrs,inputs,message", [
    ({"activations": ["Relu", "Tanh", "Tanh"]}, {}, "activations ['Relu', 'Tanh', 'Tanh'] are not supported"),
    ({"clip": 1.0}, {}, "attribute 'clip' is not supported"),
    ({"input_forget": 1}, {}, "input_forget 1"),
    ({}, {"sequence_lens": 2}, "sequence_lens is not supported unless a constant of full lengths (3)"),
    ({}, {"hidden_size": 5}, "hidden_size 5 differs from the recurrence's 4"),
])
def test_refusals_name_what_is_not_modelled(attrs, inputs, message):
    model, _ = rnn_model("LSTM", seq=3, batch=2, size=3, hidden=4, **attrs)
    node = model.graph.node[0]
    extra = {}
    if "hidden_size" in inputs:
        next(a for a in node.attribute if a.name == "hidden_size").i = inputs["hidden_size"]
    if "sequence_lens" in inputs:
        extra["lens"] = np.full(2, inputs["sequence_lens"], np.int32)
        node.input[4] = "lens"
    model.graph.initializer.extend(numpy_helper.from_array(v, k) for k, v in extra.items())
    with pytest.raises(TpudslError) as e:
        convert_onnx(model, "test")
    assert message in str(e.value)


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("layout", [0, 1])
@pytest.mark.parametrize("states", [True, False])
def test_lstm_peepholes_against_onnxruntime(direction, layout, states):
    """ONNX's P (i and f see the previous cell state, o the new one): top.LSTM's peephole operand."""
    mod = check_rnn("LSTM", 3, 2, 3, 4, direction=direction, layout=layout, states=states, peepholes=True)
    (lstm,) = [o for o in mod.module.walk() if o.name == "top.LSTM"]
    assert len(lstm.operands) == 8


def test_full_sequence_lens_is_accepted():
    """sequence_lens of every sequence at full length changes nothing."""
    model, feed = rnn_model("GRU", seq=3, batch=2, size=3, hidden=4)
    model.graph.node[0].input[4] = "lens"
    model.graph.initializer.append(numpy_helper.from_array(np.full(2, 3, np.int32), "lens"))
    check(model, feed)

"""concat_chain.py: Concat chains (DenseNet's dense blocks) written into one buffer, against
np.concatenate of every value, with every intermediate kept by name (keep_all) after the whole
inference, and the plan (which values share the chain's buffer) against the rule written here."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from onnx import TensorProto, helper

from onnx_node.harness import convert_onnx
from tpudsl.interp import ModuleInterpreter

from tests.feature_tally import FeatureTally, forced_runs, run_each


@st.composite
def chains(draw):
    axis = draw(st.sampled_from([1, 1, 1, 2, -1]))
    rank = 4 if axis != -1 else 3
    # the dims before the axis have extent 1 in most examples (the chained case)
    shape = [draw(st.integers(1, 4)) for _ in range(rank)]
    ax = axis % rank
    shape[:ax] = [1] * ax
    if draw(st.integers(0, 3)) == 0:  # a batch above 1
        shape[0] = draw(st.integers(2, 3))
    steps = [dict(new=[draw(st.integers(1, 3)) for _ in range(draw(st.integers(1, 2)))],
                  reads_chain=draw(st.sampled_from([True, False, False])),
                  returned=draw(st.sampled_from([True, False, False])))
             for _ in range(draw(st.sampled_from([1, 2, 3, 4, 5])))]
    return dict(shape=shape, axis=ax, steps=steps, fork=draw(st.sampled_from([True, False, False])),
                seed=draw(st.integers(0, 2**16)))


def steps_at_least(p, n):
    """p's steps, the last repeated up to n."""
    return [dict(s) for s in p["steps"]] + [dict(p["steps"][-1]) for _ in range(n - len(p["steps"]))]


def chained_everything(p):
    """A chain of 3 Concats or more along axis 2 (extent 1 before it), its first step reading the
    chain and returned, x1 forked."""
    shape, steps = [1, 1, *p["shape"][2:]], steps_at_least(p, 3)
    steps[0] |= dict(reads_chain=True, returned=True)
    return {**p, "shape": shape, "axis": 2, "steps": steps, "fork": True}


def leading_dims(p):
    """2 Concats or more on a batch above 1 (not chained)."""
    return {**p, "shape": [max(p["shape"][0], 2), *p["shape"][1:]], "steps": steps_at_least(p, 2)}


CHAIN_FEATURES = ("chained", "not chained: leading dims", "fork", "operand reads the chain", "intermediate returned",
                  "axis not 1")
# Runs showing their cases in every example, a tenth of the 60 each (drawn, "axis not 1" and "not
# chained: leading dims" fell to 2 of 60 in the dev profile).
CHAIN_FORCED = ((chains().map(chained_everything),
                 ("chained", "fork", "operand reads the chain", "intermediate returned", "axis not 1")),
                (chains().map(leading_dims), ("not chained: leading dims",)))


def build(p):
    """(ONNX model, inputs, {value name: expected array}, chain value names, their buffer groups)."""
    rng = np.random.default_rng(p["seed"])
    ax = p["axis"]

    def sized(n):
        return [n if i == ax else d for i, d in enumerate(p["shape"])]

    inputs = {"x0": rng.standard_normal(p["shape"]).astype(np.float32)}
    expected = dict(inputs)
    nodes, outputs, names = [], [], ["x0"]
    for k, step in enumerate(p["steps"], 1):
        operands = [names[-1]]
        for j, n in enumerate(step["new"]):
            nm = f"y{k}_{j}"
            inputs[nm] = expected[nm] = rng.standard_normal(sized(n)).astype(np.float32)
            operands.append(nm)
        if step["reads_chain"]:  # an operand computed from the chain's value so far
            nodes.append(helper.make_node("Neg", [names[-1]], [f"neg{k}"]))
            expected[f"neg{k}"] = -expected[names[-1]]
            operands.append(f"neg{k}")
        nodes.append(helper.make_node("Concat", operands, [f"x{k}"], axis=ax))
        expected[f"x{k}"] = np.concatenate([expected[o] for o in operands], axis=ax)
        names.append(f"x{k}")
        if step["returned"] and k < len(p["steps"]):
            outputs.append(f"x{k}")
    forked = p["fork"] and len(names) > 2
    if forked:  # a second Concat extending x1: neither extends it in place
        nodes.append(helper.make_node("Concat", ["x1", "x0"], ["fork"], axis=ax))
        expected["fork"] = np.concatenate([expected["x1"], expected["x0"]], axis=ax)
        outputs.append("fork")
    outputs.append(names[-1])
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape)) for n, a in inputs.items()],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, list(expected[o].shape)) for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model, inputs, expected, names, forked


def buffer_groups(p, names, forked) -> list[list[str]]:
    """The rule: Concats x1, x2, ... each extending the previous one form a chain when the dims
    before the axis have extent 1; a value two Concats extend ends a chain."""
    if np.prod(p["shape"][:p["axis"]]) != 1:
        return []
    members = names[1:]
    if forked:  # x1 ends its chain: the fork and x2 each are (or start) another
        groups = [["x1"], members[1:], ["fork"]]
    else:
        groups = [members]
    return [g for g in groups if len(g) >= 2]


def test_concat_chains_match_np_concatenate():
    """Random chains of 1-5 Concats along axis 1, 2 or -1, 1-2 new operands each, some computed from
    the chain's value so far, intermediates returned, a second Concat extending x1 (fork), batch or
    leading dims above 1: every value (kept by name, read after the whole inference) equals
    np.concatenate's, and exactly the values the rule chains share one buffer. Each case in a tenth
    of the 60 examples: 48 drawn, then two runs of 6 (CHAIN_FORCED) that show their cases in every
    example."""
    tally = FeatureTally(CHAIN_FEATURES)

    def check(p, forced):
        model, inputs, expected, names, forked = build(p)
        top = convert_onnx(model, "chain")
        it = ModuleInterpreter(top.module, top.weights, threads=1)
        it.init()
        got = it.inference(inputs, keep_all=True)
        outs = it.inference(inputs)
        it.deinit()
        for name, want in expected.items():
            np.testing.assert_array_equal(got[name], want, err_msg=name)
        for name, value in outs.items():
            np.testing.assert_array_equal(value, expected[name], err_msg=name)
        groups = buffer_groups(p, names, forked)
        in_group = {n: i for i, g in enumerate(groups) for n in g}
        values = [n for n in expected if n.startswith(("x", "fork")) and n != "x0"]
        for i, a in enumerate(values):
            for b in values[i + 1:]:
                shared = a in in_group and in_group.get(b) == in_group[a]
                assert np.shares_memory(got[a], got[b]) == shared, (a, b, groups)
        seen = set()
        if groups:
            seen.add("chained")
        if np.prod(p["shape"][:p["axis"]]) != 1 and len(names) > 2:
            seen.add("not chained: leading dims")
        if forked:
            seen.add("fork")
        if any(s["reads_chain"] for s in p["steps"]) and groups:
            seen.add("operand reads the chain")
        if any(s["returned"] for s in p["steps"][:-1]) and groups:
            seen.add("intermediate returned")
        if p["axis"] != 1 and groups:
            seen.add("axis not 1")
        assert seen.issuperset(forced), f"a forced example without {set(forced) - seen}: {p}"
        tally.record(seen)

    each = 6
    run_each(check, forced_runs(chains(), CHAIN_FORCED, 60, each))
    tally.assert_each_in(each / 60)

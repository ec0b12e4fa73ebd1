"""inplace.py: element-wise steps writing into their dying operand, on random graphs, against the same
interpreter with in-place disabled (bit-identical), the caller's inputs and every returned value
unchanged, and which steps wrote in place against the rule written here from the Top module."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from onnx_node.harness import convert_onnx
from tpudsl.interp import ModuleInterpreter
from tpudsl.interp.kernels_tpu import ALL_KERNELS

from tests.feature_tally import FeatureTally

C, H, W = 3, 4, 5
FULL, FLAT, CHANNEL = [1, C, H, W], [1, C, H * W], [1, C, 1, 1]
UNARY = ["Relu", "Sigmoid", "Tanh", "HardSigmoid", "Clip", "BatchNormalization", "MulConst", "AddConst", "Gelu"]
BINARY = ["Add", "Sub", "Mul"]


@st.composite
def graphs(draw):
    """Nodes as (op, operand indices into the values so far, ...); value 0 and 1 are the graph inputs
    x (FULL) and b (CHANNEL, a broadcast operand)."""
    nodes, shapes, views = [], [FULL, CHANNEL], []
    for _ in range(draw(st.integers(2, 9))):
        full = [i for i, s in enumerate(shapes) if s != CHANNEL]
        # mostly the newest value (chains), sometimes an older one (a second reader) or the input
        pick = st.one_of(st.just(full[-1]), st.just(full[-1]), st.sampled_from(full))
        kind = draw(st.sampled_from(["unary"] * 3 + ["binary", "broadcast", "broadcast", "reshape", "view, then its base"]))
        if kind == "unary":
            nodes.append((draw(st.sampled_from(UNARY)), [draw(pick)]))
        elif kind == "binary":
            same = [i for i in full if shapes[i] == shapes[full[-1]]]
            nodes.append((draw(st.sampled_from(BINARY)), [full[-1], draw(st.sampled_from(same))]))
        elif kind == "broadcast":
            x = draw(pick)
            if shapes[x] != FULL:
                nodes.append(("Reshape", [x]))
                shapes.append(FULL)
                x = len(shapes) - 1
            ops = [x, 1][:: draw(st.sampled_from([1, -1]))]
            nodes.append((draw(st.sampled_from(BINARY)), ops))
        elif kind == "reshape":
            nodes.append(("Reshape", [draw(pick)]))
        else:  # a Reshape view of x, returned, then x read once more (its last reader)
            x = full[-1]
            nodes.append(("Reshape", [x]))
            shapes.append(FLAT if shapes[x] == FULL else FULL)
            views.append(len(shapes) - 1)
            nodes.append((draw(st.sampled_from(UNARY)), [x]))
        operand = shapes[nodes[-1][1][0]]
        shapes.append(operand if nodes[-1][0] != "Reshape" else (FLAT if operand == FULL else FULL))
    returned = sorted({len(shapes) - 1, *views} | set(draw(st.lists(st.integers(2, len(shapes) - 1), max_size=2))))
    return dict(nodes=nodes, shapes=shapes, returned=returned, seed=draw(st.integers(0, 2**16)))


def build(p):
    """(ONNX model, inputs)."""
    rng = np.random.default_rng(p["seed"])
    names = ["x", "b"]
    nodes, inits = [], []
    for k, (op, ops) in enumerate(p["nodes"]):
        out, ins = f"v{k}", [names[i] for i in ops]
        c = lambda suffix, a: (inits.append(numpy_helper.from_array(np.asarray(a, np.float32), f"{out}_{suffix}")),  # noqa: E731
                               f"{out}_{suffix}")[1]
        if op == "Reshape":
            shape = p["shapes"][len(names)]
            nodes.append(helper.make_node("Reshape", ins + [f"{out}_shape"], [out]))
            inits.append(numpy_helper.from_array(np.asarray(shape, np.int64), f"{out}_shape"))
        elif op == "Clip":
            nodes.append(helper.make_node("Clip", ins + [c("lo", -0.5), c("hi", 0.7)], [out]))
        elif op == "BatchNormalization":
            params = [c("g", rng.uniform(0.5, 2, C)), c("beta", rng.standard_normal(C)),
                      c("mean", rng.standard_normal(C)), c("var", rng.uniform(0.5, 2, C))]
            nodes.append(helper.make_node(op, ins + params, [out]))
        elif op in ("MulConst", "AddConst"):
            nodes.append(helper.make_node(op[:3], ins + [c("k", rng.uniform(0.5, 1.5))], [out]))
        elif op == "Gelu":
            nodes.append(helper.make_node("Gelu", ins, [out]))
        else:
            nodes.append(helper.make_node(op, ins, [out]))
        names.append(out)
    x = rng.standard_normal(FULL).astype(np.float32)
    b = rng.standard_normal(CHANNEL).astype(np.float32)
    graph = helper.make_graph(
        nodes, "inplace",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, FULL), helper.make_tensor_value_info("b", TensorProto.FLOAT, CHANNEL)],
        [helper.make_tensor_value_info(names[i], TensorProto.FLOAT, p["shapes"][i]) for i in p["returned"]],
        initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]), {"x": x, "b": b}


def recording(calls: list):
    """ALL_KERNELS with every in-place kernel recording (attrs id, whether it got `out`, whether it
    returned it)."""

    def wrap(run):
        def r(ins, a, *out):
            y = run(ins, a, *out)
            calls.append((id(a), bool(out), bool(out) and y is out[0]))
            return y

        return r

    def recorded(k):
        prepare = (lambda st, a: wrap(k.prepare(st, a))) if k.prepare is not None else None
        return dataclasses.replace(k, run=wrap(k.run), prepare=prepare)

    return {n: recorded(k) if k.in_place else k for n, k in ALL_KERNELS.items()}


def _alive(v, op, order: dict, returned: set) -> bool:
    """Whether value v is still needed after op: returned, or read by a later op."""
    return v in returned or any(order[u.operation] > order[op] for u in v.uses)


def expected(op, order: dict, returned: set) -> tuple[bool, set[str]]:
    """The rule, from the Top module: (whether op writes into an operand, why operands were refused).
    An operand may take the result when it has the result's type, is computed by an op whose array
    owns its data (not a Reshape view), is read once by this op and by no later one (`order`: op ->
    position), is not returned, and no Reshape view of it is (the view holds its array)."""
    why, ok = set(), False
    result = op.results[0].type
    for v in op.operands:
        if v.type != result:
            continue
        owner = getattr(v, "op", None)
        if owner is None or owner.name == "top.Input":
            why.add("refused: graph input")
        elif owner.name == "top.Weight":
            continue
        elif _alive(v, op, order, returned) or list(op.operands).count(v) > 1:
            why.add("refused: second reader")
        elif owner.name == "top.Reshape":
            why.add("refused: view")
        elif any(u.operation.name == "top.Reshape" and _alive(u.operation.results[0], op, order, returned)
                 for u in v.uses):
            why.add("refused: a view of it is alive")
        else:
            ok = True
    return ok, why


def test_in_place_matches_fresh_results():
    """Random chains of element-wise ops (unary, same-shaped and broadcast binary, BatchNorm, GELU)
    with Reshape views, older values read again, the inputs read directly and intermediates
    returned: outputs equal the run with in-place disabled bit for bit, keep_all's tensors too (it
    never writes in place), the caller's inputs are unchanged, and exactly the steps the rule allows
    wrote into an operand."""
    tally = FeatureTally(("wrote in place", "refused: second reader", "refused: view", "refused: graph input",
                          "refused: a view of it is alive", "broadcast operand"))
    fresh_table = {n: dataclasses.replace(k, in_place=False) for n, k in ALL_KERNELS.items()}

    @settings(max_examples=100, deadline=None)
    @given(graphs())
    def check(p):
        model, inputs = build(p)
        top = convert_onnx(model, "inplace")
        copies = {k: v.copy() for k, v in inputs.items()}
        calls: list = []
        it = ModuleInterpreter(top.module, top.weights, recording(calls), threads=1)
        fresh = ModuleInterpreter(top.module, top.weights, fresh_table, threads=1)
        it.init()
        fresh.init()
        want, want_all = fresh.inference(inputs), fresh.inference(inputs, keep_all=True)
        got_all = it.inference(inputs, keep_all=True)
        assert not any(given_out for _, given_out, _ in calls), "keep_all wrote in place"
        calls.clear()
        got = it.inference(inputs)
        for name, value in {**want, **want_all}.items():
            np.testing.assert_array_equal((got if name in want else got_all)[name], value, err_msg=name)
        for name, value in copies.items():
            np.testing.assert_array_equal(inputs[name], value, err_msg=f"input {name} overwritten")
        block = it._main().body.block
        returned, order = set(block.last_op.operands), {o: i for i, o in enumerate(block.ops)}
        by_attrs = {id(s.attrs): s.op for s in it._steps}
        seen = set()
        for attrs_id, given_out, wrote in calls:
            op = by_attrs[attrs_id]
            ok, why = expected(op, order, returned)
            assert given_out == ok, (op.name, ok, why)
            assert wrote == ok, op.name  # every in-place kernel here writes into `out` when given it
            seen |= {"wrote in place"} if ok else why
            if ok and any(v.type != op.results[0].type for v in op.operands if getattr(v, "op", None) is not None
                          and v.op.name != "top.Weight"):
                seen.add("broadcast operand")
        it.deinit()
        fresh.deinit()
        tally.record(seen)

    check()
    tally.assert_each_in(0.1)

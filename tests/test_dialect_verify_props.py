"""The Top verifier accepts every generated module and rejects single mutations of one.

Each mutation breaks one rule (an operand's rank or channel count, an attribute's length, a
non-permutation order, an axis out of range, a result type) in an otherwise valid random
module; the verifier must reject it with a message naming the op and its location name."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Operation
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from batches import DistinctCases, batched, batches
from strategies import ALL_STEPS, shape_of, top_modules
from tpudsl.dialects.attrs import to_attr
from tpudsl.dialects.opdef import create, loc_name


BATCH = 5  # modules an example (tests/batches.py)


# At least the 196 distinct modules that one module an example checked in ci before the batching
# (the strategy test_shape_infer_props draws), each checked once; 5% more drawn for the dev profile.
DISTINCT_IN_CI = 196


def test_verifier_accepts_generated_modules() -> None:
    distinct = DistinctCases()

    @batched(21 * settings.default.max_examples / 20, BATCH)
    @given(batches(top_modules(steps=tuple(ALL_STEPS)), BATCH, repr))
    @distinct.examples
    def check(batch) -> None:
        for module, weights in filter(lambda generated: distinct.first_time(repr(generated)), batch):
            module.verify()
            weight_ops = [op for op in module.walk() if op.name == "top.Weight"]
            assert sorted(loc_name(op) for op in weight_ops) == sorted(weights)
            for op in weight_ops:
                assert weights[loc_name(op)].shape == shape_of(op.results[0])

    check()
    distinct.assert_at_least(DISTINCT_IN_CI)


def first(module: ModuleOp, *names: str) -> Operation:
    return next(op for op in module.walk() if op.name in names)


def new_weight(before: Operation, shape: tuple[int, ...]):
    weight = create("top.Weight", [], [TensorType(f32, shape)], loc=f"{loc_name(before)}_bad")
    before.parent_block().insert_op_before(weight, before)
    return weight.results[0]


def set_operand(op: Operation, index: int, shape: tuple[int, ...]) -> None:
    operands = list(op.operands)
    operands[index] = new_weight(op, shape)
    op.operands = operands


def conv_channels(module: ModuleOp, data) -> Operation:
    op = first(module, "top.Conv", "top.Deconv")
    w = shape_of(op.operands[1])
    reordered = "dynweight_reorderd" in op.attributes and op.attributes["dynweight_reorderd"].value.data
    # the input-channel axis: ic/g for Conv and reordered Deconv, ic for Deconv in ONNX layout
    axis = 1 if op.name == "top.Conv" or reordered else 0
    set_operand(op, 1, (*w[:axis], w[axis] + 1, *w[axis + 1:]))
    return op


def window_attr_length(module: ModuleOp, data) -> Operation:
    op = first(module, "top.Conv", "top.Deconv", "top.MaxPool", "top.AvgPool")
    key = data.draw(st.sampled_from(["strides", "pads", "kernel_shape"]))
    op.attributes[key] = to_attr("i64[]", [1] * 3)  # 2-D ops need 2 (4 for pads)
    return op


def input_rank(module: ModuleOp, data) -> Operation:
    op = first(module, "top.Conv", "top.Deconv", "top.MaxPool", "top.AvgPool")
    set_operand(op, 0, shape_of(op.operands[0])[:3])
    return op


def permute_order(module: ModuleOp, data) -> Operation:
    op = first(module, "top.Permute")
    order = [o for o in op.attributes["order"].data]
    order = [order[-1], *order[1:]] if len(order) > 1 else [to_attr("i64", 1)]
    op.attributes["order"] = to_attr("i64[]", [o.value.data for o in order])
    return op


def axis_out_of_range(module: ModuleOp, data) -> Operation:
    op = first(module, "top.Concat", "top.Softmax")
    rank = len(shape_of(op.results[0]))
    op.attributes["axis"] = to_attr("i64", data.draw(st.sampled_from([rank, -rank - 1])))
    return op


def binary_broadcast(module: ModuleOp, data) -> Operation:
    op = first(module, "top.Add", "top.Sub", "top.Mul", "top.Max", "top.Min")
    out = shape_of(op.results[0])
    set_operand(op, data.draw(st.integers(0, 1)), (*out[:-1], out[-1] + 1) if out else (2,))
    return op


def batchnorm_params(module: ModuleOp, data) -> Operation:
    op = first(module, "top.BatchNorm")
    set_operand(op, data.draw(st.integers(1, 2)), (shape_of(op.results[0])[1] + 1,))
    return op


def result_type(module: ModuleOp, data) -> Operation:
    ops = [op for op in module.walk() if op.name.startswith("top.") and op.name not in ("top.Weight", "top.None")]
    op = ops[data.draw(st.integers(0, len(ops) - 1), label="op index")]
    shape = shape_of(op.results[0])
    wrong = data.draw(st.sampled_from([(*shape, 1), shape[:-1], (*shape[:-1], shape[-1] + 1)]))
    Rewriter.replace_value_with_new_type(op.results[0], TensorType(f32, wrong))
    return op


def missing_required(module: ModuleOp, data) -> Operation:
    op = first(module, "top.Conv", "top.MaxPool", "top.AvgPool")
    del op.attributes["kernel_shape"]
    return op


def bad_enum(module: ModuleOp, data) -> Operation:
    op = first(module, "top.MaxPool", "top.AvgPool")
    op.attributes["auto_pad"] = to_attr("str", "SAME_MIDDLE")
    return op


# mutation -> (the step the module starts with, the mutation, what the message must say)
MUTATIONS: dict[str, tuple[str, Callable[[ModuleOp, st.DataObject], Operation], str]] = {
    "conv filter channels": ("conv", conv_channels, r"input has \d+ channels but filter"),
    "deconv filter channels": ("deconv", conv_channels, r"input has \d+ channels but filter"),
    "conv strides/pads/kernel length": ("conv", window_attr_length, r"has 3 entries, expected|for a 3-D kernel_shape"),
    "pool strides/pads/kernel length": ("pool", window_attr_length, r"has 3 entries, expected|for a 3-D kernel_shape"),
    "conv input rank": ("conv", input_rank, r"input must have rank 4"),
    "pool input rank": ("pool", input_rank, r"input must have rank 4"),
    "permute order": ("permute", permute_order, r"is not a permutation"),
    "concat axis": ("concat", axis_out_of_range, r"axis -?\d+ is out of range"),
    "softmax axis": ("softmax", axis_out_of_range, r"axis -?\d+ is out of range"),
    "binary broadcast": ("binary", binary_broadcast, r"do not broadcast|result #0 has type"),
    "batchnorm params": ("batchnorm", batchnorm_params, r"one per channel"),
    "result type": ("unary", result_type, r"result #0 has type"),
    "missing kernel_shape": ("conv", missing_required, r"requires attribute 'kernel_shape'"),
    "auto_pad value": ("pool", bad_enum, r"attribute 'auto_pad' is 'SAME_MIDDLE', expected one of"),
}


# A quarter of the profile's budget per mutation (50 modules in CI, 500 with HYPOTHESIS_PROFILE=thorough),
# in batches: each mutation breaks one fixed thing, the examples only vary what surrounds it, and
# 14 mutations at 200 examples each were 3/4 of this file's 16 s of CPU.
MUTATED = {kind: batches(top_modules(max_ops=3, first=kind), BATCH, repr) for kind, _, _ in MUTATIONS.values()}


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
@batched(max(10, settings.default.max_examples // 4), BATCH)
@given(data=st.data())
def test_verifier_rejects_mutation_naming_the_op(mutation: str, data: st.DataObject) -> None:
    kind, mutate, reason = MUTATIONS[mutation]
    for module, _ in data.draw(MUTATED[kind], label="modules"):
        op = mutate(module, data)
        with pytest.raises(VerifyException) as error:
            module.verify()
        message = str(error.value)
        assert f"'{op.name}' op \"{loc_name(op)}\"" in message, message
        assert re.search(reason, message), message

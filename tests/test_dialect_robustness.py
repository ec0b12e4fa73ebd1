"""Bad input never crashes: any Top op with arbitrary operand shapes and attribute values either
verifies or is rejected with a VerifyException naming the op; --shape-infer likewise either
succeeds or raises a TpudslError naming it. Nothing else (IndexError, ZeroDivisionError...)."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp, NoneType, TensorType, UnrankedTensorType, f32
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region
from xdsl.utils.exceptions import VerifyException

from batches import DistinctCases
from strategies import UTF8_CHARS
from tpudsl.dialects import make_context
from tpudsl.dialects.opdef import SPECS, A, create
from tpudsl.dialects.top import SPECS as TOP_SPECS
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.rewrites.shape_infer import ShapeInferPass

TOP_OPS = sorted(spec.name for spec in TOP_SPECS if spec.name not in ("top.None", "top.Weight"))
CTX = make_context()

tensor_types = st.one_of(
    st.lists(st.integers(0, 5), max_size=5).map(lambda s: TensorType(f32, s)),
    st.just(UnrankedTensorType(f32)),
)


_TEXT = st.text(UTF8_CHARS, max_size=4)


def attr_values(a: A) -> st.SearchStrategy:
    small = st.integers(-3, 6)
    by_kind = {
        "i64": small,
        "f64": st.floats(-3, 6, allow_nan=False),
        "bool": st.booleans(),
        "str": st.sampled_from([*a.choices, "bogus"]) if a.choices else _TEXT,
        "i64[]": st.lists(small, max_size=7),
        "f64[]": st.lists(st.floats(-3, 6, allow_nan=False), max_size=4),
    }
    return by_kind[a.kind]


@functools.cache
def attr_strategies(name: str) -> dict[str, st.SearchStrategy]:
    """Each attribute's values, built once per op (not on every draw)."""
    return {key: attr_values(a) for key, a in SPECS[name].attrs.items()}


@st.composite
def arbitrary_ops(draw, name: str) -> ModuleOp:
    spec = SPECS[name]
    types = []
    for operand in spec.operands:
        if operand.endswith("*"):
            types += draw(st.lists(tensor_types, max_size=3))
        elif operand.startswith("[") and draw(st.booleans()):
            continue  # an optional operand left out
        else:
            types.append(draw(st.one_of(tensor_types, st.just(NoneType())) if operand.endswith("?") else tensor_types))
    attrs = {key: draw(values) for key, values in attr_strategies(name).items() if draw(st.booleans())}
    n_results = draw(st.integers(0, 3)) if spec.results[0].endswith("*") else len(spec.results)
    results = [draw(tensor_types) for _ in range(n_results)]
    block = Block(arg_types=types)
    op = create(name, list(block.args), results, attrs, loc="fuzzed")
    block.add_op(op)
    block.add_op(ReturnOp())
    return ModuleOp([FuncOp("main", (types, []), Region(block))])


# One property per op (about 90): 25 distinct modules each in CI (250 with
# HYPOTHESIS_PROFILE=thorough), one an example, each checked once; at 60 each the file took 12 s of
# CPU. In batches (tests/batches.py) the batches repeat earlier modules, and drawing enough for 25
# distinct ones cost more CPU than this (11.8 s against 11.3). The floor keeps a fifth of margin:
# ci's derandomized draws give 25 of 25, but HYPOTHESIS_PROFILE=dev's random ones may repeat a module.
DISTINCT_IN_CI = 20


@pytest.mark.parametrize("name", TOP_OPS)
def test_arbitrary_op_is_accepted_or_rejected_with_its_name(name: str) -> None:
    distinct = DistinctCases()

    @settings(max_examples=max(10, settings.default.max_examples // 8))
    @given(arbitrary_ops(name))
    @distinct.examples
    def check(module: ModuleOp) -> None:
        if distinct.first_time(str(module)):
            check_accepted_or_rejected_with_its_name(name, module)

    check()
    distinct.assert_at_least(DISTINCT_IN_CI)


def check_accepted_or_rejected_with_its_name(name: str, module: ModuleOp) -> None:
    try:
        module.verify()
    except VerifyException as e:
        assert f"'{name}' op \"fuzzed\"" in str(e) or "Expected" in str(e)  # IRDL's own operand-count messages
        return
    try:
        ShapeInferPass().apply(CTX, module)
    except TpudslError as e:
        assert f"'{name}' op \"fuzzed\"" in e.message

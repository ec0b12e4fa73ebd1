"""--shape-infer on random valid modules: erased result types come back, correct types stay,
and a contradicting result type is reported with the op's location name."""

from __future__ import annotations

from collections.abc import Callable, Hashable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp, TensorType, UnrankedTensorType, f32
from xdsl.dialects.func import FuncOp
from xdsl.rewriter import Rewriter

from batches import DistinctCases, batched, batches
from strategies import ALL_STEPS, GeneratedModule, shape_of, top_modules
from tpudsl.dialects import make_context
from tpudsl.dialects.opdef import loc_name
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.printer import print_module
from tpudsl.rewrites.shape_infer import ShapeInferPass

CTX = make_context()


def computed_ops(module: ModuleOp):
    """Top ops whose result types shape-infer computes (weights and `none` carry their own)."""
    return [op for op in module.walk() if op.name.startswith("top.") and op.name not in ("top.Weight", "top.None")]


def erase_result_types(module: ModuleOp) -> None:
    for op in computed_ops(module):
        for result in list(op.results):
            Rewriter.replace_value_with_new_type(result, UnrankedTensorType(f32))
    for op in module.walk():
        if isinstance(op, FuncOp):
            op.update_function_type()


# Batches of 5 distinct modules (tests/batches.py), each checked once: at least the 196 distinct
# modules a property that one module an example checked in ci before the batching (1,960
# thorough). Measured in ci: 200 drawn gave 196 distinct (7.5 s of CPU, the file, against 7.3
# before the batching), one module an example 175; 5% more are drawn for the dev profile's sake.
BATCH = 5
DISTINCT_IN_CI = 196


def module_key(case: tuple[GeneratedModule, int]) -> str:
    """A case of a check that ignores its choice: the module's text."""
    return repr(case[0])


def module_and_op_key(case: tuple[GeneratedModule, int]) -> tuple[str, int]:
    """A case of `reports`: the module's text and the index of the op its choice picks."""
    generated, choice = case
    return repr(generated), choice % len(computed_ops(generated.module))


def each_distinct_module(check, key: Callable[[tuple[GeneratedModule, int]], Hashable] = module_key) -> None:
    """check(module, choice) on each case drawn for this property distinct by `key` (the same key
    makes the batches), then the floor; the choice (an integer for the check to pick with) is drawn
    whether the case is checked or not, so that a replayed example draws as it did."""
    distinct = DistinctCases()

    @batched(21 * settings.default.max_examples / 20, BATCH)
    @given(batches(st.tuples(top_modules(steps=tuple(ALL_STEPS)), st.integers(0, 2**16)), BATCH, key))
    @distinct.examples
    def run(batch) -> None:
        for generated, choice in batch:
            if distinct.first_time(key((generated, choice))):
                check(generated.module, choice)

    run()
    distinct.assert_at_least(DISTINCT_IN_CI)


def test_shape_infer_restores_erased_types() -> None:
    def restores(module: ModuleOp, _) -> None:
        original = print_module(module, debuginfo=True)
        erase_result_types(module)
        erased = print_module(module, debuginfo=True)
        assert erased != original and "tensor<*xf32>" in erased
        ShapeInferPass().apply(CTX, module)
        module.verify()
        assert print_module(module, debuginfo=True) == original

    each_distinct_module(restores)


def test_shape_infer_leaves_correct_types_alone() -> None:
    def leaves_alone(module: ModuleOp, _) -> None:
        original = print_module(module, debuginfo=True)
        ShapeInferPass().apply(CTX, module)
        assert print_module(module, debuginfo=True) == original

    each_distinct_module(leaves_alone)


def test_shape_infer_reports_contradicting_type_with_loc_name() -> None:
    def reports(module: ModuleOp, choice: int) -> None:
        ops = computed_ops(module)
        op = ops[choice % len(ops)]
        shape = shape_of(op.results[0])
        Rewriter.replace_value_with_new_type(op.results[0], TensorType(f32, (*shape, 2)))
        with pytest.raises(TpudslError) as error:
            ShapeInferPass().apply(CTX, module)
        assert f"'{op.name}' op \"{loc_name(op)}\" result #0" in error.value.message
        assert error.value.op is op

    each_distinct_module(reports, module_and_op_key)

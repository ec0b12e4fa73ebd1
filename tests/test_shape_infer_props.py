"""--shape-infer on random valid modules: erased result types come back, correct types stay,
and a contradicting result type is reported with the op's location name."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp, TensorType, UnrankedTensorType, f32
from xdsl.dialects.func import FuncOp
from xdsl.rewriter import Rewriter

from batches import batched, batches
from strategies import ALL_STEPS, shape_of, top_modules
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


# Batches of 5 modules (tests/batches.py): the profile's budget of modules per property.
BATCHES = batches(top_modules(steps=tuple(ALL_STEPS)), 5)
BATCHED = batched(settings.default.max_examples, 5)


@BATCHED
@given(BATCHES)
def test_shape_infer_restores_erased_types(batch) -> None:
    for module, _ in batch:
        original = print_module(module, debuginfo=True)
        erase_result_types(module)
        erased = print_module(module, debuginfo=True)
        assert erased != original and "tensor<*xf32>" in erased
        ShapeInferPass().apply(CTX, module)
        module.verify()
        assert print_module(module, debuginfo=True) == original


@BATCHED
@given(BATCHES)
def test_shape_infer_leaves_correct_types_alone(batch) -> None:
    for module, _ in batch:
        original = print_module(module, debuginfo=True)
        ShapeInferPass().apply(CTX, module)
        assert print_module(module, debuginfo=True) == original


@BATCHED
@given(BATCHES, st.data())
def test_shape_infer_reports_contradicting_type_with_loc_name(batch, data: st.DataObject) -> None:
    for module, _ in batch:
        ops = computed_ops(module)
        op = ops[data.draw(st.integers(0, len(ops) - 1), label="op index")]
        shape = shape_of(op.results[0])
        Rewriter.replace_value_with_new_type(op.results[0], TensorType(f32, (*shape, 2)))
        with pytest.raises(TpudslError) as error:
            ShapeInferPass().apply(CTX, module)
        assert f"'{op.name}' op \"{loc_name(op)}\" result #0" in error.value.message
        assert error.value.op is op

"""--shape-infer: give every Top op's results the ranked types its shape rule computes.

The frontend may emit results as `tensor<*xf32>` (or `none`); this pass walks the ops in order
(operands are always inferred before their users in an SSA block), computes each result shape
with the op's shape rule (the same rule the verifier uses) and rewrites unranked results in
place. Correct ranked types are left alone; a ranked type that contradicts the rule is an error
naming the op's location. Finally the func signatures follow their block arguments and returns.

No greedy rewriter is used on purpose: its dead-code elimination would erase unused weights."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, NoneType, TensorType, UnrankedTensorType, f32
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from tpudsl.dialects.opdef import SPECS, Shape, ShapeError, describe, fmt_shape, infer_shapes
from tpudsl.ir.diagnostics import TpudslError


def _error(op: Operation, message: str) -> TpudslError:
    """A TpudslError naming `op`; `.op` lets the driver add the op's source position."""
    error = TpudslError(f"{describe(op)} {message}")
    error.op = op  # type: ignore[attr-defined]
    return error


def _element_type(op: Operation, current: Attribute) -> Attribute:
    """The result's own element type if it has one, else the first tensor operand's (f32 if none)."""
    if isinstance(current, TensorType | UnrankedTensorType):
        return current.element_type
    for value in op.operands:
        if isinstance(value.type, TensorType | UnrankedTensorType):
            return value.type.element_type
    return f32


def infer_op(op: Operation) -> None:
    """Rank the unranked results of one Top op; raise TpudslError on a contradiction."""
    spec = SPECS[op.name]
    try:
        inferred = infer_shapes(op, spec)
    except ShapeError as e:
        raise _error(op, str(e)) from None
    if inferred is None:
        return  # no shape rule (top.None) or an operand is still unranked
    optional = [r.endswith("?") for r in spec.results]
    for i, (result, shape) in enumerate(zip(list(op.results), inferred, strict=True)):
        current = result.type
        if isinstance(current, NoneType) and i < len(optional) and optional[i]:
            continue  # an unused optional result stays `none`
        if shape is None:
            if not isinstance(current, TensorType):
                raise _error(op, f"result #{i}: its shape comes from a tensor's value, not from shapes and attributes; give a ranked result type")
            continue
        _set_shape(op, i, shape, _element_type(op, current))


def _set_shape(op: Operation, index: int, shape: Shape, element_type: Attribute) -> None:
    result = op.results[index]
    if isinstance(result.type, TensorType):
        if tuple(result.type.get_shape()) != shape:
            raise _error(
                op, f"result #{index} has type {result.type}, but its operands and attributes give shape {fmt_shape(shape)}"
            )
        return
    Rewriter.replace_value_with_new_type(result, TensorType(element_type, shape))


@dataclass(frozen=True)
class ShapeInferPass(ModulePass):
    name = "shape-infer"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in op.walk():
            if inner.name in SPECS:
                infer_op(inner)
        for inner in op.walk():
            if isinstance(inner, FuncOp) and not inner.is_declaration:
                inner.update_function_type()

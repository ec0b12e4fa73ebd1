"""Permutes the backend cannot do in one strided load, split into ones it can (`--processor-tpu-optimize`,
TPU-MLIR's pass of chip-specific Tpu rewrites; model_deploy runs it before the Tpu check).

The backend does a tpu.Permute as one GDMA load whose strides give the order, on a 4-D view
(dialects/geometry/permute.py). A rank-5 or rank-6 order whose dims do not fold to four groups,
Swin's qkv permute ([B_, N, 3, heads, hd] by [2, 0, 3, 1, 4]) for one, becomes a chain of
Permutes that each move one dim (each folds); TPU-MLIR's kernel takes such orders in one op, and its
lowering leaves them whole, as `--convert-top-to-tpu` does here. The moves only copy values, so every
mode keeps its types; the last move keeps the op (its name and result), the others are `<name>_move<i>`."""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation
from xdsl.rewriter import InsertPoint, Rewriter

from tpudsl.dialects.attrs import to_attr
from tpudsl.dialects.geometry.permute import folds_to_4d, single_moves
from tpudsl.dialects.opdef import SPECS, AttrView, create, derived_loc


def split_wide_permutes(module: Operation) -> None:
    for op in [o for o in module.walk() if o.name == "tpu.Permute"]:
        x = op.operands[0]
        shape = list(x.type.get_shape())  # type: ignore[attr-defined]
        order = list(AttrView(op.attributes, SPECS[op.name])["order"])
        if folds_to_4d(shape, order):
            continue
        element = op.results[0].type.element_type  # type: ignore[attr-defined]
        *steps, last = single_moves(order)
        for i, step in enumerate(steps):
            shape = [shape[d] for d in step]
            move = create("tpu.Permute", [x, *op.operands[1:]], [TensorType(element, shape)], {"order": step},
                          loc=derived_loc(op, f"move{i}"))
            Rewriter.insert_op(move, InsertPoint.before(op))
            x = move.results[0]
        op.operands[0] = x
        op.attributes["order"] = to_attr("i64[]", last)

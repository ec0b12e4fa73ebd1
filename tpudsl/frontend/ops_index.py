"""Converters of index ONNX nodes: TopK, GatherND, ScatterElements, ScatterND.

Indices are integers held in float tensors, as for Gather; negative ones count from the end
(the kernels wrap them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects.builtin import ArrayAttr, FusedLoc, NameLoc, NoneAttr, StringAttr, TensorType, f32

from tpudsl.dialects.opdef import create
from tpudsl.dialects.top import SCATTER_REDUCTIONS
from tpudsl.frontend.onnx_node import Node, norm_axis
from tpudsl.frontend.ops_shape import const_ints

if TYPE_CHECKING:
    from tpudsl.frontend.onnx_import import Converter


def topk(n: Node, c: Converter) -> None:
    """TopK: K is an attribute before opset 10 and a constant input after; both outputs keep
    their ONNX names (a fused loc)."""
    x = n.input(0)
    rank = len(c.shape(x))
    k = n.attr("k") if n.opset < 10 else const_ints(n, c, 1, "K")[0]  # type: ignore[index]
    attrs = {"axis": norm_axis(n.attr("axis", -1), rank, n), "K": int(k), "largest": bool(n.attr("largest", 1)),
             "sorted": bool(n.attr("sorted", 1))}
    values, indices = n.outputs[:2]
    locs = [NameLoc(StringAttr(name), NoneAttr()) for name in (values, indices)]
    shape = c.graph.shapes[values]
    op = create("top.TopK", [c.value(x)], [TensorType(f32, shape)] * 2, attrs, loc=FusedLoc(ArrayAttr(locs), NoneAttr()))
    c.block.add_op(op)
    c.values[values], c.values[indices] = op.results


def gather_nd(n: Node, c: Converter) -> None:
    c.emit("top.GatherND", [n.input(0), n.input(1)], n.out, {"batch_dims": n.attr("batch_dims", 0)})


def scatter_elements(n: Node, c: Converter) -> None:
    """ScatterElements (and Scatter, its name before opset 11)."""
    axis = norm_axis(n.attr("axis", 0), len(c.shape(n.input(0))), n)
    c.emit("top.ScatterElements", [n.input(0), n.input(1), n.input(2)], n.out,
           {"axis": axis, "reduction": _reduction(n)})


def scatter_nd(n: Node, c: Converter) -> None:
    c.emit("top.ScatterND", [n.input(0), n.input(1), n.input(2)], n.out, {"reduction": _reduction(n)})


def _reduction(n: Node) -> int:
    """ONNX's `reduction` as TPU-MLIR's code (SCATTER_REDUCTIONS)."""
    reduction = n.attr("reduction", "none")
    if reduction not in SCATTER_REDUCTIONS:
        raise n.error(f"reduction '{reduction}' is not supported ({', '.join(SCATTER_REDUCTIONS)} are)")
    return SCATTER_REDUCTIONS[reduction]

"""Converters of ONNX's recurrent layers, LSTM and GRU, to top.LSTM and top.GRU.

The Top ops take ONNX's weights as they are (layouts and gate orders, as TPU-MLIR's converter
passes them). `direction` reverse, which Top has no attribute for, is a forward layer between
two top.Reverse along the time axis (the final states need no reversal). `layout` 1 is
`batch_first`. What the kernels do not model is refused by name: non-default activations,
`clip`, LSTM's `input_forget`, and `sequence_lens` other than every sequence at full length.
LSTM's peepholes `P` are top.LSTM's `peephole` operand."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, FusedLoc, NameLoc, NoneAttr, NoneType, StringAttr, TensorType, f32

from tpudsl.dialects.opdef import ShapeError, create, probe_shapes
from tpudsl.frontend.onnx_node import Node
from tpudsl.ir.diagnostics import TpudslError

if TYPE_CHECKING:
    from tpudsl.frontend.onnx_import import Converter

# ONNX's default activations per direction, the only ones the kernels compute.
_ACTIVATIONS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"]}
_RESULTS = {"LSTM": ("Y", "Y_h", "Y_c"), "GRU": ("Y", "Y_h")}
_SEQUENCE_LENS, _INITIAL_H, _PEEPHOLES = 4, 5, 7


def recurrent(n: Node, c: Converter) -> None:
    """LSTM or GRU: one top.LSTM / top.GRU (between two top.Reverse for direction reverse)."""
    lstm = n.op_type == "LSTM"
    direction = n.attr("direction", "forward")
    if direction not in ("forward", "reverse", "bidirectional"):
        raise n.error(f"direction '{direction}' is not one of forward, reverse, bidirectional")
    batch_first = n.attr("layout", 0) == 1
    time_axis = 1 if batch_first else 0
    _refuse_unmodelled(n, c, direction, time_axis)
    hidden = c.shape(n.input(2))[-1]
    if n.attr("hidden_size", hidden) != hidden:
        raise n.error(f"hidden_size {n.attr('hidden_size')} differs from the recurrence's {hidden}")
    x = c.value(n.input(0))
    if direction == "reverse":
        x = c.emit("top.Reverse", [x], c.derived(n.out or n.name, "input_reversed"), {"axis": time_axis})
    states = [n.input(i) for i in range(_INITIAL_H, _INITIAL_H + (2 if lstm else 1))]
    operands = [x, *(c.value(n.input(i)) for i in range(1, 4)), *(c.value(s) for s in states)]
    if lstm:
        operands.append(c.none())  # cont
        if n.input(_PEEPHOLES):
            operands.append(c.value(n.input(_PEEPHOLES)))
    attrs = {"hidden_size": hidden, "bidirectional": direction == "bidirectional", "batch_first": batch_first}
    if not lstm:
        attrs["linear_before_reset"] = bool(n.attr("linear_before_reset", 0))
    op_name = "top.LSTM" if lstm else "top.GRU"
    names = _result_names(n, c, direction == "reverse")
    shapes = _shapes(op_name, operands, attrs, len(names))
    used = [i < len(n.outputs) and bool(n.outputs[i]) for i in range(len(names))]
    types = [TensorType(f32, s) if u else NoneType() for s, u in zip(shapes, used, strict=True)]
    locs = [NameLoc(StringAttr(name), NoneAttr()) for name in names]
    op = create(op_name, operands, types, attrs, loc=FusedLoc(ArrayAttr(locs), NoneAttr()))
    c.block.add_op(op)
    for i, result in enumerate(op.results):
        if used[i]:
            c.values[names[i]] = result
    if direction == "reverse" and used[0]:
        c.emit("top.Reverse", [op.results[0]], n.outputs[0], {"axis": time_axis})


def _refuse_unmodelled(n: Node, c: Converter, direction: str, time_axis: int) -> None:
    """An error naming the first attribute or input the kernels do not model."""
    default = _ACTIVATIONS[n.op_type] * (2 if direction == "bidirectional" else 1)
    activations = n.attr("activations")
    if activations is not None and [a.lower() for a in activations] != [a.lower() for a in default]:
        raise n.error(f"activations {activations} are not supported (only the default {default})")
    for key in ("activation_alpha", "activation_beta", "clip"):
        if n.attr(key) is not None:
            raise n.error(f"attribute '{key}' is not supported")
    if n.attr("input_forget", 0):
        raise n.error("input_forget 1 (coupled input and forget gates) is not supported")
    lens_name = n.input(_SEQUENCE_LENS)
    if lens_name:
        lens = c.const(lens_name)
        seq = c.shape(n.input(0))[time_axis]
        if lens is None or not np.all(lens == seq):
            raise n.error(f"sequence_lens is not supported unless a constant of full lengths ({seq})")


def _result_names(n: Node, c: Converter, reversed_y: bool) -> list[str]:
    """Each result's tensor name: the ONNX output's, a derived one for outputs the node leaves
    out, and for Y of a reverse layer the name of the time-reversed Y the last top.Reverse undoes."""
    base = next((o for o in n.outputs if o), n.name)
    names = []
    for i, result in enumerate(_RESULTS[n.op_type]):
        given = n.outputs[i] if i < len(n.outputs) else ""
        names.append(c.derived(given, "reversed") if given and i == 0 and reversed_y
                     else given or c.derived(base, result))
    return names


def _shapes(op_name: str, operands: list, attrs: dict, count: int) -> list[tuple[int, ...]]:
    """The result shapes by the op's shape rule (every operand shape is known here)."""
    try:
        return probe_shapes(op_name, operands, [NoneType()] * count, attrs)  # type: ignore[return-value]
    except ShapeError as e:
        raise TpudslError(str(e)) from None

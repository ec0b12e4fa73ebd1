"""A read-only view of one ONNX node, as converters need it: attributes, inputs, opset."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import onnx
from onnx import helper

from tpudsl.ir.diagnostics import TpudslError

if TYPE_CHECKING:
    from tpudsl.frontend.onnx_import import Converter

# A converter: reads one node and emits its Top ops through the Converter.
Convert = Callable[["Node", "Converter"], None]


class Node:
    """One ONNX node. Absent optional inputs are "" (ONNX's own convention), also past the end."""

    def __init__(self, proto: onnx.NodeProto, opset: int):
        self.proto = proto
        self.opset = opset
        self.op_type = proto.op_type
        self.inputs = list(proto.input)
        self.outputs = list(proto.output)
        self._attrs = {a.name: a for a in proto.attribute}

    @property
    def name(self) -> str:
        """The node's name, or its first output's when the exporter left the name empty."""
        return self.proto.name or self.outputs[0]

    @property
    def out(self) -> str:
        """The first output's tensor name: the location of the op that computes it."""
        return self.outputs[0]

    def input(self, i: int) -> str:
        return self.inputs[i] if i < len(self.inputs) else ""

    def attr(self, key: str, default: Any = None) -> Any:
        """The attribute's Python value (str for strings, lists for lists), or `default`."""
        if key not in self._attrs:
            return default
        value = helper.get_attribute_value(self._attrs[key])
        if isinstance(value, bytes):
            return value.decode()
        if isinstance(value, list) and value and isinstance(value[0], bytes):
            return [v.decode() for v in value]
        return value

    def error(self, message: str) -> TpudslError:
        """A TpudslError that names this node."""
        return TpudslError(f"{self.op_type} '{self.name}': {message}")


def norm_axis(axis: int, rank: int, node: Node) -> int:
    """`axis` in [0, rank); ONNX allows negative axes counting from the end."""
    if not -rank <= axis < rank:
        raise node.error(f"axis {axis} is out of range for rank {rank}")
    return axis % rank


def norm_axes(axes: list[int], rank: int, node: Node) -> list[int]:
    return [norm_axis(int(a), rank, node) for a in axes]

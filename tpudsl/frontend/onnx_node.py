"""A read-only view of one ONNX node, as converters need it: attributes, inputs, opset."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import onnx
from onnx import defs, helper

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
        return self.proto.name or next((o for o in self.outputs if o), "")

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

    def check_schema(self) -> None:
        """Raise for what ONNX's schema of the op forbids and converters may take for granted: a
        required attribute or input that is absent, more inputs or outputs than the op has. A
        converter that still fails on a node that passed is a bug (an internal error)."""
        try:
            schema = defs.get_schema(self.op_type, self.opset, "")
        except defs.SchemaError:
            raise self.error(f"{self.op_type} is not defined in opset {self.opset}") from None
        missing = [a.name for a in schema.attributes.values() if a.required and a.name not in self._attrs]
        if missing:
            raise self.error(f"required attribute '{missing[0]}' is missing")
        single = defs.OpSchema.FormalParameterOption.Single
        for i, formal in enumerate(schema.inputs):
            if formal.option == single and not self.input(i):
                raise self.error(f"required input #{i} ('{formal.name}') is missing")
        if len([n for n in self.inputs if n]) < schema.min_input:
            raise self.error(f"has {len(self.inputs)} input(s); {self.op_type} takes at least {schema.min_input}")
        if len(self.inputs) > schema.max_input:
            raise self.error(f"has {len(self.inputs)} inputs; {self.op_type} takes at most {schema.max_input}")
        if len(self.outputs) > schema.max_output:
            raise self.error(f"has {len(self.outputs)} outputs; {self.op_type} has at most {schema.max_output}")

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

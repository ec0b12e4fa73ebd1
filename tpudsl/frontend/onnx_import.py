"""ONNX -> Top: walk the prepared graph and let the converter of each node emit Top ops.

Names are the contract with every later tool (npz keys, calibration tables, `npz_tool compare`):
- an op's location is the ONNX tensor name it computes, unchanged;
- a graph input becomes `top.Input` located at the input's name;
- a constant becomes `top.Weight` named after the initializer (or the folded tensor);
- an op the converter adds on its own gets a name derived by suffix (`<output>_<what>`).
Converters look operands up by tensor name and never care whether a name is a weight or a
computed value: a Conv whose filter is computed upstream (DragGAN) converts like any other.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from google.protobuf.message import DecodeError
from xdsl.dialects.builtin import Float32Type, NoneType, TensorType, UnrankedTensorType, f32
from xdsl.ir import Attribute, Operation, SSAValue

from tpudsl.dialects import top as _top  # noqa: F401  (defines the Top ops `create` builds)
from tpudsl.dialects.opdef import ShapeError, create, result_names, rule_shape
from tpudsl.frontend.onnx_graph import PreparedGraph, prepare
from tpudsl.frontend.onnx_node import Node
from tpudsl.frontend.onnx_ops import CONVERTERS, HINTS
from tpudsl.frontend.preprocess import Preprocess
from tpudsl.ir.diagnostics import InternalError, TpudslError
from tpudsl.ir.module import TopModule, new_top_module, tensor_type_of, verify_module

# How many node names an unsupported-op error lists per op type.
_NAMES_SHOWN = 3


class Converter:
    """What a converter sees: tensors by name, their shapes and constant values, and `emit`."""

    def __init__(self, graph: PreparedGraph, mod: TopModule):
        self.graph = graph
        self.mod = mod
        self.block = mod.main_func().body.block
        self.values: dict[str, SSAValue] = {}
        self._none: SSAValue | None = None
        self._names = {n for p in graph.nodes for n in [*p.input, *p.output]} | set(graph.inputs) | set(graph.consts)

    # ---- reading the graph ----

    def const(self, name: str) -> np.ndarray | None:
        """The value of a constant tensor (initializer or folded), or None if it is computed."""
        return self.graph.consts.get(name) if name else None

    def const_input(self, n: Node, i: int, what: str) -> np.ndarray | None:
        """Input #i of `n` as a constant (None when the node leaves an optional one out; a required
        one is there: `Node.check_schema`): the converters fold it into an attribute, so one known
        only at run time (a graph input, or computed) is an error naming it. The message makes the
        tensor its subject, so that it reads right for plural names (pads, axes) too."""
        name = n.input(i)
        if not name:
            return None
        value = self.const(name)
        if value is None:
            source = "a graph input" if name in self.graph.inputs else "computed at run time"
            raise n.error(f"the {what} input '{name}' is {source}; only a constant one is supported")
        return value

    def shape(self, name: str) -> tuple[int, ...]:
        if name in self.values and isinstance(self.values[name].type, TensorType):
            return tuple(self.values[name].type.get_shape())
        if name in self.graph.consts:
            return tuple(self.graph.consts[name].shape)
        if name in self.graph.shapes:
            return self.graph.shapes[name]
        raise TpudslError(f"the shape of tensor '{name}' is unknown after ONNX shape inference")

    def value(self, name: str) -> SSAValue:
        """The SSA value of tensor `name`: a computed value, or a `top.Weight` made on first use."""
        if not name:
            return self.none()
        if name in self.values:
            return self.values[name]
        if name in self.graph.consts:
            return self.weight(name, self.graph.consts[name])
        raise TpudslError(f"tensor '{name}' is used before any node computes it")

    def weight(self, name: str, array: np.ndarray) -> SSAValue:
        """A `top.Weight` holding `array` (as float32: Top computes in float), placed before its first user.

        `name` is unique already (ONNX names are, and `derived` makes new ones unique), so the op is
        built here rather than by `TopModule.add_weight`, whose uniqueness check walks the module
        and made large models quadratic."""
        data = np.array(array, dtype=np.float32, order="C")  # np.array keeps 0-d shapes
        op = create("top.Weight", [], [tensor_type_of(data)], loc=name)
        self.block.add_op(op)
        self.mod.weights[name] = data
        self.values[name] = op.results[0]
        return op.results[0]

    def define_const(self, name: str, array: np.ndarray) -> None:
        """Tensor `name` is the constant `array`: a `top.Weight` appears if something uses it."""
        self.graph.consts[name] = array

    def none(self) -> SSAValue:
        """The `top.None` value for absent optional operands (one per module)."""
        if self._none is None:
            op = create("top.None", [], [NoneType()], loc="none")
            if self.block.first_op is None:
                self.block.add_op(op)
            else:
                self.block.insert_op_before(op, self.block.first_op)
            self._none = op.results[0]
        return self._none

    def derived(self, base: str, suffix: str) -> str:
        """A new tensor name for an op the converter adds: `<base>_<suffix>`, unique in the graph."""
        name, n = f"{base}_{suffix}", 1
        while name in self._names:
            name, n = f"{base}_{suffix}_{n}", n + 1
        self._names.add(name)
        return name

    # ---- writing ops ----

    def emit(self, op_name: str, operands: Sequence[str | SSAValue], loc: str,
             attrs: Mapping[str, Any] | None = None, element_type: Attribute = f32, unused_results: int = 0,
             like_first: int = 0) -> SSAValue:
        """Append Top op `op_name` computing tensor `loc` (its location); return its result.

        The result type comes from ONNX shape inference when `loc` is an ONNX tensor, otherwise
        from the op's own shape rule; the module verifier checks that both agree.
        `like_first`: results after the first with the first's type (MaxPoolWithMask's mask);
        `unused_results`: optional results after those that ONNX has no use for (`none`)."""
        ops = [v if isinstance(v, SSAValue) else self.value(v) for v in operands]
        extra = [NoneType()] * unused_results
        shape = self.graph.shapes.get(loc)
        if shape is None:
            unranked = [UnrankedTensorType(element_type)] * (1 + like_first)
            try:  # for ops ONNX does not know
                shape = rule_shape(op_name, ops, [*unranked, *extra], attrs or {}, loc)
            except ShapeError as e:
                raise TpudslError(str(e)) from None
        ranked = [TensorType(element_type, shape)] * (1 + like_first)
        op = create(op_name, ops, [*ranked, *extra], attrs or {}, loc=loc)
        self.block.add_op(op)
        self.values[loc] = op.results[0]
        return op.results[0]

    def alias(self, name: str, source: str | SSAValue) -> None:
        """Tensor `name` is `source` (Identity, Dropout, Cast to float): no op is emitted."""
        self.values[name] = source if isinstance(source, SSAValue) else self.value(source)


def load_onnx(model: onnx.ModelProto | str | os.PathLike[str]) -> onnx.ModelProto:
    """The model itself, or the model read from a path (TpudslError when that fails)."""
    if isinstance(model, onnx.ModelProto):
        return model
    path = os.fspath(model)
    if not os.path.isfile(path):
        raise TpudslError(f"cannot open '{path}': No such file")
    try:
        model = onnx.load(path)
    except (DecodeError, ValueError, RuntimeWarning) as e:
        raise TpudslError(f"'{path}' is not a valid ONNX model: {e}") from None
    except OSError as e:
        raise TpudslError(f"cannot read '{path}': {e.strerror or e}") from None
    if not model.HasField("graph"):  # an empty file parses as an empty ModelProto
        raise TpudslError(f"'{path}' is not a valid ONNX model: it has no graph")
    return model


def check_supported(graph: PreparedGraph) -> None:
    """One error naming every op type left after folding that has no converter."""
    missing: dict[str, list[str]] = {}
    for proto in graph.nodes:
        if proto.domain not in ("", "ai.onnx") or proto.op_type not in CONVERTERS:
            kind = proto.op_type if proto.domain in ("", "ai.onnx") else f"{proto.domain}.{proto.op_type}"
            missing.setdefault(kind, []).append(proto.name or proto.output[0])
    if not missing:
        return
    parts = []
    for kind, names in missing.items():
        shown = ", ".join(names[:_NAMES_SHOWN]) + (", ..." if len(names) > _NAMES_SHOWN else "")
        parts.append(f"{kind} ({len(names)} node{'s' if len(names) > 1 else ''}: {shown})")
    hints = [f"{kind}: {HINTS[kind]}" for kind in missing if kind in HINTS]
    message = "unsupported ONNX ops: " + "; ".join(parts)
    if hints:
        message += "; hint: " + "; ".join(hints)
    raise TpudslError(message)


def convert_onnx(
    model: onnx.ModelProto | str | os.PathLike[str],
    model_name: str,
    input_shapes: Sequence[Sequence[int]] | None = None,
    output_names: Sequence[str] | None = None,
    preprocess: Preprocess | None = None,
) -> TopModule:
    """Convert an ONNX model to a verified Top module (state TOP_F32) with its weights; every
    result type is ranked (from ONNX shape inference or the Top shape rules).

    `preprocess` is recorded on every 4-D `top.Input` (see frontend/preprocess.py). A QDQ model
    gives its float graph (convert_onnx_qdq also returns its ranges)."""
    return convert_onnx_qdq(model, model_name, input_shapes, output_names, preprocess)[0]


def convert_onnx_qdq(
    model: onnx.ModelProto | str | os.PathLike[str],
    model_name: str,
    input_shapes: Sequence[Sequence[int]] | None = None,
    output_names: Sequence[str] | None = None,
    preprocess: Preprocess | None = None,
) -> tuple[TopModule, dict[str, tuple[float, float]]]:
    """convert_onnx, and the ranges of the tensors its QuantizeLinear/DequantizeLinear pairs named
    (empty for a float model; lowering/import_calibration.py's calibrate_from_qdq applies them after the Top passes)."""
    graph = prepare(load_onnx(model), input_shapes, output_names)
    check_supported(graph)
    input_types = [TensorType(Float32Type(), graph.shapes[name]) for name in graph.inputs]
    mod = new_top_module(model_name, input_types)
    conv = Converter(graph, mod)
    for name, arg in zip(graph.inputs, conv.block.args, strict=True):
        shape = graph.shapes[name]
        attrs = preprocess.input_attrs(shape) if preprocess and len(shape) == 4 else {}
        conv.emit("top.Input", [arg], name, attrs)
    for proto in graph.nodes:
        node = Node(proto, graph.opset)
        node.check_schema()  # bad input is found here (or raised as TpudslError by the converter)
        try:
            CONVERTERS[node.op_type](node, conv)
        except TpudslError:
            raise
        except Exception as e:  # anything else is a bug in the converter: say so, and whose
            raise InternalError(f"the {node.op_type} converter, at node '{node.name}'") from e
    mod.set_outputs([_output_value(conv, name) for name in graph.outputs])
    verify_module(mod.module, f"{model_name}.mlir")
    return mod, graph.qdq_ranges


def _output_value(conv: Converter, name: str) -> SSAValue:
    """The value of graph output `name`, computed by an op located at `name`.

    An output that is an alias (Identity of another tensor) gets an identity Reshape so that
    the output keeps its ONNX name in the module and in every npz."""
    value = conv.value(name)
    owner = value.owner
    if isinstance(owner, Operation) and result_names(owner)[value.index] == name:
        return value
    return conv.emit("top.Reshape", [value], name, {"shape": list(conv.shape(name))})

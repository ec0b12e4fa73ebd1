"""Prepare an ONNX graph for conversion: fix input shapes, cut outputs, fold constants, infer types.

The converter only ever sees a graph whose every tensor has a static shape and whose
initializer-only subgraphs (the Shape/Gather/Concat/Unsqueeze chains torch exports emit to
compute reshape targets) have already been evaluated into constants. Folding runs before the
unsupported-op check so that an op we cannot convert but that only computes constants (say
NonZero on a constant) never stops a conversion.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference
from onnx.reference import ReferenceEvaluator

from tpudsl.dialects.geometry.window import window_out_size
from tpudsl.frontend.qdq import check_qdq_forms, fold_weight_dequantize, strip_activation_pairs
from tpudsl.ir.diagnostics import TpudslError, last_line

# Ops whose result is not a function of their inputs: folding them would freeze one random draw.
NONDETERMINISTIC = frozenset(
    {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial", "Bernoulli"}
)
# Ops whose result depends only on the input's static shape, not its values.
SHAPE_ONLY = frozenset({"Shape", "Size"})
# Constants above this many elements are given to ONNX shape inference as typed inputs rather than
# initializers: inference only needs the values of small shape-like tensors, and serialising
# large weights on every folding round would dominate the conversion time.
_INFERENCE_VALUE_LIMIT = 4096
_MAX_FOLD_ROUNDS = 16


@dataclass
class PreparedGraph:
    """A graph ready to convert: static shapes everywhere, constants evaluated."""

    opset: int
    inputs: list[str]
    outputs: list[str]
    nodes: list[onnx.NodeProto]
    consts: dict[str, np.ndarray]
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    dtypes: dict[str, int] = field(default_factory=dict)
    qdq_ranges: dict[str, tuple[float, float]] = field(default_factory=dict)  # frontend/qdq.py


def default_opset(model: onnx.ModelProto) -> int:
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return entry.version
    raise TpudslError("the model imports no default-domain ONNX opset")


def _static_dims(vi: onnx.ValueInfoProto) -> list[int | str] | None:
    if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
        return None
    # An unknown dimension is its symbolic name (or "?"), so callers can tell it from a known 0.
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in vi.type.tensor_type.shape.dim]


def _fix_input_shapes(graph: onnx.GraphProto, inputs: list[onnx.ValueInfoProto], shapes: Sequence[Sequence[int]] | None) -> None:
    if shapes is not None and len(shapes) != len(inputs):
        raise TpudslError(
            f"--input_shapes gives {len(shapes)} shape(s) but the model has {len(inputs)} input(s): "
            + ", ".join(vi.name for vi in inputs)
        )
    for i, vi in enumerate(inputs):
        dims = _static_dims(vi)
        if shapes is not None:
            want = [int(d) for d in shapes[i]]
            if dims is not None and len(dims) != len(want):
                raise TpudslError(f"input '{vi.name}' has rank {len(dims)}, --input_shapes gives {want}")
            if dims is not None and any(isinstance(d, int) and d > 0 and d != w for d, w in zip(dims, want)):
                raise TpudslError(f"input '{vi.name}' has static shape {dims}, --input_shapes gives {want}")
        elif dims is None or any(not isinstance(d, int) or d < 0 for d in dims):
            raise TpudslError(f"input '{vi.name}' has dynamic shape {dims}; give its shape with --input_shapes")
        else:
            want = dims
        elem = vi.type.tensor_type.elem_type or onnx.TensorProto.FLOAT
        vi.CopyFrom(helper.make_tensor_value_info(vi.name, elem, want))
    del graph.value_info[:]


def _needed_nodes(nodes: Sequence[onnx.NodeProto], outputs: Sequence[str]) -> list[onnx.NodeProto]:
    """The nodes the outputs depend on, in graph order (ONNX graphs are topologically sorted)."""
    needed = set(outputs)
    keep: list[onnx.NodeProto] = []
    for node in reversed(nodes):
        if any(o in needed for o in node.output):
            keep.append(node)
            needed.update(i for i in node.input if i)
    return keep[::-1]


def _infer(model: onnx.ModelProto, nodes: list[onnx.NodeProto], consts: dict[str, np.ndarray],
           inputs: list[onnx.ValueInfoProto], outputs: list[str], probes: dict[str, onnx.NodeProto]) -> onnx.ModelProto:
    """ONNX shape inference of the graph of `nodes`, with the ceil-mode pools it sizes wrongly
    corrected (`_ceil_pool_probe`): each round fixes the pools whose input shape is known, until
    none is left (a chain of them needs one round each). `probes` (a pool's output name -> its
    corrected copy) keeps the corrections for the graph: folding changes no tensor's shape, so the
    later folding rounds' inferences start from them instead of finding them again."""
    for _ in range(len(nodes) + 1):  # a round fixes at least one pool, or it is the last
        inferred = _infer_once(model, [probes.get(n.output[0], n) if n.output else n for n in nodes], consts,
                               inputs, outputs)
        shapes, _ = _known_shapes(inferred)
        # from the node's own pads: the spec's count
        fixed = {n.output[0]: f for n in nodes if (f := _ceil_pool_probe(n, shapes)) is not None}
        if not fixed:
            break
        probes.update(fixed)
    return inferred


_POOLS = frozenset({"MaxPool", "AveragePool", "LpPool"})


def _ceil_pool_probe(node: onnx.NodeProto, shapes: dict[str, tuple[int, ...]]) -> onnx.NodeProto | None:
    """A copy of a ceil-mode pool whose ONNX-inferred output is a window too long, for shape
    inference only: onnx's inference (1.23) counts a last window that starts in the end padding,
    which the ONNX spec (since opset 19), PyTorch and onnxruntime ignore. The copy's end pads are
    cut until onnx's formula gives the windows the spec's rule (`window_out_size`) counts, so the
    pool's and every later tensor's inferred shape is onnxruntime's; the converted node keeps its
    own pads (the windows it pools are the same). None when the node needs no correction."""
    if node.op_type not in _POOLS or node.input[0] not in shapes or node.output[0] not in shapes:
        return None
    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    auto_pad = attrs.get("auto_pad", b"NOTSET")
    if not attrs.get("ceil_mode", 0) or auto_pad not in (b"NOTSET", "NOTSET") or "pads" not in attrs:
        return None
    size, got = shapes[node.input[0]][2:], shapes[node.output[0]][2:]
    kernel, rank = list(attrs["kernel_shape"]), len(attrs["kernel_shape"])
    strides = list(attrs.get("strides", [1] * rank))
    dilations = list(attrs.get("dilations", [1] * rank))
    pads = list(attrs["pads"])
    if len(size) != rank or len(got) != rank:
        return None
    new_pads, changed = list(pads), False
    for i in range(rank):
        want = window_out_size(size[i], kernel[i], strides[i], dilations[i], pads[i], pads[rank + i], True)
        if got[i] == want:
            continue
        for end in range(pads[rank + i], -1, -1):  # onnx's formula: ceil(span / s) + 1, no correction
            span = size[i] + pads[i] + end - dilations[i] * (kernel[i] - 1) - 1
            if span >= 0 and -(-span // strides[i]) + 1 == want:
                new_pads[rank + i], changed = end, True
                break
    if not changed:
        return None
    probe = onnx.NodeProto.FromString(node.SerializeToString())
    for a in probe.attribute:
        if a.name == "pads":
            a.CopyFrom(helper.make_attribute("pads", new_pads))
    return probe


def _infer_once(model: onnx.ModelProto, nodes: list[onnx.NodeProto], consts: dict[str, np.ndarray],
                inputs: list[onnx.ValueInfoProto], outputs: list[str]) -> onnx.ModelProto:
    used = {i for n in nodes for i in n.input}
    initializers, const_inputs = [], []
    for name, value in consts.items():
        if name not in used:
            continue
        if value.size <= _INFERENCE_VALUE_LIMIT:
            initializers.append(numpy_helper.from_array(value, name))
        else:
            const_inputs.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(value.dtype), value.shape))
    graph = helper.make_graph(
        nodes, "infer", [*inputs, *const_inputs],
        [helper.make_value_info(o, onnx.TypeProto()) for o in outputs], initializers,
    )
    probe = helper.make_model(graph, opset_imports=model.opset_import, ir_version=model.ir_version)
    try:
        return shape_inference.infer_shapes(probe, strict_mode=False, data_prop=True)
    except Exception as e:  # onnx raises several unrelated types for malformed graphs
        raise TpudslError(f"ONNX shape inference failed: {last_line(str(e)) or type(e).__name__}") from None


def _known_shapes(inferred: onnx.ModelProto) -> tuple[dict[str, tuple[int, ...]], dict[str, int]]:
    shapes: dict[str, tuple[int, ...]] = {}
    dtypes: dict[str, int] = {}
    g = inferred.graph
    for vi in [*g.input, *g.value_info, *g.output]:
        if vi.type.tensor_type.elem_type:
            dtypes[vi.name] = vi.type.tensor_type.elem_type
        dims = _static_dims(vi)
        if dims is not None and all(isinstance(d, int) for d in dims):
            shapes[vi.name] = tuple(int(d) for d in dims)  # type: ignore[arg-type]
    return shapes, dtypes


def _evaluate(node: onnx.NodeProto, model: onnx.ModelProto, args: dict[str, np.ndarray]) -> list[np.ndarray] | None:
    """The node's outputs on constant `args`; None when onnx's reference evaluator cannot compute
    them (the node then stays, to be converted or reported as unsupported)."""
    graph = helper.make_graph(
        [node], "fold", [helper.make_value_info(n, onnx.TypeProto()) for n in args],
        [helper.make_value_info(o, onnx.TypeProto()) for o in node.output if o],
    )
    probe = helper.make_model(graph, opset_imports=model.opset_import, ir_version=model.ir_version)
    try:
        return [np.asarray(v) for v in ReferenceEvaluator(probe).run(None, args)]
    except Exception:  # the reference evaluator raises whatever its numpy kernels raise
        return None


def _fold_round(model, nodes, consts, shapes) -> list[onnx.NodeProto]:
    """Evaluate every node whose inputs are all known; return the nodes left."""
    left = []
    for node in nodes:
        ins = [i for i in node.input if i]
        if node.op_type in NONDETERMINISTIC or node.domain not in ("", "ai.onnx") or any(
            a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute
        ):
            left.append(node)
            continue
        if node.op_type in SHAPE_ONLY and ins and ins[0] in shapes:
            args = {ins[0]: np.broadcast_to(np.float32(0), shapes[ins[0]])}  # only its shape is read
        elif all(i in consts for i in ins):
            args = {i: consts[i] for i in ins}
        else:
            left.append(node)
            continue
        values = _evaluate(node, model, args)
        if values is None:
            left.append(node)
            continue
        for name, value in zip([o for o in node.output if o], values, strict=False):
            consts[name] = value
    return left


def prepare(model: onnx.ModelProto, input_shapes: Sequence[Sequence[int]] | None = None,
            output_names: Sequence[str] | None = None) -> PreparedGraph:
    """Fix shapes, cut to `output_names`, fold constant subgraphs and infer every tensor's shape."""
    model = onnx.ModelProto.FromString(model.SerializeToString())  # never mutate the caller's model
    graph = model.graph
    opset = default_opset(model)
    consts = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    for t in graph.sparse_initializer:
        raise TpudslError(f"sparse initializer '{t.values.name}' is not supported")
    # Before IR version 4, initializers were also listed as graph inputs; they are weights, not inputs.
    inputs = [vi for vi in graph.input if vi.name not in consts]
    _fix_input_shapes(graph, inputs, input_shapes)

    produced = {o for n in graph.node for o in n.output} | {vi.name for vi in inputs} | set(consts)
    outputs = list(output_names) if output_names else [o.name for o in graph.output]
    missing = [o for o in outputs if o not in produced]
    if missing:
        raise TpudslError("output names not in the model: " + ", ".join(missing))

    nodes = _needed_nodes(graph.node, outputs)
    check_qdq_forms(nodes, consts)
    nodes = fold_weight_dequantize(nodes, consts)
    probes: dict[str, onnx.NodeProto] = {}
    inferred = _infer(model, nodes, consts, inputs, outputs, probes)
    for _ in range(_MAX_FOLD_ROUNDS):
        shapes, _ = _known_shapes(inferred)
        shapes.update({k: tuple(v.shape) for k, v in consts.items()})
        before = len(nodes)
        nodes = _fold_round(model, nodes, consts, shapes)
        inferred = _infer(model, nodes, consts, inputs, outputs, probes)
        if len(nodes) == before:
            break
    nodes, qdq_ranges = strip_activation_pairs(nodes, consts, outputs, opset)
    shapes, dtypes = _known_shapes(inferred)
    for name, value in consts.items():
        shapes[name] = tuple(value.shape)
        dtypes[name] = helper.np_dtype_to_tensor_dtype(value.dtype)
    return PreparedGraph(opset, [vi.name for vi in inputs], outputs, nodes, consts, shapes, dtypes, qdq_ranges)

"""QDQ models (onnxruntime's quantize_static QuantFormat.QDQ, PyTorch QAT exports): QuantizeLinear
and DequantizeLinear become calibrated ranges, never ops (docs/quantization.md, "QDQ models").

* `check_qdq_forms` runs before constant folding, on every Q/DQ node: the forms not modelled
  (block quantization, storage other than int8/uint8 — int4, float8, int16 —, per-axis
  activations, weights per axis on another axis than the output channels of the op that uses
  them, weights whose output channels do not all peak at |q| = 127, so that the INT8 lowering
  would not store their int8 values again, weights with a zero point) are one error naming the
  node and the form.
* A DequantizeLinear of a constant (a weight or a bias) is then folded by the constant folding to
  float32 weights, (q - zp) * scale, as onnx.reference computes it.
* `strip_activation_pairs` runs after folding: each QuantizeLinear -> DequantizeLinear pair of an
  activation x becomes `Clip(x, (qmin - zp) s, (qmax - zp) s)`, the clamp DQ(Q(x)) applies (the
  float graph runs unrounded but never unclamped: onnxruntime's quantizer deletes a Relu or a Clip
  whose range the Q covers, leaving the clamp to it), and x and the DQ output get
  the range the scale s and zero point zp give: [-127 s, 127 s] for int8 with zp 0 (a symmetric
  threshold of 127 s: the INT8 lowering's scale th / 127 is s), else [(qmin - zp) s, (qmax - zp) s]
  over the storage range (uint8 [0, 255], int8 [-128, 127]), which the asymmetric lowering's
  getScaleAndZeroPoint maps back to s and zp.
* `lowering/import_calibration.calibrate_from_qdq` gives every float Top tensor its range as `!quant.calibrated` (after the Top
  passes), state TOP_CALIBRATED: model_deploy --quantize INT8 (or QDQ) then needs no table.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tpudsl.ir.diagnostics import TpudslError

QDQ_OPS = ("QuantizeLinear", "DequantizeLinear")
DEFAULT_DOMAINS = ("", "ai.onnx")  # com.microsoft's Q/DQ (int16, int4 contrib forms) stay unsupported ops
STORAGE_RANGES = {TensorProto.INT8: (-128, 127), TensorProto.UINT8: (0, 255)}
BIAS_STORAGE = TensorProto.INT32  # onnxruntime quantizes a Conv/Gemm bias to int32 (scale in_s * w_s)
SYMMETRIC_QMAX = 127  # int8 with zero point 0: TPU-MLIR's threshold is 127 * scale


def _output_channel_axis(consumer: onnx.NodeProto, rank: int) -> int | None:
    """The axis of a constant operand that holds the consumer's output channels (None: no such axis)."""
    if consumer.op_type == "Conv":
        return 0
    if consumer.op_type == "ConvTranspose":
        return 1
    if consumer.op_type == "Gemm":
        trans_b = next((a.i for a in consumer.attribute if a.name == "transB"), 0)
        return 0 if trans_b else 1
    if consumer.op_type == "MatMul":
        return rank - 1
    return None


def _is_qdq(node: onnx.NodeProto, *op_types: str) -> bool:
    return node.op_type in op_types and node.domain in DEFAULT_DOMAINS


def _attr(node: onnx.NodeProto, name: str, default: int) -> int:
    return next((a.i for a in node.attribute if a.name == name), default)


def _storage(node: onnx.NodeProto, consts: dict[str, np.ndarray]) -> int | None:
    """The storage type of a Q/DQ node (an ONNX TensorProto data type), None when not constant."""
    if len(node.input) > 2 and node.input[2] in consts:
        return helper.np_dtype_to_tensor_dtype(consts[node.input[2]].dtype)
    if node.op_type == "QuantizeLinear":
        return _attr(node, "output_dtype", 0) or TensorProto.UINT8  # ONNX's default without a zero point
    x = consts.get(node.input[0])
    return None if x is None else helper.np_dtype_to_tensor_dtype(x.dtype)


def _refuse(node: onnx.NodeProto, form: str) -> TpudslError:
    return TpudslError(f"{node.op_type} '{node.name or node.output[0]}': {form} is not modelled "
                       "(QDQ models: int8/uint8 per-tensor activations, int8 per-channel weights)")


def check_qdq_forms(nodes: Sequence[onnx.NodeProto], consts: dict[str, np.ndarray]) -> None:
    """Refuse, naming the node, every Q/DQ form the import does not model (before folding)."""
    users: dict[str, list[onnx.NodeProto]] = {}
    for node in nodes:
        for name in node.input:
            users.setdefault(name, []).append(node)
    for node in nodes:
        if not _is_qdq(node, *QDQ_OPS):
            continue
        if _attr(node, "block_size", 0):
            raise _refuse(node, f"block quantization (block_size={_attr(node, 'block_size', 0)})")
        weight = node.op_type == "DequantizeLinear" and node.input[0] in consts
        storage = _storage(node, consts)
        allowed = set(STORAGE_RANGES) | ({BIAS_STORAGE} if weight else set())
        if storage is not None and storage not in allowed:
            raise _refuse(node, f"storage type {helper.tensor_dtype_to_string(storage).removeprefix('TensorProto.')}")
        if node.input[1] not in consts or (len(node.input) > 2 and node.input[2] and node.input[2] not in consts):
            raise _refuse(node, "a computed scale or zero point")
        scale = consts[node.input[1]]
        zero_point = consts[node.input[2]] if len(node.input) > 2 and node.input[2] else np.zeros(1)
        if not weight:
            if scale.size != 1:
                raise _refuse(node, f"per-axis activation quantization (axis={_attr(node, 'axis', 1)})")
            continue
        if np.any(zero_point != 0):
            raise _refuse(node, "a weight with a nonzero zero point (asymmetric weights)")
        q = consts[node.input[0]]
        axis = _attr(node, "axis", 1) % max(q.ndim, 1)
        for user in users.get(node.output[0], []):
            channel = 0 if storage == BIAS_STORAGE else _output_channel_axis(user, q.ndim)
            if scale.size != 1 and axis != channel:
                raise _refuse(node, f"per-axis weights on axis {axis}, not the output channels of "
                                    f"{user.op_type} '{user.name or user.output[0]}'")
            if storage != BIAS_STORAGE and channel is not None:
                _check_requantizes_exactly(node, q, channel)


def _check_requantizes_exactly(node: onnx.NodeProto, q: np.ndarray, channel: int) -> None:
    """The INT8 lowering quantizes a filter (a MatMul weight: model_deploy lowers a QDQ module with
    matmul_perchannel) per output channel at max|w| / 127: it stores the ONNX int8 values again only
    when every channel's largest |q| is 127 (onnxruntime's symmetric weights) and no q is -128."""
    peaks = np.abs(np.moveaxis(q.astype(np.int64), channel, 0).reshape(q.shape[channel], -1)).max(axis=1)
    bad = np.flatnonzero(peaks != SYMMETRIC_QMAX)
    if bad.size:
        raise _refuse(node, f"a weight whose output channel {int(bad[0])} peaks at |q| = {int(peaks[bad[0]])}, not "
                            f"{SYMMETRIC_QMAX} (the INT8 lowering's per-channel scale max|w| / 127 would not give "
                            "back its int8 values)")


def fold_weight_dequantize(nodes: list[onnx.NodeProto], consts: dict[str, np.ndarray]) -> list[onnx.NodeProto]:
    """Each DequantizeLinear of a constant becomes the float32 constant (q - zp) * scale (scale and
    zero point broadcast along `axis` when per axis); the other nodes are returned. Folded here, not by
    onnx.reference, which has no DequantizeLinear before opset 19."""
    left = []
    for node in nodes:
        if not _is_qdq(node, "DequantizeLinear") or node.input[0] not in consts:
            left.append(node)
            continue
        q = consts[node.input[0]]
        scale = consts[node.input[1]].astype(np.float32)
        zero_point = consts[node.input[2]] if len(node.input) > 2 and node.input[2] else np.zeros((), q.dtype)
        if scale.size != 1:  # per axis: the parameters along `axis` of q
            shape = [1] * q.ndim
            shape[_attr(node, "axis", 1) % q.ndim] = scale.size
            scale, zero_point = scale.reshape(shape), zero_point.reshape(shape)
        consts[node.output[0]] = ((q.astype(np.int64) - zero_point.astype(np.int64)).astype(np.float32)
                                  * scale).astype(np.float32)
    return left


def qdq_range(scale: float, zero_point: int, storage: int) -> tuple[float, float]:
    """The calibrated range a Q/DQ pair stands for (the module docstring's rule)."""
    if storage == TensorProto.INT8 and zero_point == 0:
        return -SYMMETRIC_QMAX * scale, SYMMETRIC_QMAX * scale
    return qdq_clamp(scale, zero_point, storage)


def qdq_clamp(scale: float, zero_point: int, storage: int) -> tuple[float, float]:
    """The bounds DQ(Q(x)) clamps x to: the storage range's ends dequantized (int8 zp 0: -128 s, 127 s)."""
    qmin, qmax = STORAGE_RANGES[storage]
    return (qmin - zero_point) * scale, (qmax - zero_point) * scale


def _clamp_node(dq: onnx.NodeProto, x: str, bounds: tuple[float, float], consts: dict[str, np.ndarray],
                opset: int) -> onnx.NodeProto:
    """Clip(x, lo, hi) computing the DQ's output (its name kept: the tensor DQ(Q(x)) is the clamped
    x); from opset 11 the bounds are constants named after the DQ output (added to `consts`)."""
    out = dq.output[0]
    if opset < 11:
        return helper.make_node("Clip", [x], [out], name=dq.name, min=bounds[0], max=bounds[1])
    names = [f"{out}_qdq_min", f"{out}_qdq_max"]
    for name, bound in zip(names, bounds, strict=True):
        consts[name] = np.array(bound, np.float32)
    return helper.make_node("Clip", [x, *names], [out], name=dq.name)


def strip_activation_pairs(nodes: list[onnx.NodeProto], consts: dict[str, np.ndarray], outputs: Sequence[str],
                           opset: int) -> tuple[list[onnx.NodeProto], dict[str, tuple[float, float]]]:
    """Each activation Q -> DQ pair as the Clip it means (`qdq_clamp`), and the ranges of the tensors
    they named (after folding); a Q result that is a graph output or read by another op than a DQ is
    refused."""
    quantize = {n.output[0]: n for n in nodes if _is_qdq(n, "QuantizeLinear")}
    ranges: dict[str, tuple[float, float]] = {}
    paired: set[str] = set()
    kept = []
    for node in nodes:
        if _is_qdq(node, "QuantizeLinear"):
            continue  # dropped once its DequantizeLinear users are Identities, checked below
        if not _is_qdq(node, "DequantizeLinear") or node.input[0] in consts:  # a weight's DQ stays
            kept.append(node)
            continue
        q = quantize.get(node.input[0])
        if q is None:
            raise _refuse(node, f"a dequantized tensor '{node.input[0]}' that no QuantizeLinear computes")
        params = [tuple(consts[n.input[i]].ravel().tolist()) if len(n.input) > i and n.input[i] else None
                  for n in (q, node) for i in (1, 2)]
        if params[:2] != params[2:]:
            raise _refuse(node, f"a scale or zero point other than its QuantizeLinear '{q.name or q.output[0]}''s")
        storage = _storage(q, consts)
        scale = float(consts[q.input[1]].ravel()[0])
        zero_point = int(consts[q.input[2]].ravel()[0]) if len(q.input) > 2 and q.input[2] else 0
        lo_hi = qdq_range(scale, zero_point, storage)  # type: ignore[arg-type]
        for name in (q.input[0], node.output[0]):
            if ranges.setdefault(name, lo_hi) != lo_hi:
                raise _refuse(node, f"tensor '{name}' quantized with two different scales")
        paired.add(q.output[0])
        bounds = qdq_clamp(scale, zero_point, storage)  # type: ignore[arg-type]
        kept.append(_clamp_node(node, q.input[0], bounds, consts, opset))
    used = {i for n in nodes if not _is_qdq(n, "DequantizeLinear") for i in n.input} | set(outputs)
    for out, q in quantize.items():
        if out not in paired or out in used:
            raise _refuse(q, "a quantized tensor used other than by DequantizeLinear (integer outputs)")
    return kept, ranges


def float_graph(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with its activation Q/DQ pairs as Clips (weights still dequantized): what the
    Top module computes, model_transform's onnxruntime reference for a QDQ model."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    consts = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    opset = next(o.version for o in model.opset_import if o.domain in DEFAULT_DOMAINS)
    nodes, _ = strip_activation_pairs(list(model.graph.node), consts, [o.name for o in model.graph.output], opset)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    known = {t.name for t in model.graph.initializer}
    model.graph.initializer.extend(numpy_helper.from_array(v, k) for k, v in consts.items() if k not in known)
    return model


"""A float64 reference of an ONNX chain of float ops and a first-order bound on how far any float32
implementation of it may be from that reference: what an F32 comparison can ask of an output that
amplifies its inputs' rounding (docs/testing.md, "F32 chains": a LayerNorm over a row of nearly
equal values, a Softmax of logits in the thousands, a Gemm whose sum cancels).

What float32 guarantees each op, whatever its order of summation (Higham, "Accuracy and Stability
of Numerical Algorithms", 2nd ed., section 3.1: a sum of n terms in any order is within
gamma_n = n u / (1 - n u) of the sum of their magnitudes; u = 2^-24): a sum of n products, its
bias one more, within n u of the sum of |products| (to first order); Softmax/LogSoftmax and
LayerNorm, sums of n values of a row, within (n + FEW) u; the rest, a few roundings each, within
FEW u (an add, a multiply: u). With every op so, each tensor t is within tau_t of its float64
value t64, elementwise, to first order: tau_t = the op's own error + how the op moves its inputs'
errors, bounded with absolute values:

- a sum of products (Conv, ConvTranspose, MatMul, Gemm): the op applied to tau with |weights|
  and no bias (|sum w (x + e) - sum w x| <= sum |w| tau);
- an average, a copy or a selection (AveragePool, Resize, MaxPool, Relu, Transpose, Slice, Pad,
  Concat, Flatten): the op applied to tau (non-negative weights summing to 1, or moved elements;
  a max or a Relu moves no more than its inputs do);
- Add/Sub: tau_a + tau_b; Mul: |a| tau_b + |b| tau_a + tau_a tau_b; Max/Min: max(tau_a, tau_b);
- Softmax y of z: dy_i = y_i (dz_i - sum_j y_j dz_j), so tau_i' = y_i (tau_i + sum_j y_j tau_j),
  the rounding of z - max(z) (u |z - max z|) part of dz; LogSoftmax: tau_i + sum_j y_j tau_j;
- LayerNormalization of a row x (c = x - mean, s = sqrt(mean(c^2) + eps), n = c / s):
  dn_i = (dx_i - mean dx) / s - n_i mean(n dx) / s, so
  tau_i' = |weight_i| ((tau_i + mean tau) / s + |n_i| mean(|n| tau) / s): 1/s, up to
  1/sqrt(eps) = 316 for eps 1e-5, amplifies the input's error where the row is nearly constant.
Each value's bound also has float32's underflow, 2^-126 (a Softmax of -100 flushed to 0). These
are worst cases (every rounding at its bound, every error aligned), so tau is far above what an
implementation's errors come to; an op not listed is an error naming it (no silent bound)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun


class ConvTranspose(OpRun):  # the name is the op it replaces in ReferenceEvaluator
    """float64 ConvTranspose from ONNX's definition (2-D; groups, dilations, pads, output_padding):
    onnx's reference ConvTranspose fails on groups (onnx 1.23: "cannot reshape array")."""

    def _run(self, x, w, b=None, auto_pad=None, dilations=None, group=None, kernel_shape=None,
             output_padding=None, output_shape=None, pads=None, strides=None):
        n, c, h, wd = x.shape
        g = group or 1
        cg, og, kh, kw = c // g, w.shape[1], w.shape[2], w.shape[3]
        (sh, sw), (dh, dw) = strides or (1, 1), dilations or (1, 1)
        pt, pl, pb, pr = pads or (0, 0, 0, 0)
        oph, opw = output_padding or (0, 0)
        full = np.zeros((n, og * g, (h - 1) * sh + (kh - 1) * dh + 1 + oph, (wd - 1) * sw + (kw - 1) * dw + 1 + opw))
        for gi in range(g):
            xs, ws = x[:, gi * cg:(gi + 1) * cg], w[gi * cg:(gi + 1) * cg]
            for i in range(kh):
                for j in range(kw):
                    full[:, gi * og:(gi + 1) * og, i * dh:i * dh + (h - 1) * sh + 1:sh,
                         j * dw:j * dw + (wd - 1) * sw + 1:sw] += np.einsum("nchw,co->nohw", xs, ws[:, :, i, j])
        y = full[:, :, pt:full.shape[2] - pb, pl:full.shape[3] - pr]
        return (y if b is None else y + b[None, :, None, None],)


class _Pool(OpRun):
    """float64 2-D MaxPool/AveragePool from ONNX's definition (pads, strides, count_include_pad):
    onnx's reference pools fail on a window that ends in the end pad (onnx 1.23: "zero-size array")."""

    op = ""

    def _run(self, x, kernel_shape=None, pads=None, strides=None, count_include_pad=0, auto_pad=None,
             ceil_mode=0, dilations=None, storage_order=0):
        (kh, kw), (sh, sw) = kernel_shape, strides or (1, 1)
        pt, pl, pb, pr = pads or (0, 0, 0, 0)
        fill = -np.inf if self.op == "max" else 0.0
        xp = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=fill)
        valid = np.pad(np.ones(x.shape[2:]), ((pt, pb), (pl, pr)))
        oh, ow = (xp.shape[2] - kh) // sh + 1, (xp.shape[3] - kw) // sw + 1
        win = lambda a: np.stack([a[..., i:i + (oh - 1) * sh + 1:sh, j:j + (ow - 1) * sw + 1:sw]  # noqa: E731
                                  for i in range(kh) for j in range(kw)])
        if self.op == "max":
            return (win(xp).max(axis=0),)
        count = kh * kw if count_include_pad else win(valid).sum(axis=0)
        return (win(xp).sum(axis=0) / count,)


class MaxPool(_Pool):  # the names are the ops they replace in ReferenceEvaluator
    op = "max"


class AveragePool(_Pool):
    op = "avg"


def _resize_axis(x: np.ndarray, axis: int, scale: float, mode: str, coord: str, nearest: str) -> np.ndarray:
    """One axis of ONNX Resize (opset 13+, no roi, no extrapolation): each output index's source
    coordinate by `coord`, then the nearest index by `nearest` or the linear mix of its two
    neighbours, indices clamped to the input."""
    n_in = x.shape[axis]
    n_out = int(np.floor(n_in * scale))
    o = np.arange(n_out, dtype=np.float64)
    src = {"half_pixel": (o + 0.5) / scale - 0.5,
           "pytorch_half_pixel": (o + 0.5) / scale - 0.5 if n_out > 1 else 0 * o,
           "align_corners": o * (n_in - 1) / (n_out - 1) if n_out > 1 else 0 * o,
           "asymmetric": o / scale}[coord]
    if mode == "nearest":
        idx = {"round_prefer_floor": np.ceil(src - 0.5), "round_prefer_ceil": np.floor(src + 0.5),
               "floor": np.floor(src), "ceil": np.ceil(src)}[nearest]
        return np.take(x, np.clip(idx, 0, n_in - 1).astype(np.int64), axis=axis)
    src = np.clip(src, 0, n_in - 1)
    i0 = np.floor(src).astype(np.int64)
    f = (src - i0).reshape((-1,) + (1,) * (x.ndim - axis - 1))
    return np.take(x, i0, axis=axis) * (1 - f) + np.take(x, np.minimum(i0 + 1, n_in - 1), axis=axis) * f


class Resize(OpRun):  # onnx's reference Resize differs from onnxruntime for align_corners at scale 0.5 or 1.5
    """float64 Resize by scales along H and W, modes nearest and linear (ONNX's definition)."""

    def _run(self, x, roi=None, scales=None, sizes=None, mode="nearest", coordinate_transformation_mode="half_pixel",
             nearest_mode="round_prefer_floor", **_):
        mode, coord, nearest = (v.decode() if isinstance(v, bytes) else v
                                for v in (mode, coordinate_transformation_mode, nearest_mode))
        if mode not in ("nearest", "linear") or list(scales[:2]) != [1, 1]:
            raise NotImplementedError(f"f64_bound: Resize mode {mode}, scales {list(scales)}")
        for axis in (2, 3):
            x = _resize_axis(x, axis, float(scales[axis]), mode, coord, nearest)
        return (x,)


def _run(node, inputs: list) -> np.ndarray:
    """The node's first output in float64 on `inputs` (None: an absent optional input)."""
    names = [f"i{k}" if v is not None else "" for k, v in enumerate(inputs)]
    one = onnx.NodeProto()
    one.CopyFrom(node)
    del one.input[:], one.output[:]
    one.input.extend(names)
    one.output.append("y")
    types = {np.dtype(np.float64): TensorProto.DOUBLE, np.dtype(np.int64): TensorProto.INT64}
    graph = helper.make_graph([one], "n", [helper.make_tensor_value_info(k, types[v.dtype], v.shape)
                                           for k, v in zip(names, inputs, strict=True) if v is not None],
                              [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    feed = {k: v for k, v in zip(names, inputs, strict=True) if v is not None}
    return ReferenceEvaluator(model, new_ops=[ConvTranspose, MaxPool, AveragePool, Resize]).run(None, feed)[0]


SUMS = ("Conv", "ConvTranspose", "MatMul", "Gemm")
MOVES = ("AveragePool", "Resize", "MaxPool", "Relu", "Transpose", "Slice", "Pad", "Concat", "Flatten")
REDUCED = ("Softmax", "LogSoftmax", "LayerNormalization")
U = 2.0**-24  # float32's unit roundoff
TINY = 2.0**-126  # float32's least normal: a result below it (an exp of -100) may flush to 0, absolute
# A few roundings (an exp, a log, a division, a square root, a lerp) and an average of at most
# 3 x 3 values (9 sums and a division): tpu ops of the chains that are no sum of products.
FEW = 16


def _attr(node, name: str, default):
    return next((helper.get_attribute_value(a) for a in node.attribute if a.name == name), default)


def _terms(node, ins: list) -> int:
    """How many products a sum of products adds per output value (its bias one more)."""
    x, w = ins[0], ins[1]
    if node.op_type == "Conv":
        return int(np.prod(w.shape[1:])) + 1
    if node.op_type == "ConvTranspose":  # each output sums at most every input channel of its group x kernel
        return w.shape[0] // _attr(node, "group", 1) * int(np.prod(w.shape[2:])) + 1
    return x.shape[-1] + 1  # MatMul, Gemm (transA 0): the inner dim


def _reduce_axes(node, x: np.ndarray) -> tuple[int, ...]:
    first = _attr(node, "axis", -1) % x.ndim
    return (first,) if node.op_type != "LayerNormalization" else tuple(range(first, x.ndim))


def _moved_rounding(node, ins: list, out: np.ndarray):
    """The own error of an op that averages, copies or selects. An average's is relative to what it
    averages (opposite signs cancel); a linear Resize's source coordinate (o + 1/2) / scale - 1/2
    is itself rounded, by up to a few u of the input's length n, which moves the mix of a and b by
    that much of |b - a| <= 2 max|x|; a copy's is none (FEW u of |out| kept as a margin)."""
    if node.op_type == "AveragePool":
        return FEW * U * _run(node, [np.abs(ins[0]), *ins[1:]])
    if node.op_type == "Resize" and _attr(node, "mode", b"nearest") == b"linear":
        return (FEW + 2 * max(ins[0].shape[2:])) * U * np.abs(ins[0]).max(initial=0)
    return FEW * U * np.abs(out)


def _bound(node, ins: list, taus: list, out: np.ndarray) -> np.ndarray:
    """tau of the node's output from its inputs (float64) and their bounds (module docstring)."""
    op = node.op_type
    if op in SUMS:  # (a weight computed by the chain has its own bound: |x| applied to it too)
        x, w = ins[0], ins[1]
        magnitude = _run(node, [np.abs(v) if v is not None and v.dtype.kind == "f" else v for v in ins])
        moved = _run(node, [taus[0], np.abs(w)]) + (_run(node, [np.abs(x), taus[1]]) if taus[1].any() else 0)
        return _terms(node, ins) * U * magnitude + moved
    if op in MOVES:  # the data operand(s) replaced by their bounds; the others (indices, scales) kept
        data = len(ins) if op == "Concat" else 1
        return _moved_rounding(node, ins, out) + _run(node, [*taus[:data], *ins[data:]])
    if op in ("Add", "Sub", "Max", "Min"):
        moved = taus[0] + taus[1] if op in ("Add", "Sub") else np.maximum(taus[0], taus[1])
        return U * np.abs(out) + moved
    if op == "Mul":
        return U * np.abs(out) + np.abs(ins[0]) * taus[1] + np.abs(ins[1]) * taus[0] + taus[0] * taus[1]
    if op not in REDUCED:
        raise NotImplementedError(f"f64_bound: no error bound for {op}")
    x = ins[0]
    axes = _reduce_axes(node, x)
    n = int(np.prod([x.shape[a] for a in axes]))
    if op in ("Softmax", "LogSoftmax"):  # the sum of n exps: (n + FEW) u of it; as dz, what it moves
        y = out if op == "Softmax" else np.exp(out)
        dz = taus[0] + U * np.abs(x - x.max(axis=axes, keepdims=True))
        spread = dz + (y * dz).sum(axis=axes, keepdims=True) + (n + FEW) * U
        return y * spread if op == "Softmax" else spread + U * np.abs(out)
    # LayerNorm: its own sums (the mean, the variance: n terms of |x|) as an input error of (n + FEW)
    # u of the row's largest |x|, moved as the input's own
    tau = taus[0] + (n + FEW) * U * np.abs(x).max(axis=axes, keepdims=True)
    c = x - x.mean(axis=axes, keepdims=True)
    s = np.sqrt((c * c).mean(axis=axes, keepdims=True) + _attr(node, "epsilon", 1e-5))
    moved = (tau + tau.mean(axis=axes, keepdims=True)) / s + np.abs(c / s) * (np.abs(c / s) * tau).mean(
        axis=axes, keepdims=True) / s
    scaled = moved if ins[1] is None else np.abs(ins[1]) * moved
    return FEW * U * np.abs(out) + scaled


def reference_and_bound(model, feed: dict[str, np.ndarray]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each graph output's float64 value and its bound tau (elementwise), the inputs exact."""
    values = {k: v.astype(np.float64) if v.dtype.kind == "f" else v for k, v in feed.items()}
    values |= {t.name: (lambda a: a.astype(np.float64) if a.dtype.kind == "f" else a)(numpy_helper.to_array(t))
               for t in model.graph.initializer}
    taus = {k: np.zeros_like(v) for k, v in values.items() if v.dtype.kind == "f"}
    for node in model.graph.node:
        ins = [values[k] if k else None for k in node.input]
        out = _run(node, ins)
        taus[node.output[0]] = TINY + _bound(node, ins, [taus.get(k) if k else None for k in node.input], out)
        values[node.output[0]] = out
    return {o.name: (values[o.name], taus[o.name]) for o in model.graph.output}

"""Hypothesis strategies for random, valid ONNX models (single ops and small graphs).

    model, feeds = draw(conv_models())

Every strategy returns an onnx.ModelProto (opset 17, float32, static shapes) and its input arrays.
Validity is onnxruntime's to judge: `reference(model, feeds)` runs it and also fills the graph
outputs' shapes from the result (as exported models carry them). Input values come from a numpy
generator seeded by a drawn integer (cheap to shrink), uniform in [-2, 2] unless an op needs a
safer domain (Log/Sqrt: positive, Div: |x| >= 0.5, Pow: positive base).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8


class Graph:
    """A tiny ONNX graph builder with unique names."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.outputs: list[str] = []
        self.inits: list[onnx.TensorProto] = []
        self.feeds: dict[str, np.ndarray] = {}
        self._n = 0

    def fresh(self, stem: str) -> str:
        self._n += 1
        return f"{stem}_{self._n}"

    def input(self, shape: Sequence[int], low: float = -2.0, high: float = 2.0, stem: str = "x",
              away_from_zero: float = 0.0) -> str:
        name = self.fresh(stem)
        data = self.rng.uniform(low, high, size=tuple(shape)).astype(np.float32)
        if away_from_zero:
            data = np.where(np.abs(data) < away_from_zero, np.copysign(away_from_zero, data) + data, data)
            data = data.astype(np.float32)
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)))
        self.feeds[name] = data
        return name

    def const(self, value: np.ndarray, stem: str = "w") -> str:
        name = self.fresh(stem)
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def weight(self, shape: Sequence[int], scale: float = 0.5, stem: str = "w") -> str:
        return self.const(self.rng.uniform(-scale, scale, size=tuple(shape)).astype(np.float32), stem)

    def node(self, op: str, inputs: Sequence[str], n_out: int = 1, **attrs: Any) -> str | list[str]:
        outs = [self.fresh(op.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op, list(inputs), outs, name=outs[0], **attrs))
        return outs[0] if n_out == 1 else outs

    def output(self, name: str) -> None:
        self.outputs.append(name)

    def model(self) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes, "random", self.inputs,
            [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in self.outputs],
            initializer=self.inits,
        )
        m = helper.make_model(graph, opset_imports=[helper.make_operatorsetid("", OPSET)],
                              producer_name="tpudsl-hypothesis")
        m.ir_version = IR_VERSION
        return m

    def done(self) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
        return self.model(), dict(self.feeds)


def reference(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """Run onnxruntime (one thread); return the model with output shapes filled in, and the outputs."""
    from onnx_node.harness import onnxruntime_run

    out = onnxruntime_run(model, feeds)
    model = onnx.ModelProto.FromString(model.SerializeToString())
    for vi in model.graph.output:
        shape = out[vi.name].shape
        vi.type.tensor_type.ClearField("shape")
        vi.type.tensor_type.shape.SetInParent()
        for d in shape:
            vi.type.tensor_type.shape.dim.add().dim_value = d
    onnx.checker.check_model(model, full_check=True)
    return model, out


seeds = st.integers(0, 2**31 - 1)


def _spatial(draw: st.DrawFn, rank: int, lo: int, hi: int) -> list[int]:
    return [draw(st.integers(lo, hi)) for _ in range(rank)]


# ---- convolution family ---------------------------------------------------------------------


@st.composite
def conv_models(draw: st.DrawFn) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    g = Graph(draw(seeds))
    nd = draw(st.sampled_from([1, 2, 2, 2, 3]))
    group = draw(st.integers(1, 3))
    cin = group * draw(st.integers(1, 3))
    cout = group * draw(st.integers(1, 3))
    n = draw(st.integers(1, 2))
    k = _spatial(draw, nd, 1, 3)
    d = _spatial(draw, nd, 1, 2)
    s = _spatial(draw, nd, 1, 3)
    ext = [(ki - 1) * di + 1 for ki, di in zip(k, d, strict=True)]
    auto_pad = draw(st.sampled_from(["NOTSET", "NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]))
    attrs: dict[str, Any] = {"kernel_shape": k, "strides": s, "dilations": d, "group": group}
    if auto_pad == "NOTSET":
        pads = [draw(st.integers(0, e - 1)) if e > 1 else 0 for e in ext] + \
               [draw(st.integers(0, e - 1)) if e > 1 else 0 for e in ext]
        attrs["pads"] = pads
    else:
        attrs["auto_pad"] = auto_pad
        pads = [0] * (2 * nd)
        if auto_pad != "VALID":  # onnxruntime rejects SAME_* with dilation
            d = [1] * nd
            attrs["dilations"] = d
            ext = list(k)
    size = [max(e - pads[i] - pads[i + nd], 1) + draw(st.integers(0, 6)) for i, e in enumerate(ext)]
    x = g.input([n, cin, *size])
    dynamic = draw(st.booleans()) if draw(st.integers(0, 4)) == 0 else False
    w = g.input([cout, cin // group, *k], -0.5, 0.5, stem="wdyn") if dynamic else g.weight([cout, cin // group, *k])
    ins = [x, w]
    if draw(st.booleans()):
        ins.append(g.weight([cout], stem="b"))
    g.output(g.node("Conv", ins, **attrs))
    return g.done()


@st.composite
def conv_transpose_models(draw: st.DrawFn) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    g = Graph(draw(seeds))
    nd = draw(st.sampled_from([1, 2, 2, 2, 3]))
    group = draw(st.integers(1, 2))
    cin = group * draw(st.integers(1, 3))
    cout = group * draw(st.integers(1, 3))
    k = _spatial(draw, nd, 1, 4)
    s = _spatial(draw, nd, 1, 3)
    d = _spatial(draw, nd, 1, 2)
    size = _spatial(draw, nd, 1, 6)
    pads = [draw(st.integers(0, max((ki - 1) * di, 0))) for ki, di in zip(k, d, strict=True)]
    pads = pads + [draw(st.integers(0, max((ki - 1) * di, 0))) for ki, di in zip(k, d, strict=True)]
    # output_padding must be smaller than the stride (onnxruntime's rule; the spec also allows < dilation)
    opad = [draw(st.integers(0, si - 1)) for si in s]
    attrs: dict[str, Any] = {"kernel_shape": k, "strides": s, "dilations": d, "group": group, "pads": pads}
    if any(opad):
        attrs["output_padding"] = opad
    x = g.input([1, cin, *size])
    ins = [x, g.weight([cin, cout // group, *k])]
    if draw(st.booleans()):
        ins.append(g.weight([cout], stem="b"))
    out_size = [(si - 1) * st_ + ((ki - 1) * di + 1) - pads[i] - pads[i + nd] + op
                for i, (si, st_, ki, di, op) in enumerate(zip(size, s, k, d, opad, strict=True))]
    if min(out_size) < 1:
        attrs["pads"] = [0] * (2 * nd)
    g.output(g.node("ConvTranspose", ins, **attrs))
    return g.done()


@st.composite
def pool_models(draw: st.DrawFn) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    g = Graph(draw(seeds))
    op = draw(st.sampled_from(["MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"]))
    nd = draw(st.sampled_from([1, 2, 2, 3]))
    c = draw(st.integers(1, 4))
    if op.startswith("Global"):
        x = g.input([draw(st.integers(1, 2)), c, *_spatial(draw, nd, 1, 7)])
        g.output(g.node(op, [x]))
        return g.done()
    k = _spatial(draw, nd, 1, 3)
    s = _spatial(draw, nd, 1, 3)
    attrs: dict[str, Any] = {"kernel_shape": k, "strides": s}
    # No pooling dilations: the frontend rejects them (node tests test_maxpool_2d_dilations etc. in skips.py).
    d = [1] * nd
    ext = [(ki - 1) * di + 1 for ki, di in zip(k, d, strict=True)]
    # pads smaller than the kernel (ONNX requires pad < kernel for a window to see data)
    pads = [draw(st.integers(0, ki - 1)) for ki in k] + [draw(st.integers(0, ki - 1)) for ki in k]
    attrs["pads"] = pads
    if op == "AveragePool":
        attrs["count_include_pad"] = draw(st.integers(0, 1))
    size = [max(e, 1) + draw(st.integers(0, 6)) for e in ext]
    if draw(st.booleans()):
        # ceil_mode, unless the extra window would start in the right padding: there onnx (>= 1.16,
        # drops it) and onnxruntime (keeps it) disagree, so it is not a well-defined case to test.
        ok = True
        for i in range(nd):
            span = size[i] + pads[i] + pads[i + nd] - ext[i]
            out_ceil = -(-span // s[i]) + 1
            if (out_ceil - 1) * s[i] >= size[i] + pads[i]:
                ok = False
        if ok:
            attrs["ceil_mode"] = 1
    x = g.input([draw(st.integers(1, 2)), c, *size])
    g.output(g.node(op, [x], **attrs))
    return g.done()


# ---- matrix products ------------------------------------------------------------------------


@st.composite
def matmul_models(draw: st.DrawFn) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    g = Graph(draw(seeds))
    m, k, n = (draw(st.integers(1, 8)) for _ in range(3))
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    a_batch = [b if draw(st.booleans()) else 1 for b in batch]
    b_batch = [b if draw(st.booleans()) else 1 for b in batch]
    b_batch = b_batch[draw(st.integers(0, len(b_batch))):]
    a_shape = [*a_batch, m, k] if draw(st.integers(0, 5)) else [k]
    b_shape = [*b_batch, k, n] if draw(st.integers(0, 5)) else [k]
    a = g.input(a_shape)
    b = g.weight(b_shape) if draw(st.booleans()) else g.input(b_shape)
    g.output(g.node("MatMul", [a, b]))
    return g.done()


@st.composite
def gemm_models(draw: st.DrawFn) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    g = Graph(draw(seeds))
    m, k, n = (draw(st.integers(1, 8)) for _ in range(3))
    ta, tb = draw(st.integers(0, 1)), draw(st.integers(0, 1))
    a = g.input([k, m] if ta else [m, k])
    b = g.weight([n, k] if tb else [k, n])
    ins = [a, b]
    attrs: dict[str, Any] = {"transA": ta, "transB": tb}
    if draw(st.booleans()):
        attrs["alpha"] = draw(st.sampled_from([0.5, 1.0, 2.0]))
    if draw(st.booleans()):
        c_shape = draw(st.sampled_from([[n], [1, n], [m, n], [m, 1], [1]]))
        ins.append(g.weight(c_shape, stem="c"))
        if draw(st.booleans()):
            attrs["beta"] = draw(st.sampled_from([0.5, 1.0, 3.0]))
    g.output(g.node("Gemm", ins, **attrs))
    return g.done()


# ---- data movement --------------------------------------------------------------------------


@st.composite
def resize_models(draw: st.DrawFn) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    g = Graph(draw(seeds))
    n, c = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    h, w = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    x = g.input([n, c, h, w])
    mode = draw(st.sampled_from(["nearest", "linear"]))
    if mode == "nearest":
        ctm = draw(st.sampled_from(["asymmetric", "half_pixel", "align_corners"]))
        attrs = {"mode": mode, "coordinate_transformation_mode": ctm,
                 "nearest_mode": draw(st.sampled_from(["floor", "round_prefer_floor", "round_prefer_ceil", "ceil"]))}
    else:
        ctm = draw(st.sampled_from(["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"]))
        attrs = {"mode": mode, "coordinate_transformation_mode": ctm}
    roi = g.const(np.zeros([0], np.float32), "roi")
    if draw(st.booleans()):
        sh = draw(st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0]))
        sw = draw(st.sampled_from([0.5, 1.0, 1.5, 2.0, 3.0]))
        if int(h * sh) < 1 or int(w * sw) < 1:
            sh = sw = 2.0
        ins = [x, roi, g.const(np.array([1, 1, sh, sw], np.float32), "scales")]
    else:
        oh, ow = draw(st.integers(1, 12)), draw(st.integers(1, 12))
        ins = [x, roi, g.const(np.zeros([0], np.float32), "scales"), g.const(np.array([n, c, oh, ow], np.int64), "sizes")]
    g.output(g.node("Resize", ins, **attrs))
    return g.done()


def _shape(draw: st.DrawFn, min_rank: int = 1, max_rank: int = 4, max_dim: int = 5) -> list[int]:
    rank = draw(st.integers(min_rank, max_rank))
    return [draw(st.integers(1, max_dim)) for _ in range(rank)]


@st.composite
def concat_models(draw: st.DrawFn) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    g = Graph(draw(seeds))
    shape = _shape(draw)
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    ins = []
    for _ in range(draw(st.integers(1, 4))):
        s = list(shape)
        s[axis] = draw(st.integers(1, 4))
        ins.append(g.weight(s) if draw(st.integers(0, 3)) == 0 else g.input(s))
    if all(i not in g.feeds for i in ins):
        ins.append(g.input(shape))
    g.output(g.node("Concat", ins, axis=axis))
    return g.done()


@st.composite
def transpose_models(draw: st.DrawFn) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    g = Graph(draw(seeds))
    shape = _shape(draw, 1, 5)
    perm = draw(st.permutations(range(len(shape))))
    x = g.input(shape)
    if draw(st.integers(0, 4)) == 0:
        g.output(g.node("Transpose", [x]))  # default: reverse
    else:
        g.output(g.node("Transpose", [x], perm=list(perm)))
    return g.done()


@st.composite
def reshape_models(draw: st.DrawFn) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    g = Graph(draw(seeds))
    shape = _shape(draw, 1, 4)
    total = int(np.prod(shape))
    factors = []
    rest = total
    for _ in range(draw(st.integers(0, 3))):
        divs = [d for d in range(1, rest + 1) if rest % d == 0]
        f = draw(st.sampled_from(divs))
        factors.append(f)
        rest //= f
    target = [*factors, rest]
    draw(st.randoms()).shuffle(target)
    # a -1 somewhere; a 0 (copy input dim) where it equals the input dim at that position
    if draw(st.booleans()):
        target[draw(st.integers(0, len(target) - 1))] = -1
    if draw(st.booleans()):
        for i, t in enumerate(target):
            if i < len(shape) and t == shape[i]:
                target[i] = 0
                break
    x = g.input(shape)
    op = draw(st.sampled_from(["Reshape", "Reshape", "Flatten", "Squeeze_Unsqueeze"]))
    if op == "Reshape":
        g.output(g.node("Reshape", [x, g.const(np.array(target, np.int64), "shape")]))
    elif op == "Flatten":
        g.output(g.node("Flatten", [x], axis=draw(st.integers(-len(shape), len(shape)))))
    else:
        ax = draw(st.integers(0, len(shape)))
        u = g.node("Unsqueeze", [x, g.const(np.array([ax], np.int64), "axes")])
        g.output(g.node("Squeeze", [u, g.const(np.array([ax], np.int64), "axes")]))
    return g.done()


# ---- element-wise, softmax, reductions ------------------------------------------------------

BINARY = ["Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"]
UNARY: dict[str, dict[str, Any]] = {
    "Relu": {}, "Sigmoid": {}, "Tanh": {}, "Exp": {}, "Log": {}, "Sqrt": {}, "Abs": {}, "Neg": {},
    "Erf": {}, "LeakyRelu": {"alpha": 0.1}, "Elu": {"alpha": 0.7}, "HardSigmoid": {"alpha": 0.3, "beta": 0.4},
    "Softplus": {}, "Reciprocal": {}, "HardSwish": {}, "Floor": {}, "Ceil": {}, "Sin": {}, "Cos": {},
}


def _broadcast_partner(draw: st.DrawFn, shape: list[int]) -> list[int]:
    """A shape that numpy-broadcasts with `shape` (drop leading dims, set some dims to 1)."""
    s = shape[draw(st.integers(0, len(shape))):]
    return [1 if draw(st.integers(0, 2)) == 0 else d for d in s]


def _allowed(names: list[str], ops: set[str] | None) -> list[str]:
    chosen = sorted(n for n in names if ops is None or n in ops)
    return chosen or sorted(names)


@st.composite
def elementwise_models(draw: st.DrawFn, ops: set[str] | None = None) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A binary (broadcasting) or unary element-wise op; `ops` restricts the choice (the frontend's table)."""
    g = Graph(draw(seeds))
    shape = _shape(draw, 1, 4)
    if draw(st.booleans()):
        op = draw(st.sampled_from(_allowed(BINARY, ops)))
        other = _broadcast_partner(draw, shape)
        if draw(st.booleans()):
            shape, other = other, shape
        if op == "Pow":  # a constant scalar exponent, as TPU-MLIR's Pow takes it (dynamic: node tests)
            a = g.input(shape, 0.2, 2.0)
            b = g.const(np.array(draw(st.sampled_from([0.5, 2.0, 3.0, -1.0])), np.float32), "exp")
        elif op == "Div":
            a = g.input(shape)
            b = g.input(other, away_from_zero=0.5) if draw(st.booleans()) else g.const(
                np.full(other, draw(st.sampled_from([0.5, 4.0, -3.0])), np.float32), "den")
        else:
            a = g.input(shape)
            b = g.input(other) if draw(st.booleans()) else g.weight(other)
            if draw(st.booleans()):
                a, b = b, a
            if a not in g.feeds and b not in g.feeds:
                b = g.input(other)
        g.output(g.node(op, [a, b]))
    else:
        op = draw(st.sampled_from(_allowed(list(UNARY), ops)))
        if op in ("Log", "Sqrt"):
            x = g.input(shape, 0.05, 3.0)
        elif op == "Reciprocal":
            x = g.input(shape, away_from_zero=0.5)
        elif op in ("Floor", "Ceil"):
            x = g.input(shape, -4.0, 4.0)
        else:
            x = g.input(shape)
        g.output(g.node(op, [x], **UNARY[op]))
    return g.done()


@st.composite
def clip_models(draw: st.DrawFn) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    g = Graph(draw(seeds))
    x = g.input(_shape(draw))
    lo = draw(st.sampled_from([-1.0, 0.0, -0.5]))
    hi = draw(st.sampled_from([0.5, 1.0, 6.0]))
    g.output(g.node("Clip", [x, g.const(np.array(lo, np.float32), "min"), g.const(np.array(hi, np.float32), "max")]))
    return g.done()


@st.composite
def softmax_models(draw: st.DrawFn) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    g = Graph(draw(seeds))
    shape = _shape(draw, 1, 4)
    op = draw(st.sampled_from(["Softmax", "LogSoftmax"]))
    x = g.input(shape, -4.0, 4.0)
    g.output(g.node(op, [x], axis=draw(st.integers(-len(shape), len(shape) - 1))))
    return g.done()


REDUCE = ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2", "ReduceL1", "ReduceSumSquare"]


@st.composite
def reduce_models(draw: st.DrawFn, ops: set[str] | None = None) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    g = Graph(draw(seeds))
    shape = _shape(draw, 1, 4)
    op = draw(st.sampled_from(_allowed(REDUCE, ops)))
    x = g.input(shape, 0.5, 1.5) if op == "ReduceProd" else g.input(shape)
    rank = len(shape)
    axes = sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1, max_size=rank)))
    axes = [a - rank if draw(st.booleans()) else a for a in axes]
    keepdims = draw(st.integers(0, 1))
    if op == "ReduceSum":  # opset 13+: axes is an input
        g.output(g.node(op, [x, g.const(np.array(axes, np.int64), "axes")], keepdims=keepdims))
    else:
        g.output(g.node(op, [x], axes=axes, keepdims=keepdims))
    return g.done()


# ---- small graphs ---------------------------------------------------------------------------


@st.composite
def small_graph_models(draw: st.DrawFn) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A short random CNN-ish DAG on NCHW: conv/pool/activation/add/concat/transpose/softmax/matmul."""
    g = Graph(draw(seeds))
    c = draw(st.integers(1, 4))
    h, w = draw(st.integers(3, 8)), draw(st.integers(3, 8))
    values: list[tuple[str, list[int]]] = [(g.input([1, c, h, w]), [1, c, h, w])]
    for _ in range(draw(st.integers(2, 6))):
        x, s = draw(st.sampled_from(values))
        kind = draw(st.sampled_from(["conv", "act", "pool", "add", "concat", "transpose", "softmax", "matmul", "bn"]))
        if kind == "conv" and len(s) == 4:
            cout = draw(st.integers(1, 4))
            k = draw(st.sampled_from([1, 3]))
            y = g.node("Conv", [x, g.weight([cout, s[1], k, k]), g.weight([cout], stem="b")],
                       kernel_shape=[k, k], pads=[k // 2] * 4)
            s = [s[0], cout, s[2], s[3]]
        elif kind == "pool" and len(s) == 4 and min(s[2:]) >= 2:
            y = g.node(draw(st.sampled_from(["MaxPool", "AveragePool"])), [x], kernel_shape=[2, 2], strides=[2, 2])
            s = [s[0], s[1], s[2] // 2, s[3] // 2]
        elif kind == "bn" and len(s) == 4:
            ch = s[1]
            y = g.node("BatchNormalization", [x, g.weight([ch], stem="scale"), g.weight([ch], stem="bias"),
                                              g.weight([ch], stem="mean"),
                                              g.const(g.rng.uniform(0.5, 1.5, ch).astype(np.float32), "var")],
                       epsilon=1e-5)
        elif kind == "add":
            others = [v for v in values if v[1] == s]
            o, _ = draw(st.sampled_from(others))
            y = g.node(draw(st.sampled_from(["Add", "Mul", "Sub"])), [x, o])
        elif kind == "concat":
            others = [v for v in values if len(v[1]) == len(s) and v[1][2:] == s[2:] and v[1][0] == s[0]]
            o, so = draw(st.sampled_from(others))
            y = g.node("Concat", [x, o], axis=1)
            s = [s[0], s[1] + so[1], *s[2:]]
        elif kind == "transpose":
            perm = list(draw(st.permutations(range(len(s)))))
            y = g.node("Transpose", [x], perm=perm)
            s = [s[p] for p in perm]
        elif kind == "softmax":
            y = g.node("Softmax", [x], axis=-1)
        elif kind == "matmul":
            n = draw(st.integers(1, 5))
            y = g.node("MatMul", [x, g.weight([s[-1], n])])
            s = [*s[:-1], n]
        else:
            y = g.node(draw(st.sampled_from(["Relu", "Sigmoid", "Tanh"])), [x])
        values.append((y, s))
    used = {i for n in g.nodes for i in n.input}
    for name, _ in values[1:]:
        if name not in used:
            g.output(name)
    if not g.outputs:
        g.output(values[-1][0])
    return g.done()


ALL = {
    "conv": conv_models, "conv_transpose": conv_transpose_models, "pool": pool_models,
    "matmul": matmul_models, "gemm": gemm_models, "resize": resize_models, "concat": concat_models,
    "transpose": transpose_models, "reshape": reshape_models, "elementwise": elementwise_models,
    "clip": clip_models, "softmax": softmax_models, "reduce": reduce_models, "small_graph": small_graph_models,
}


@st.composite
def dynamic_deconv_models(draw: st.DrawFn) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """DragGAN's case: a ConvTranspose whose filter is computed at run time — either a graph input
    in ONNX layout [cin, cout, k, k], or (as StyleGAN2 exports it) Transpose(perm=[1,0,2,3]) of a
    modulated [cout, cin, k, k] filter (input * style)."""
    g = Graph(draw(seeds))
    cin, cout = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    k = [draw(st.integers(1, 4)) for _ in range(2)]
    s = [draw(st.integers(1, 3)) for _ in range(2)]
    pads = [draw(st.integers(0, ki - 1)) for ki in k] * 2
    size = [draw(st.integers(2, 6)) for _ in range(2)]
    if any((size[i] - 1) * s[i] + k[i] - 2 * pads[i] < 1 for i in range(2)):
        pads = [0] * 4
    x = g.input([1, cin, *size])
    if draw(st.booleans()):
        w = g.input([cin, cout, *k], -0.5, 0.5, stem="wdyn")
    else:
        base = g.input([cout, cin, *k], -0.5, 0.5, stem="wbase")
        style = g.input([1, cin, 1, 1], 0.5, 1.5, stem="style")
        w = g.node("Transpose", [g.node("Mul", [base, style])], perm=[1, 0, 2, 3])
    ins = [x, w]
    if draw(st.booleans()):
        ins.append(g.weight([cout], stem="b"))
    g.output(g.node("ConvTranspose", ins, kernel_shape=k, strides=s, pads=pads))
    return g.done()


ALL["dynamic_deconv"] = dynamic_deconv_models


@st.composite
def norm_models(draw: st.DrawFn) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """LayerNormalization (random axis, epsilon) or InstanceNormalization; affine parameters constant."""
    g = Graph(draw(seeds))
    if draw(st.booleans()):
        shape = _shape(draw, 2, 4)
        axis = draw(st.integers(-len(shape), len(shape) - 1))
        norm_shape = shape[axis:]
        scale = g.const(g.rng.uniform(0.5, 1.5, norm_shape).astype(np.float32), "gamma")
        bias = g.weight(norm_shape, stem="beta")
        x = g.input(shape)
        g.output(g.node("LayerNormalization", [x, scale, bias], axis=axis,
                        epsilon=draw(st.sampled_from([1e-5, 1e-3, 0.1]))))
    else:
        shape = [draw(st.integers(1, 2)), draw(st.integers(1, 4)), *_spatial(draw, draw(st.integers(1, 2)), 2, 6)]
        c = shape[1]
        x = g.input(shape)
        g.output(g.node("InstanceNormalization",
                        [x, g.const(g.rng.uniform(0.5, 1.5, c).astype(np.float32), "gamma"), g.weight([c], stem="beta")],
                        epsilon=draw(st.sampled_from([1e-5, 1e-2]))))
    return g.done()


@st.composite
def slice_pad_models(draw: st.DrawFn) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """Slice (random starts/ends/axes/steps, negative and out-of-range included) or Pad
    (constant/reflect/edge, constant starts/ends and value)."""
    g = Graph(draw(seeds))
    shape = _shape(draw, 1, 4, max_dim=6)
    x = g.input(shape)
    rank = len(shape)
    if draw(st.booleans()):
        axes = sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1, max_size=rank)))
        starts, ends, steps = [], [], []
        for a in axes:
            d = shape[a]
            step = draw(st.sampled_from([1, 1, 2, 3, -1, -2]))
            lo, hi = draw(st.integers(-d - 2, d + 2)), draw(st.integers(-d - 2, d + 2))
            if not range(*slice(lo, hi, step).indices(d)):  # keep results non-empty (numpy = ONNX semantics)
                lo, hi = (0, d) if step > 0 else (-1, -d - 1)
            starts.append(lo)
            ends.append(hi)
            steps.append(step)
        ins = [x, g.const(np.array(starts, np.int64), "starts"), g.const(np.array(ends, np.int64), "ends"),
               g.const(np.array([a - rank if draw(st.booleans()) else a for a in axes], np.int64), "axes"),
               g.const(np.array(steps, np.int64), "steps")]
        g.output(g.node("Slice", ins))
    else:
        mode = draw(st.sampled_from(["constant", "reflect", "edge"]))
        limit = [d - 1 if mode == "reflect" else 3 for d in shape]
        pads = [draw(st.integers(0, max(lim, 0))) for lim in limit] + [draw(st.integers(0, max(lim, 0))) for lim in limit]
        ins = [x, g.const(np.array(pads, np.int64), "pads")]
        if mode == "constant" and draw(st.booleans()):
            ins.append(g.const(np.array(draw(st.sampled_from([0.0, 1.5, -2.0])), np.float32), "value"))
        g.output(g.node("Pad", ins, mode=mode))
    return g.done()


ALL["norm"] = norm_models
ALL["slice_pad"] = slice_pad_models

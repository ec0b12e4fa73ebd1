"""The backend end to end: random chains and small DAGs of conv / pool / element-wise / concat /
matmul compiled for the `tiny` chip (4 lanes x 16 KiB, so ops are sliced along N and H), run on
the cmodel and compared with the Tpu interpreter (F32: 1e-5 relative). Each slicing kind must
occur in enough examples; the dynamic-filter Conv and the bounds-check message have their own tests."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from tests.backend_support import assert_f32_close, bmodel_api, compile_for, interpret, lowered
from tpudsl.backend import isa
from tpudsl.backend.cmodel import run_bmodel
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.printer import print_module


class Graph:
    """An ONNX graph under construction: tensors by name with their NCHW shapes."""

    def __init__(self, rng: np.random.Generator):
        self.rng, self.nodes, self.inits, self.shapes = rng, [], [], {}

    def const(self, shape) -> str:
        name = f"w{len(self.inits)}"
        self.inits.append(numpy_helper.from_array(self.rng.standard_normal(shape).astype(np.float32), name))
        return name

    def node(self, op: str, inputs: list[str], shape, **attrs) -> str:
        out = f"t{len(self.nodes)}_{op.lower()}"
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        self.shapes[out] = tuple(shape)
        return out

    def model(self, inputs: dict[str, tuple], output: str):
        graph = helper.make_graph(
            self.nodes, "g", [helper.make_tensor_value_info(k, TensorProto.FLOAT, v) for k, v in inputs.items()],
            [helper.make_tensor_value_info(output, TensorProto.FLOAT, self.shapes[output])], self.inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _window(draw, size: int, most: int = 3):
    k = draw(st.integers(1, min(most, size)))
    s = draw(st.integers(1, 2))
    p0, p1 = draw(st.integers(0, k - 1)), draw(st.integers(0, k - 1))
    return k, s, p0, p1, (size + p0 + p1 - k) // s + 1


@st.composite
def networks(draw):
    """(model, input feed): a chain of 1-5 ops, each reading the last tensor or an earlier one."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    g = Graph(rng)
    x = (draw(st.integers(1, 4)), draw(st.integers(1, 8)), draw(st.integers(3, 64)), draw(st.integers(2, 40)))
    g.shapes["x"] = x
    tensors = ["x"]
    for _ in range(draw(st.integers(1, 5))):
        src = draw(st.sampled_from(tensors[-2:]))
        n, c, h, w = g.shapes[src]
        kind = draw(st.sampled_from(["conv", "conv", "pool", "binary", "concat", "relu"]))
        if kind == "conv":
            kh, sh, pt, pb, oh = _window(draw, h)
            kw, sw, pl, pr, ow = _window(draw, w)
            dw_ok = draw(st.booleans())
            group, oc = (c, c * draw(st.integers(1, 2))) if dw_ok else (1, draw(st.integers(1, 6)))
            ins = [src, g.const((oc, c // group, kh, kw))] + ([g.const((oc,))] if draw(st.booleans()) else [])
            out = g.node("Conv", ins, (n, oc, oh, ow), kernel_shape=[kh, kw], strides=[sh, sw],
                         pads=[pt, pl, pb, pr], group=group)
        elif kind == "pool":
            kh, sh, pt, pb, oh = _window(draw, h)
            kw, sw, pl, pr, ow = _window(draw, w)
            pt, pb, pl, pr = (min(p, k // 2) for p, k in ((pt, kh), (pb, kh), (pl, kw), (pr, kw)))  # ONNX: pad < k/2
            oh, ow = (h + pt + pb - kh) // sh + 1, (w + pl + pr - kw) // sw + 1
            op = draw(st.sampled_from(["MaxPool", "AveragePool"]))
            extra = {"count_include_pad": draw(st.integers(0, 1))} if op == "AveragePool" else {}
            out = g.node(op, [src], (n, c, oh, ow), kernel_shape=[kh, kw], strides=[sh, sw],
                         pads=[pt, pl, pb, pr], **extra)
        elif kind == "binary":
            same = [t for t in tensors if g.shapes[t] == g.shapes[src]]
            other = draw(st.sampled_from(same))
            out = g.node(draw(st.sampled_from(["Add", "Sub", "Mul", "Max", "Min"])), [src, other], (n, c, h, w))
        elif kind == "concat":
            same = [t for t in tensors if g.shapes[t][0] == n and g.shapes[t][2:] == (h, w)]
            other = draw(st.sampled_from(same))
            out = g.node("Concat", [src, other], (n, c + g.shapes[other][1], h, w), axis=1)
        else:
            out = g.node("Relu", [src], (n, c, h, w))
        tensors.append(out)
    out = tensors[-1]
    if draw(st.booleans()):  # a classifier head: flatten and a fully connected layer
        n, c, h, w = g.shapes[out]
        if c * h * w <= 512:
            flat = g.node("Flatten", [out], (n, c * h * w))
            k = draw(st.integers(1, 12))
            out = g.node("Gemm", [flat, g.const((k, c * h * w)), g.const((k,))], (n, k), transB=1)
    feed = {"x": rng.standard_normal(x).astype(np.float32)}
    return g.model({"x": x}, out), feed


def _secs(text: str, key: str) -> list[int]:
    return [int(v) for v in re.findall(rf"\b{key} = (\d+) : i64", text)]


def test_random_networks_cmodel_matches_tpu_interpreter(tmp_path):
    seen = Counter()

    @settings(max_examples=100)
    @given(networks())
    def check(net):
        model, feed = net
        top = lowered(model)
        want = interpret(top, feed)
        bm = compile_for(top, "tiny", str(tmp_path / "m.bmodel"))
        got, _ = run_bmodel(bm, feed)
        for name, w in want.items():
            assert_f32_close(got[name], w, name)
        text = print_module(top.module)
        for feature, present in (("sliced along H", max(_secs(text, "hsecs"), default=1) > 1),
                                 ("sliced along N", max(_secs(text, "nsecs"), default=1) > 1)):
            if present:
                event(feature)
                seen[feature] += 1
        seen["examples"] += 1

    check()
    for feature in ("sliced along H", "sliced along N"):
        assert seen[feature] >= seen["examples"] / 10, f"{feature}: {seen[feature]} of {seen['examples']} examples"

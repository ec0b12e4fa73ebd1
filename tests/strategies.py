"""Hypothesis strategies that build random *valid* Top modules, and their building blocks.

    module, weights = draw(top_modules())

(a `GeneratedModule`, which unpacks like a pair and shows as MLIR text in failure reports).
`module` is a ModuleOp holding `func.func @main` whose arguments go through `top.Input`; every
op has a unique loc name; `weights` maps each `top.Weight`'s loc name to a float32 array (the
weight .npz contents). `main` returns every activation nobody uses, so no op is dead.

Result types are computed here by formulas written independently of tpudsl.dialects.shapes
(numpy broadcasting, the textbook conv/pool output sizes), so verifying a generated module
checks the shape rules against a second implementation. Shapes stay small (at most 2048
elements per tensor, convolutions see at most 8 channels) so numpy interpretation is fast."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp, NoneType, TensorType, f32
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Operation, Region, SSAValue

import tpudsl.dialects.top  # noqa: F401  (defines the Top ops that `create` builds)
from tpudsl.dialects.opdef import create
from tpudsl.ir.printer import print_module

MAX_ELEMS = 2048
MAX_CHANNELS = 8

# Every code point UTF-8 encodes (all but the surrogates, Cs: what st.text() draws), written
# without codec="utf-8": hypothesis would scan every code point for it once per process when its
# on-disk cache is absent (a fresh clone).
UTF8_CHARS = st.characters(exclude_categories=["Cs"])

# Unary ops that are finite on any finite input, with attributes to draw.
SAFE_UNARY: dict[str, Callable[[st.DrawFn], dict]] = {
    "top.Relu": lambda draw: {},
    "top.Sigmoid": lambda draw: {},
    "top.Tanh": lambda draw: {},
    "top.Abs": lambda draw: {},
    "top.SiLU": lambda draw: {},
    "top.Erf": lambda draw: {},
    "top.HardSwish": lambda draw: {},
    "top.GELU": lambda draw: {},
    "top.LeakyRelu": lambda draw: {"alpha": draw(st.sampled_from([0.01, 0.1, 0.2]))},
    "top.Elu": lambda draw: {"alpha": draw(st.sampled_from([0.5, 1.0]))},
    "top.HardSigmoid": lambda draw: {},
    "top.Clip": lambda draw: {"min": -1.0, "max": draw(st.sampled_from([1.0, 6.0]))},
    "top.AddConst": lambda draw: {"const_val": draw(st.sampled_from([-1.5, 0.5, 2.0]))},
    "top.MulConst": lambda draw: {"const_val": draw(st.sampled_from([-1.0, 0.5, 3.0]))},
}
BINARY = ("top.Add", "top.Sub", "top.Mul", "top.Max", "top.Min")


class GeneratedModule(NamedTuple):
    module: ModuleOp
    weights: dict[str, np.ndarray]

    def __repr__(self) -> str:
        return f"GeneratedModule(weights={sorted(self.weights)}, module=\n{print_module(self.module, debuginfo=True)})"

    def _repr_pretty_(self, printer, cycle: bool) -> None:  # hypothesis' failure report
        printer.text(repr(self))


def numel(shape: tuple[int, ...]) -> int:
    return math.prod(shape)


@dataclass
class Graph:
    """A function body under construction: activations with their shapes, weights, loc names."""

    block: Block
    rng: np.random.Generator
    weights: dict[str, np.ndarray] = field(default_factory=dict)
    activations: list[SSAValue] = field(default_factory=list)
    names: itertools.count = field(default_factory=itertools.count)
    none: SSAValue | None = None

    def name(self, prefix: str) -> str:
        return f"{prefix}{next(self.names)}"

    def add(self, op: Operation) -> Operation:
        self.block.add_op(op)
        return op

    def weight(self, owner: str, role: str, shape: tuple[int, ...], positive: bool = False) -> SSAValue:
        name = f"{owner}_{role}"
        data = self.rng.standard_normal(shape).astype(np.float32)
        self.weights[name] = np.abs(data) + np.float32(0.5) if positive else data
        return self.add(create("top.Weight", [], [TensorType(f32, shape)], loc=name)).results[0]

    def none_value(self) -> SSAValue:
        if self.none is None:
            self.none = self.add(create("top.None", [], [NoneType()], loc="none")).results[0]
        return self.none

    def emit(self, name: str, operands: list[SSAValue], out: tuple[int, ...], attrs: dict, loc: str) -> SSAValue:
        value = self.add(create(name, operands, [TensorType(f32, out)], attrs, loc=loc)).results[0]
        self.activations.append(value)
        return value


def shape_of(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


# ---- building blocks: small shapes and layer parameters --------------------------------------


def nchw_shapes(max_n: int = 2, max_c: int = MAX_CHANNELS, max_hw: int = 8) -> st.SearchStrategy[tuple[int, ...]]:
    return st.tuples(st.integers(1, max_n), st.integers(1, max_c), st.integers(1, max_hw), st.integers(1, max_hw))


def small_shapes(min_rank: int = 1, max_rank: int = 4) -> st.SearchStrategy[tuple[int, ...]]:
    return st.lists(st.integers(1, 6), min_size=min_rank, max_size=max_rank).map(tuple)


def broadcast_partner(shape: tuple[int, ...]) -> st.SearchStrategy[tuple[int, ...]]:
    """A shape that broadcasts to `shape`: a suffix of it with some dims set to 1."""
    @st.composite
    def build(draw: st.DrawFn) -> tuple[int, ...]:
        keep = draw(st.integers(0, len(shape)))
        suffix = shape[len(shape) - keep:]
        return tuple(1 if draw(st.booleans()) else d for d in suffix)
    return build()


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def conv_out(size: int, k: int, s: int, d: int, pad_total: int) -> int:
    """Textbook convolution output size (floor)."""
    return (size + pad_total - d * (k - 1) - 1) // s + 1


def pool_out(size: int, k: int, s: int, pb: int, pe: int, ceil: bool) -> int:
    """PyTorch's pooling output size: with ceil_mode the last window must start inside."""
    if not ceil:
        return (size + pb + pe - k) // s + 1
    out = math.ceil((size + pb + pe - k) / s) + 1
    return out - 1 if (out - 1) * s >= size + pb else out


# ---- steps: each appends one op (plus its weights) or returns False when it does not apply ---


def step_unary(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    name = draw(st.sampled_from(sorted(SAFE_UNARY)))
    g.emit(name, [x], shape_of(x), SAFE_UNARY[name](draw), g.name(name[4:].lower()))
    return True


def step_binary(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    name = draw(st.sampled_from(BINARY))
    loc = g.name(name[4:].lower())
    others = [v for v in g.activations if _broadcasts(shape_of(x), shape_of(v))]
    if draw(st.booleans()):
        other = draw(st.sampled_from(others))
    else:
        other = g.weight(loc, "rhs", draw(broadcast_partner(shape_of(x))))
    operands = [x, other] if draw(st.booleans()) else [other, x]
    out = np.broadcast_shapes(shape_of(x), shape_of(other))
    g.emit(name, operands, tuple(out), {}, loc)
    return True


def _broadcasts(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    try:
        return numel(np.broadcast_shapes(a, b)) <= MAX_ELEMS
    except ValueError:
        return False


def _fitting_kernel(draw: st.DrawFn, size: int, pad_total: int, dilation: int) -> int:
    """A kernel size (1..3) whose dilated extent fits in the padded input."""
    return draw(st.integers(1, max(1, min(3, (size + pad_total - 1) // dilation + 1))))


def step_conv(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    shape = shape_of(x)
    if len(shape) != 4 or shape[1] > MAX_CHANNELS:
        return False
    n, c, h, w = shape
    group = draw(st.sampled_from(divisors(c)))
    oc = group * draw(st.integers(1, max(1, MAX_CHANNELS // group)))
    pads = [draw(st.integers(0, 2)) for _ in range(4)]
    strides = [draw(st.integers(1, 2)), draw(st.integers(1, 2))]
    dilations = [draw(st.integers(1, 2)), draw(st.integers(1, 2))]
    kernel = [_fitting_kernel(draw, h, pads[0] + pads[2], dilations[0]),
              _fitting_kernel(draw, w, pads[1] + pads[3], dilations[1])]
    oh = conv_out(h, kernel[0], strides[0], dilations[0], pads[0] + pads[2])
    ow = conv_out(w, kernel[1], strides[1], dilations[1], pads[1] + pads[3])
    loc = g.name("conv")
    filt = g.weight(loc, "filter", (oc, c // group, *kernel))
    bias = g.weight(loc, "bias", (oc,)) if draw(st.booleans()) else g.none_value()
    attrs = {"kernel_shape": kernel, "strides": strides, "pads": pads, "dilations": dilations, "group": group,
             "do_relu": draw(st.booleans())}
    g.emit("top.Conv", [x, filt, bias], (n, oc, oh, ow), attrs, loc)
    return True


def step_deconv(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    shape = shape_of(x)
    if len(shape) != 4 or shape[1] > MAX_CHANNELS:
        return False
    n, c, h, w = shape
    k, s = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    out_pad = draw(st.integers(0, s - 1))

    def crop(size: int) -> tuple[int, int]:  # begin/end pads smaller than the kernel, output >= 1
        full = (size - 1) * s + k + out_pad
        begin = draw(st.integers(0, min(k - 1, full - 1)))
        return begin, draw(st.integers(0, min(k - 1, full - 1 - begin)))

    (pt, pb), (pl, pr) = crop(h), crop(w)
    oh = (h - 1) * s - pt - pb + k + out_pad
    ow = (w - 1) * s - pl - pr + k + out_pad
    max_oc = MAX_ELEMS // (n * oh * ow)
    if max_oc < 1:
        return False
    group = draw(st.sampled_from([d for d in divisors(c) if d <= max_oc]))
    oc = group * draw(st.integers(1, max(1, min(MAX_CHANNELS, max_oc) // group)))
    loc = g.name("deconv")
    attrs = {"kernel_shape": [k, k], "strides": [s, s], "pads": [pt, pl, pb, pr], "group": group,
             "output_padding": [out_pad, out_pad]}
    filt = g.weight(loc, "filter", (c, oc // group, k, k))  # ONNX layout [ic, oc/g, kh, kw]
    filter_kind = draw(st.sampled_from(["weight", "dynamic", "reordered"]))
    if filter_kind != "weight":
        # A filter computed at run time (the DragGAN case): not a top.Weight any more.
        filt = g.add(create("top.MulConst", [filt], [filt.type], {"const_val": 1.0}, loc=f"{loc}_dyn_filter")).results[0]
    if filter_kind == "reordered" and group == 1:
        # What TPU-MLIR's ReorderDynWeight produces: a Permute to [oc, ic, kh, kw] and the flag.
        permuted = TensorType(f32, (oc, c, k, k))
        filt = g.add(create("top.Permute", [filt], [permuted], {"order": [1, 0, 2, 3]}, loc=f"{loc}_reorder_permute")).results[0]
        attrs["dynweight_reorderd"] = True
    g.emit("top.Deconv", [x, filt, g.none_value()], (n, oc, oh, ow), attrs, loc)
    return True


def step_pool(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    shape = shape_of(x)
    if len(shape) != 4:
        return False
    n, c, h, w = shape
    name = draw(st.sampled_from(["top.MaxPool", "top.AvgPool"]))
    k = [draw(st.integers(1, min(3, h))), draw(st.integers(1, min(3, w)))]
    s = [draw(st.integers(1, 2)), draw(st.integers(1, 2))]
    pads = [draw(st.integers(0, k[0] // 2)), draw(st.integers(0, k[1] // 2)),
            draw(st.integers(0, k[0] // 2)), draw(st.integers(0, k[1] // 2))]
    ceil = draw(st.booleans())
    out = (n, c, pool_out(h, k[0], s[0], pads[0], pads[2], ceil), pool_out(w, k[1], s[1], pads[1], pads[3], ceil))
    attrs = {"kernel_shape": k, "strides": s, "pads": pads, "ceil_mode": ceil}
    if name == "top.AvgPool":
        attrs["count_include_pad"] = draw(st.booleans())
    g.emit(name, [x], out, attrs, g.name(name[4:].lower()))
    return True


def step_permute(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    shape = shape_of(x)
    order = draw(st.permutations(range(len(shape))))
    g.emit("top.Permute", [x], tuple(shape[i] for i in order), {"order": list(order)}, g.name("permute"))
    return True


def step_reshape(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    """Redistribute the prime factors of the element count over 1 to 4 dims."""
    shape = shape_of(x)
    factors = [p for d in shape for p in _prime_factors(d)]
    rank = draw(st.integers(1, 4))
    dims = [1] * rank
    for p in factors:
        dims[draw(st.integers(0, rank - 1))] *= p
    attr = list(dims)
    if draw(st.booleans()):
        attr[draw(st.integers(0, rank - 1))] = -1  # ONNX "infer this dim"
    g.emit("top.Reshape", [x], tuple(dims), {"shape": attr}, g.name("reshape"))
    return True


def _prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


def step_concat(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    shape = shape_of(x)
    if not shape:
        return False
    axis = draw(st.integers(0, len(shape) - 1))
    loc = g.name("concat")
    extra = shape[axis] if draw(st.booleans()) else draw(st.integers(1, 3))  # extra == size: concat x with itself
    out = (*shape[:axis], shape[axis] + extra, *shape[axis + 1:])
    if numel(out) > MAX_ELEMS:
        return False
    other = x if extra == shape[axis] else g.weight(loc, "other", (*shape[:axis], extra, *shape[axis + 1:]))
    written_axis = axis - len(shape) if draw(st.booleans()) else axis
    g.emit("top.Concat", [x, other], out, {"axis": written_axis}, loc)
    return True


def step_batchnorm(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    shape = shape_of(x)
    if len(shape) < 2:
        return False
    loc = g.name("bn")
    c = shape[1]
    params = [g.weight(loc, "mean", (c,)), g.weight(loc, "var", (c,), positive=True)]
    params += [g.weight(loc, "gamma", (c,)), g.weight(loc, "beta", (c,))] if draw(st.booleans()) else [g.none_value()] * 2
    g.emit("top.BatchNorm", [x, *params], shape, {"epsilon": 1e-5}, loc)
    return True


def step_softmax(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    shape = shape_of(x)
    if not shape:
        return False
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    g.emit("top.Softmax", [x], shape, {"axis": axis}, g.name("softmax"))
    return True


STEPS: dict[str, Callable[[st.DrawFn, Graph, SSAValue], bool]] = {
    "unary": step_unary,
    "binary": step_binary,
    "conv": step_conv,
    "deconv": step_deconv,
    "pool": step_pool,
    "permute": step_permute,
    "reshape": step_reshape,
    "concat": step_concat,
    "batchnorm": step_batchnorm,
    "softmax": step_softmax,
}


# ---- more steps, opt-in (`steps=tuple(ALL_STEPS)`), each with its own output formula --------------


def step_matmul(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    shape = shape_of(x)
    if len(shape) < 2:
        return False
    k, n = shape[-1], draw(st.integers(1, 8))
    loc = g.name("matmul")
    transposed = draw(st.booleans())
    right = g.weight(loc, "right", (n, k) if transposed else (k, n))
    bias = g.weight(loc, "bias", (n,)) if draw(st.booleans()) else g.none_value()
    g.emit("top.MatMul", [x, right, bias], (*shape[:-1], n), {"right_transpose": transposed}, loc)
    return True


def step_reduce(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    shape = shape_of(x)
    if not shape:
        return False
    axes = draw(st.lists(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape), unique=True))
    keep = draw(st.booleans())
    out = tuple(1 if i in axes else d for i, d in enumerate(shape)) if keep else tuple(d for i, d in enumerate(shape) if i not in axes)
    mode = draw(st.sampled_from(["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin"]))
    g.emit("top.Reduce", [x], out, {"axes": axes, "keepdims": keep, "mode": mode}, g.name("reduce"))
    return True


def step_slice(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    shape = shape_of(x)
    starts = [draw(st.integers(0, d - 1)) for d in shape]
    ends = [draw(st.integers(b + 1, d)) for b, d in zip(starts, shape)]
    steps = [draw(st.integers(1, 2)) for _ in shape]
    out = tuple(len(range(b, e, s)) for b, e, s in zip(starts, ends, steps))
    none = g.none_value()
    g.emit("top.Slice", [x, none, none, none], out, {"offset": starts, "ends": ends, "steps": steps, "axes": []}, g.name("slice"))
    return True


def step_pad(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    shape = shape_of(x)
    pads = [draw(st.integers(0, 2)) for _ in range(2 * len(shape))]
    out = tuple(d + pads[i] + pads[len(shape) + i] for i, d in enumerate(shape))
    if numel(out) > MAX_ELEMS:
        return False
    g.emit("top.Pad", [x], out, {"paddings": pads, "val": draw(st.sampled_from([0.0, 1.5]))}, g.name("pad"))
    return True


def step_upsample(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    shape = shape_of(x)
    if len(shape) != 4:
        return False
    sh, sw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    out = (shape[0], shape[1], shape[2] * sh, shape[3] * sw)
    if numel(out) > MAX_ELEMS:
        return False
    g.emit("top.Upsample", [x], out, {"scale_h": sh, "scale_w": sw}, g.name("upsample"))
    return True


def step_depth2space(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    shape = shape_of(x)
    if len(shape) != 4 or shape[1] % 4:
        return False
    n, c, h, w = shape
    crd = draw(st.booleans())
    attrs = {"block_h": 2, "block_w": 2, "is_CRD": crd, "is_inversed": False}
    g.emit("top.Depth2Space", [x], (n, c // 4, h * 2, w * 2), attrs, g.name("d2s"))
    return True


def step_flatten(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    shape = shape_of(x)
    if not shape:
        return False
    start = draw(st.integers(0, len(shape) - 1))
    end = draw(st.integers(start, len(shape) - 1))
    out = (*shape[:start], numel(shape[start:end + 1]), *shape[end + 1:])
    g.emit("top.Flatten", [x], out, {"start_dim": start, "end_dim": end}, g.name("flatten"))
    return True


def step_unsqueeze(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    shape = shape_of(x)
    if len(shape) >= 5:
        return False
    axis = draw(st.integers(0, len(shape)))
    g.emit("top.Unsqueeze", [x], (*shape[:axis], 1, *shape[axis:]), {"axes": [axis]}, g.name("unsqueeze"))
    return True


def step_layernorm(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    shape = shape_of(x)
    if not shape:
        return False
    axis = draw(st.integers(0, len(shape) - 1))
    loc = g.name("layernorm")
    weight = g.weight(loc, "weight", shape[axis:]) if draw(st.booleans()) else g.none_value()
    bias = g.weight(loc, "bias", shape[axis:]) if draw(st.booleans()) else g.none_value()
    g.emit("top.LayerNorm", [x, weight, bias], shape, {"axis": axis, "eps": 1e-5}, loc)
    return True


MORE_STEPS: dict[str, Callable[[st.DrawFn, Graph, SSAValue], bool]] = {
    "matmul": step_matmul,
    "reduce": step_reduce,
    "slice": step_slice,
    "pad": step_pad,
    "upsample": step_upsample,
    "depth2space": step_depth2space,
    "flatten": step_flatten,
    "unsqueeze": step_unsqueeze,
    "layernorm": step_layernorm,
}
ALL_STEPS = {**STEPS, **MORE_STEPS}


@st.composite
def top_modules(
    draw: st.DrawFn, max_ops: int = 6, steps: tuple[str, ...] = tuple(STEPS), first: str | None = None
) -> GeneratedModule:
    """A random valid Top module and its weights, built from the step kinds `steps` (default: the
    core STEPS; `tuple(ALL_STEPS)` adds MORE_STEPS). `first`: a step kind the module must start
    with (applied to the first input, which is then NCHW)."""
    n_inputs = draw(st.integers(1, 2))
    input_shapes = [draw(nchw_shapes()) if i == 0 or draw(st.booleans()) else draw(small_shapes()) for i in range(n_inputs)]
    block = Block(arg_types=[TensorType(f32, s) for s in input_shapes])
    g = Graph(block, np.random.default_rng(draw(st.integers(0, 2**32 - 1))))
    for i, arg in enumerate(block.args):
        g.emit("top.Input", [arg], input_shapes[i], {}, f"input{i}")
    if first is not None:
        assert ALL_STEPS[first](draw, g, g.activations[0]), f"step {first} must apply to an NCHW input"
    for _ in range(draw(st.integers(0 if first else 1, max_ops))):
        kind = draw(st.sampled_from(steps))
        x = draw(st.sampled_from(g.activations))
        ALL_STEPS[kind](draw, g, x)
    outputs = [v for v in g.activations if not v.uses]
    block.add_op(ReturnOp(*outputs))
    func = FuncOp("main", ([a.type for a in block.args], [v.type for v in outputs]), Region(block))
    return GeneratedModule(ModuleOp([func]), g.weights)

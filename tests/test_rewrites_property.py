"""Every rewrite keeps the values: random Top graphs interpret to the same outputs before and after a
rewrite pass (rtol 1e-5, f32), keep their names, never grow except by ReorderDynWeight's Permute,
and a second run changes nothing.

Each pattern of every `PatternPass` in the registry (tpudsl/passes.py) has a strategy in MATCHES
that always builds its match, inside random surroundings; its property runs the pattern's own pass
or canonicalize, records with `hypothesis.event` in how many of an example's cases the pattern fired
(and in how many not), and fails when it fired in fewer than half of its cases (a property whose
pattern never fires proves nothing). A pattern
registered without a strategy fails here, naming it. `test_mixed_graphs_keep_values` runs every
rewrite pass over graphs built from all the strategies at once, where the patterns interact."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import BFloat16Type, Float16Type, ModuleOp, TensorType, f32
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region, SSAValue

from batches import DistinctCases, batched, batches
from strategies import (
    MAX_CHANNELS, MAX_ELEMS, STEPS, GeneratedModule, Graph, divisors, nchw_shapes, shape_of, small_shapes,
)
from tests.feature_tally import FeatureTally
from tpudsl.dialects import make_context
from tpudsl.dialects.attrs import to_attr
from tpudsl.dialects.opdef import SPECS, AttrView, create, loc_name
from tpudsl.interp import ModuleInterpreter
from tpudsl.ir.module import TopModule
from tpudsl.passes import PASSES, pass_class
from tpudsl.rewrites import canonicalize
from tpudsl.rewrites.pattern import PatternPass, RewriteEnv, apply_patterns

# Every registered rewrite pass (a PatternPass), read from the registry: a new pass is tested here.
REWRITE_PASSES: dict[str, type[PatternPass]] = {
    name: cls for name in PASSES if issubclass(cls := pass_class(name), PatternPass)
}
PATTERN_PASSES: dict[str, list[str]] = {}  # pattern name -> the passes that run it
for _name, _cls in REWRITE_PASSES.items():
    for _pattern in _cls.patterns:
        PATTERN_PASSES.setdefault(_pattern.__name__, []).append(_name)

# Modules per pattern: a fifth of the profile's budget and 10% more drawn (44 in CI, 440 with
# HYPOTHESIS_PROFILE=thorough), in batches of BATCH distinct ones (tests/batches.py), each checked
# once: at least the 38 distinct a pattern that one module an example checked in CI before the
# batching. Measured in CI: 40 drawn in batches gave 37-40 distinct (17.5 s of CPU, the file,
# against 17.4 before the batching), one an example 34-40. Keying cases on the weights' values too
# (case_key) kept the floor: the file 16.9 s of user CPU after, 17.0 before.
BATCH = 4
PER_PATTERN = batched(11 * max(10, settings.default.max_examples // 5) / 10, BATCH)
DISTINCT_IN_CI = 38


def case_key(case: tuple[GeneratedModule, str, int]) -> tuple[str, tuple[tuple[str, bytes], ...]]:
    """A rewrite case: its text (the module's printed IR and weight names, the pass, the seed) and
    the weights' values, which the repr leaves out but the rewrites fold and the check compares."""
    weights = case[0].weights
    return repr(case), tuple((name, weights[name].tobytes()) for name in sorted(weights))


# ---- steps that build what the patterns match (each appends ops to the Graph g) --------------

Step = Callable[[st.DrawFn, Graph, SSAValue], object]
FLOAT_TYPES = {"f32": f32, "f16": Float16Type(), "bf16": BFloat16Type()}


def new_input(g: Graph, shape: tuple[int, ...], role: str = "extra_input") -> SSAValue:
    """A further model input (what makes a filter dynamic, or an NCHW tensor a step needs)."""
    arg = g.block.insert_arg(TensorType(f32, shape), len(g.block.args))
    return g.add(create("top.Input", [arg], [arg.type], loc=g.name(role))).results[0]


def nchw(draw: st.DrawFn, g: Graph, x: SSAValue, max_c: int = MAX_CHANNELS) -> SSAValue:
    """x when it is a small NCHW tensor, else a new NCHW model input: a match is always built."""
    shape = shape_of(x)
    if len(shape) == 4 and shape[1] <= max_c and np.prod(shape) <= MAX_ELEMS // 4:
        return x
    return new_input(g, draw(nchw_shapes(max_c=max_c, max_hw=5)))


def rarely(draw: st.DrawFn) -> bool:
    """True in one example of eight: the near misses where a pattern must not fire. (Shrinks to
    False, so a failure is shown on the match itself when it fails there too.)"""
    return draw(st.integers(0, 7)) == 7


def read_by_another_op(draw: st.DrawFn, g: Graph, value: SSAValue) -> None:
    """Mostly give `value` a reader: a pattern that forwards its operand must not remove a value
    the function returns (its name is an output), so a returned one is the must-not-fire case."""
    if not rarely(draw):
        g.emit("top.AddConst", [value], shape_of(value), {"const_val": 0.25}, g.name("reader"))


def step_dead_op(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    """An op nobody reads (not an activation, so not returned)."""
    g.add(create(draw(st.sampled_from(["top.Relu", "top.Abs"])), [x], [x.type], loc=g.name("dead")))


def step_foldable(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    """An op of weights only (folded when the weights are known), then combined with x."""
    loc = g.name("const")
    shape = shape_of(x)
    w = g.weight(loc, "a", tuple(reversed(shape)))
    folded = g.add(create("top.Permute", [w], [TensorType(f32, shape)],
                          {"order": list(reversed(range(len(shape))))}, loc=f"{loc}_T")).results[0]
    g.emit("top.Add", [x, folded], shape, {}, loc)


def _source_shape(target: tuple[int, ...], order: list[int]) -> tuple[int, ...]:
    """The shape that Permute(order) turns into `target`."""
    source = [0] * len(order)
    for i, axis in enumerate(order):
        source[axis] = target[i]
    return tuple(source)


def step_dyn_deconv(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    """DragGAN: a Deconv whose filter ([ic, oc/g, k, k]) is computed: a model input, the exporter's
    transpose of [oc/g, ic, k, k], or a Permute of another order whose result has the same shape
    (ReorderDynWeight must not take that one for the transpose). Mostly group 1, where it fires."""
    x = nchw(draw, g, x)
    n, c, h, w = shape_of(x)
    group = draw(st.one_of(st.just(1), st.sampled_from(divisors(c))))
    ocg, k = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    loc = g.name("deconv")
    filter_shape = (c, ocg, k, k)
    order = draw(st.sampled_from([None, [1, 0, 2, 3], [1, 0, 3, 2], [0, 1, 3, 2]]))
    if order is None:
        filt = new_input(g, filter_shape, "input_filter")
    else:
        source = new_input(g, _source_shape(filter_shape, order), "input_filter")
        filt = g.add(create("top.Permute", [source], [TensorType(f32, filter_shape)],
                            {"order": order}, loc=f"{loc}_filter_T")).results[0]
    if draw(st.booleans()):
        filt = g.add(create("top.MulConst", [filt], [filt.type], {"const_val": 0.5}, loc=f"{loc}_mod")).results[0]
    g.emit("top.Deconv", [x, filt, g.none_value()], (n, ocg * group, h + k - 1, w + k - 1),
           {"kernel_shape": [k, k], "group": group}, loc)


def step_dyn_conv(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    """A Conv whose filter is a model input (its layout stays, weight_is_coeff becomes 0)."""
    x = nchw(draw, g, x)
    n, c, h, w = shape_of(x)
    group = draw(st.sampled_from(divisors(c)))
    oc = group * draw(st.integers(1, 2))
    filt = new_input(g, (oc, c // group, 1, 1), "input_filter")
    g.emit("top.Conv", [x, filt, g.none_value()], (n, oc, h, w), {"kernel_shape": [1, 1], "group": group},
           g.name("dynconv"))


def cast_chain(g: Graph, x: SSAValue, kinds: list[str]) -> SSAValue:
    value = x
    for kind in kinds:
        value = g.add(create("top.Cast", [value], [TensorType(FLOAT_TYPES[kind], shape_of(x))],
                             loc=g.name("cast"))).results[0]
    g.activations.append(value)
    return value


def step_noop_cast(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    read_by_another_op(draw, g, cast_chain(g, x, ["f32"]))


def step_round_trip_cast(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    """f32 -> n -> f32 -> n -> f32 for a narrow n: the middle pair is exact and goes."""
    narrow = draw(st.sampled_from(["f16", "bf16"]))
    cast_chain(g, x, [narrow, "f32", narrow, "f32"])


def step_cast_chain(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    """f32 -> any of f16/bf16/f32 -> f32: round trips that must stay, too."""
    cast_chain(g, x, [*draw(st.lists(st.sampled_from(sorted(FLOAT_TYPES)), min_size=1, max_size=4)), "f32"])


def permute(g: Graph, x: SSAValue, order: list[int]) -> SSAValue:
    shape = shape_of(x)
    return g.emit("top.Permute", [x], tuple(shape[i] for i in order), {"order": order}, g.name("permute"))


def step_identity_permute(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    read_by_another_op(draw, g, permute(g, x, list(range(len(shape_of(x))))))


def step_permute_chain(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    for _ in range(draw(st.integers(2, 3))):
        x = permute(g, x, list(draw(st.permutations(range(len(shape_of(x)))))))


def step_same_shape_reshape(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    shape = shape_of(x)
    read_by_another_op(draw, g, g.emit("top.Reshape", [x], shape, {"shape": list(shape)}, g.name("reshape")))


def step_reshape_chain(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    STEPS["reshape"](draw, g, x)
    STEPS["reshape"](draw, g, g.activations[-1])


def step_shape_op(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    shape = shape_of(x)
    kind = draw(st.sampled_from(["flatten", "unsqueeze", *(["squeeze"] if 1 in shape else [])]))
    loc = g.name(kind)
    if kind == "squeeze":
        g.emit("top.Squeeze", [x], tuple(d for d in shape if d != 1), {"axes": []}, loc)
    elif kind == "unsqueeze":
        g.emit("top.Unsqueeze", [x], (1, *shape), {"axes": [0]}, loc)
    else:
        g.emit("top.Flatten", [x], (int(np.prod(shape)),), {"start_dim": 0}, loc)


def conv(draw: st.DrawFn, g: Graph, x: SSAValue) -> SSAValue:
    """A Conv with a weight filter; mostly without a fused activation, which blocks the folds."""
    assert STEPS["conv"](draw, g, nchw(draw, g, x))
    y = g.activations[-1]
    y.owner.attributes["do_relu"] = to_attr("bool", rarely(draw))
    return y


def step_conv_batchnorm(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    """Conv + BatchNorm; epsilon up to 0.5 and var near it, so a fold that drops epsilon shows."""
    y = conv(draw, g, x)
    c = shape_of(y)[1]
    loc = g.name("bn")
    params = [g.weight(loc, "mean", (c,)), g.weight(loc, "var", (c,), positive=True)]
    affine = draw(st.booleans())
    params += [g.weight(loc, "gamma", (c,)), g.weight(loc, "beta", (c,))] if affine else [g.none_value()] * 2
    g.emit("top.BatchNorm", [y, *params], shape_of(y), {"epsilon": draw(st.sampled_from([0.5, 1e-2, 1e-5]))}, loc)
    if draw(st.booleans()):
        step_relu(draw, g, g.activations[-1])


def step_conv_scale(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    y = conv(draw, g, x)
    c = shape_of(y)[1]
    loc = g.name("scale")
    g.emit("top.Scale", [y, g.weight(loc, "s", (1, c, 1, 1)), g.weight(loc, "t", (1, c, 1, 1))], shape_of(y), {}, loc)
    if draw(st.booleans()):
        step_relu(draw, g, g.activations[-1])


def step_relu(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    if draw(st.booleans()):
        g.emit("top.Relu", [x], shape_of(x), {"relu_limit": draw(st.sampled_from([-1.0, 2.0]))}, g.name("relu"))
    else:
        g.emit("top.Clip", [x], shape_of(x), {"min": 0.0, "max": 6.0}, g.name("relu6"))


FUSABLE = ("add", "batchnorm", "conv", "matmul")


def step_fusable_relu(draw: st.DrawFn, g: Graph, x: SSAValue, kinds: tuple[str, ...] = FUSABLE) -> None:
    """Conv, MatMul, Add or BatchNorm (each without an activation yet), then Relu or Clip(0, 6)."""
    kind = draw(st.sampled_from(kinds))
    if kind == "conv":
        y = conv(draw, g, x)
    elif kind == "matmul":
        y = matmul(draw, g, x)
    elif kind == "batchnorm":
        assert STEPS["batchnorm"](draw, g, nchw(draw, g, x))
        y = g.activations[-1]
    else:
        loc = g.name("add")
        y = g.emit("top.Add", [x, g.weight(loc, "b", shape_of(x))], shape_of(x), {}, loc)
    step_relu(draw, g, y)


def matmul(draw: st.DrawFn, g: Graph, x: SSAValue) -> SSAValue:
    shape = shape_of(x) if len(shape_of(x)) >= 2 else (1, *shape_of(x))
    if shape != shape_of(x):
        x = g.emit("top.Reshape", [x], shape, {"shape": list(shape)}, g.name("reshape"))
    n_out = draw(st.integers(1, 6))
    loc = g.name("matmul")
    right = g.weight(loc, "w", (shape[-1], n_out))
    return g.emit("top.MatMul", [x, right, g.none_value()], (*shape[:-1], n_out), {}, loc)


def step_matmul_bias(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    mm = matmul(draw, g, x)
    out = shape_of(mm)
    loc = g.name("fc")
    bias = g.weight(loc, "b", draw(st.sampled_from([(out[-1],), (1, out[-1])])))
    g.emit("top.Add", [mm, bias] if draw(st.booleans()) else [bias, mm], out, {}, loc)
    if draw(st.booleans()):
        step_relu(draw, g, g.activations[-1])


def step_scalar_binary(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    name = draw(st.sampled_from(["top.Mul", "top.Add", "top.Sub", "top.Div"]))
    loc = g.name(name[4:].lower())
    c = g.weight(loc, "c", (1,), positive=True)  # positive: never a division by zero
    g.emit(name, [x, c] if draw(st.booleans()) else [c, x], shape_of(x), {}, loc)


def step_mulconst_one(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    read_by_another_op(draw, g, g.emit("top.MulConst", [x], shape_of(x), {"const_val": 1.0}, g.name("times_one")))


def step_gated_activation(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    """x * Sigmoid(x) or x * HardSigmoid(x; 1/6, 1/2), either operand order; the gate sometimes
    also read elsewhere (must stay)."""
    shape = shape_of(x)
    if draw(st.booleans()):
        gate = g.emit("top.Sigmoid", [x], shape, {}, g.name("sigmoid"))
    else:
        gate = g.emit("top.HardSigmoid", [x], shape, {"alpha": float(np.float32(1 / 6)), "beta": 0.5}, g.name("hsig"))
    g.emit("top.Mul", [x, gate] if draw(st.booleans()) else [gate, x], shape, {}, g.name("swish"))
    if rarely(draw):
        g.emit("top.AddConst", [gate], shape, {"const_val": 0.25}, g.name("gate_reader"))


def step_scaled_gate(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    """x * c * gate(x) as scalar-to-const leaves it (c as MulConst or DivConst), in one of the three
    orders: the erf GELU
    (x / sqrt 2 as MulConst or DivConst), the tanh GELU, or x * clip(x + 3, 0, 6) / 6; rarely an
    inner op of the gate is also read elsewhere (must stay)."""
    shape = shape_of(x)

    def const(op: str, v: SSAValue, c: float, role: str) -> SSAValue:
        return g.emit(op, [v], shape, {"const_val": c}, g.name(role))

    kind = draw(st.sampled_from(["erf", "tanh", "relu6"]))
    if kind == "erf":
        if draw(st.booleans()):
            scaled = const("top.MulConst", x, float(np.float32(1 / np.sqrt(2))), "div")
        else:
            scaled = const("top.DivConst", x, float(np.float32(np.sqrt(2))), "div")
        inner = g.emit("top.Erf", [scaled], shape, {}, g.name("erf"))
    elif kind == "tanh":
        cube = g.emit("top.Pow", [x], shape, {"exponent": 3.0}, g.name("cube"))
        cubic = const("top.MulConst", cube, float(np.float32(0.044715)), "mul_c")
        inner = g.emit("top.Add", [x, cubic] if draw(st.booleans()) else [cubic, x], shape, {}, g.name("add_cube"))
        inner = g.emit("top.Tanh", [const("top.MulConst", inner, float(np.float32(np.sqrt(2 / np.pi))), "mul_k")],
                       shape, {}, g.name("tanh"))
    else:
        inner = const("top.AddConst", x, 3.0, "plus3")
    if kind == "relu6":
        gate, c = g.emit("top.Clip", [inner], shape, {"min": 0.0, "max": 6.0}, g.name("relu6")), 1 / 6
    else:
        gate, c = const("top.AddConst", inner, 1.0, "add_one"), 0.5
    divide = draw(st.booleans())  # v * c as DivConst(v, 1/c): how the frontend writes x / 6

    def scale(v: SSAValue, role: str) -> SSAValue:
        return const("top.DivConst", v, 1 / c, role) if divide else const("top.MulConst", v, c, role)

    order = draw(st.sampled_from(["on_x", "last", "on_gate"]))
    if order == "on_x":
        g.emit("top.Mul", [scale(x, "half"), gate], shape, {}, g.name("gated"))
    elif order == "last":
        scale(g.emit("top.Mul", [gate, x], shape, {}, g.name("mul")), "gated")
    else:
        g.emit("top.Mul", [x, scale(gate, "half")], shape, {}, g.name("gated"))
    if rarely(draw):
        g.emit("top.AddConst", [inner], shape, {"const_val": 0.25}, g.name("inner_reader"))


def square_of(draw: st.DrawFn, g: Graph, v: SSAValue) -> SSAValue:
    """Pow(v, 2) or Mul(v, v), the two ways exporters square."""
    if draw(st.booleans()):
        return g.emit("top.Pow", [v], shape_of(v), {"exponent": 2.0}, g.name("square"))
    return g.emit("top.Mul", [v, v], shape_of(v), {}, g.name("square"))


def layer_norm_chain(draw: st.DrawFn, g: Graph, x: SSAValue) -> tuple[SSAValue, tuple[int, ...]]:
    """The decomposed LayerNorm over the last one or two axes (returned: its value and the
    normalized shape); Pow(d, 2) or Mul(d, d); eps of
    1e-3 and up (nearly constant rows from the surroundings stay well conditioned); rarely the
    mean is also read elsewhere (must stay)."""
    shape = shape_of(x)
    k = draw(st.integers(1, min(2, len(shape))))
    axes = list(range(len(shape) - k, len(shape)))
    reduced = tuple(1 if i in axes else d for i, d in enumerate(shape))
    if draw(st.booleans()):
        axes = [a - len(shape) for a in axes]  # negative axes, as torch exports them
    mean = g.emit("top.Reduce", [x], reduced, {"axes": axes, "keepdims": True, "mode": "ReduceMean"}, g.name("mean"))
    d = g.emit("top.Sub", [x, mean], shape, {}, g.name("centered"))
    var = g.emit("top.Reduce", [square_of(draw, g, d)], reduced, {"axes": axes, "keepdims": True, "mode": "ReduceMean"},
                 g.name("var"))
    eps = g.emit("top.AddConst", [var], reduced, {"const_val": draw(st.sampled_from([1e-3, 1e-2, 0.5]))}, g.name("eps"))
    std = g.emit("top.Sqrt", [eps], reduced, {}, g.name("std"))
    if rarely(draw):
        g.emit("top.AddConst", [mean], reduced, {"const_val": 0.25}, g.name("mean_reader"))
    return g.emit("top.Div", [d, std], shape, {}, g.name("normed")), shape[len(shape) - k:]


def layer_norm_affine(draw: st.DrawFn, g: Graph, y: SSAValue, normalized: tuple[int, ...], which: str) -> None:
    """Mul by gamma ("gamma", "both") and Add of beta ("beta", "both"), of the normalized shape,
    either operand order (RMSNorm's gamma too: "gamma" of the last axis)."""
    shape = shape_of(y)
    for name, role in (("top.Mul", "gamma"), ("top.Add", "beta")):
        if which in (role, "both"):
            loc = g.name(role)
            w = g.weight(loc, role, normalized)
            y = g.emit(name, [y, w] if draw(st.booleans()) else [w, y], shape, {}, loc)


def step_layer_norm(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    normed, normalized = layer_norm_chain(draw, g, x)
    layer_norm_affine(draw, g, normed, normalized, draw(st.sampled_from(["none", "gamma", "beta", "both"])))


def step_layer_norm_affine(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    """A LayerNorm without weight and bias, then its gamma, its beta or both."""
    shape = shape_of(x)
    none = g.none_value()
    norm = g.emit("top.LayerNorm", [x, none, none], shape,
                  {"axis": len(shape) - 1, "eps": 1e-3, "normalized_shape": [shape[-1]]}, g.name("ln"))
    layer_norm_affine(draw, g, norm, shape[-1:], draw(st.sampled_from(["gamma", "beta", "both"])))


def rms_norm_chain(draw: st.DrawFn, g: Graph, x: SSAValue) -> SSAValue:
    """LLaMA's decomposed RMSNorm over the last axis: Pow(x, 2) or Mul(x, x), the mean (axis
    written positive or negative), eps of 1e-3 and up, Sqrt, 1 / s as Reciprocal or a reversed
    DivConst of 1, then Mul(x, r) in either order; rarely the root is also read elsewhere (must stay)."""
    shape = shape_of(x)
    reduced = (*shape[:-1], 1)
    square = square_of(draw, g, x)
    axis = draw(st.sampled_from([len(shape) - 1, -1]))
    var = g.emit("top.Reduce", [square], reduced, {"axes": [axis], "keepdims": True, "mode": "ReduceMean"},
                 g.name("variance"))
    eps = g.emit("top.AddConst", [var], reduced, {"const_val": draw(st.sampled_from([1e-3, 1e-2, 0.5]))}, g.name("eps"))
    root = g.emit("top.Sqrt", [eps], reduced, {}, g.name("root"))
    if draw(st.booleans()):
        inverse = g.emit("top.Reciprocal", [root], reduced, {}, g.name("rsqrt"))
    else:
        inverse = g.emit("top.DivConst", [root], reduced, {"const_val": 1.0, "is_reverse": True}, g.name("rsqrt"))
    if rarely(draw):
        g.emit("top.AddConst", [root], reduced, {"const_val": 0.25}, g.name("root_reader"))
    return g.emit("top.Mul", [x, inverse] if draw(st.booleans()) else [inverse, x], shape, {}, g.name("normed"))


def step_rms_norm(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    normed = rms_norm_chain(draw, g, x)
    if draw(st.booleans()):
        layer_norm_affine(draw, g, normed, shape_of(normed)[-1:], "gamma")


def step_rms_norm_gamma(draw: st.DrawFn, g: Graph, x: SSAValue) -> None:
    """An RMSNorm without gamma, then its gamma."""
    norm = g.emit("top.RMSNorm", [x, g.none_value()], shape_of(x), {"eps": 1e-3}, g.name("rms"))
    layer_norm_affine(draw, g, norm, shape_of(x)[-1:], "gamma")


# Pattern name -> the step that always builds its match.
MATCHES: dict[str, Step] = {
    "EraseDeadOp": step_dead_op,
    "FoldConstantOp": step_foldable,
    "ReorderDynWeight": step_dyn_deconv,
    "SetWeightIsCoeff": step_dyn_conv,
    "RemoveNoopCast": step_noop_cast,
    "RemoveRoundTripCast": step_round_trip_cast,
    "RemoveIdentityPermute": step_identity_permute,
    "ComposePermutes": step_permute_chain,
    "RemoveSameShapeReshape": step_same_shape_reshape,
    "MergeReshapes": step_reshape_chain,
    "ShapeOpToReshape": step_shape_op,
    "FuseConvBatchNorm": step_conv_batchnorm,
    "FuseConvScale": step_conv_scale,
    "FuseMatMulBias": step_matmul_bias,
    "FuseRelu": step_fusable_relu,
    "ScalarWeightToConst": step_scalar_binary,
    "FoldMulConstOne": step_mulconst_one,
    "FuseGatedActivation": step_gated_activation,
    "FuseScaledGate": step_scaled_gate,
    "FuseLayerNorm": step_layer_norm,
    "FoldLayerNormAffine": step_layer_norm_affine,
    "FuseRMSNorm": step_rms_norm,
    "FoldRMSNormGamma": step_rms_norm_gamma,
}
# Patterns that change values on purpose, each checked by its own property instead of "keeps values".
ELSEWHERE = {
    "RemoveTpuCastRoundTrip": "tests/test_tpu_cast_round_trip.py: restores F32 precision, never further from it",
    "FoldTpuOp": "tests/test_weight_fold.py: random Tpu chains, exactly the constant ops folded, outputs bit-identical",
    "EraseDeadWeight": "tests/test_weight_fold.py: the weights left are exactly those the module still reads",
}
# Surroundings: the generic steps (which return False when they do not apply) and near misses.
SURROUNDINGS: dict[str, Step] = {**STEPS, "cast_chain": step_cast_chain, "relu": step_relu}


@st.composite
def rewrite_modules(draw: st.DrawFn, matches: tuple[str, ...] = tuple(MATCHES), max_matches: int = 1,
                    max_ops: int = 3, match_steps: dict[str, Step] = MATCHES) -> GeneratedModule:
    """A random valid Top module: random surroundings, then the match of one of `matches` (the
    pattern names, built by `match_steps`) on a random activation, then more surroundings that may
    read it (and so on, up to `max_matches` matches)."""
    shapes = [draw(nchw_shapes())] + ([draw(small_shapes(2, 4))] if draw(st.booleans()) else [])
    block = Block(arg_types=[TensorType(f32, s) for s in shapes])
    g = Graph(block, np.random.default_rng(draw(st.integers(0, 2**32 - 1))))
    for i, arg in enumerate(list(block.args)):
        g.emit("top.Input", [arg], shapes[i], {}, f"input{i}")

    inside: set[int] = set()  # ids of values inside a match: a further reader is a near miss

    def surroundings() -> None:
        for _ in range(draw(st.integers(0, max_ops))):
            pool = [v for v in g.activations if id(v) not in inside] if not rarely(draw) else g.activations
            SURROUNDINGS[draw(st.sampled_from(sorted(SURROUNDINGS)))](draw, g, draw(st.sampled_from(pool)))

    surroundings()
    for _ in range(draw(st.integers(1, max_matches))):
        start = len(g.activations)
        match_steps[draw(st.sampled_from(matches))](draw, g, draw(st.sampled_from(g.activations)))
        inside.update(id(v) for v in g.activations[start:-1])
        surroundings()
    outputs = [v for v in g.activations if not v.uses]
    block.add_op(ReturnOp(*outputs))
    func = FuncOp("main", ([a.type for a in block.args], [v.type for v in outputs]), Region(block))
    module = ModuleOp([func])
    module.verify()
    return GeneratedModule(module, g.weights)  # shows as MLIR text in failure reports


# ---- the property ----------------------------------------------------------------------------


def run(module: ModuleOp, weights: dict[str, np.ndarray], inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    interp = ModuleInterpreter(module, weights)
    interp.init()
    outs = interp.inference(inputs)
    return [outs[name] for name in interp.output_names]


def op_names(module: ModuleOp) -> list[str]:
    return [loc_name(op) for op in module.walk() if op.name.startswith("top.")]


def check_rewrite(generated: GeneratedModule, pass_name: str, seed: int) -> Counter[str]:
    """Run the pass on the module; assert values, names, size and idempotence; return what fired."""
    mod = TopModule(*generated)
    rng = np.random.default_rng(seed)
    block = mod.main_func().body.block
    inputs = {loc_name(use.operation): rng.standard_normal(arg.type.get_shape()).astype(np.float32)
              for arg in block.args for use in arg.uses}
    before = run(mod.module, dict(mod.weights), inputs)
    names_before = set(op_names(mod.module))
    size_before = len(op_names(mod.module))

    patterns = REWRITE_PASSES[pass_name].patterns
    fired = apply_patterns(mod.module, patterns, RewriteEnv(mod.weights))
    mod.module.verify()

    after = run(mod.module, mod.weights, inputs)
    assert len(after) == len(before)
    for b, a in zip(before, after, strict=True):
        scale = max(1.0, float(np.abs(b[np.isfinite(b)]).max(initial=0.0)))  # f16 casts may overflow
        np.testing.assert_allclose(a.astype(np.float32), b.astype(np.float32), rtol=1e-5, atol=1e-5 * scale)
    assert len(op_names(mod.module)) <= size_before + fired["ReorderDynWeight"]
    for name in op_names(mod.module):  # every name is an old one or derived from one
        assert name in names_before or any(name.startswith(old + "_") for old in names_before), name
    assert not apply_patterns(mod.module, patterns, RewriteEnv(mod.weights))
    return fired


@pytest.mark.parametrize("pattern", sorted(set(PATTERN_PASSES) - set(ELSEWHERE)))
def test_pattern_keeps_values_and_fires(pattern: str):
    """The pattern's match in random surroundings, rewritten by its pass or canonicalize."""
    assert pattern in MATCHES, (
        f"pattern {pattern} (pass {', '.join(PATTERN_PASSES[pattern])}) has no strategy that builds its match: "
        "add one to MATCHES in tests/test_rewrites_property.py"
    )
    # "fired" is the pass's outcome on a module built to match (its surroundings may hide the
    # match): drawn, not forced
    tally = FeatureTally(("fired",))
    distinct = DistinctCases()

    @PER_PATTERN
    @given(batches(st.tuples(rewrite_modules(matches=(pattern,)), st.sampled_from(PATTERN_PASSES[pattern]),
                             st.integers(0, 2**32 - 1)), BATCH, case_key))
    @distinct.examples
    def keeps_values(batch: list[tuple[GeneratedModule, str, int]]) -> None:
        outcomes = Counter()
        for generated, pass_name, seed in filter(lambda case: distinct.first_time(case_key(case)), batch):
            fired = check_rewrite(generated, pass_name, seed)[pattern] > 0
            outcomes[f"{pattern} {'fired' if fired else 'did not fire'} ({pass_name})"] += 1
            tally.record(["fired"] if fired else [])
        for outcome, cases in outcomes.items():  # an event a label an example: the count in its label
            event(f"{outcome}: {cases} of the example's cases")

    keeps_values()
    distinct.assert_at_least(DISTINCT_IN_CI)
    tally.assert_each_in(1 / 2)


def test_fuse_relu_into_batch_norm():
    """A forced run: every example is a BatchNorm + Relu/Clip(0, 6) alone (no surroundings, so no
    Conv to fold the BatchNorm into and no second reader), and every pass that runs FuseRelu must
    leave a BatchNorm with do_relu = true and the Relu's name, of the same values (check_rewrite:
    the Top interpreter's BatchNorm applying its fused relu against the unfused Relu)."""
    tally = FeatureTally(("BatchNorm took the relu",))
    only_batch_norm = {"FuseRelu": lambda draw, g, x: step_fusable_relu(draw, g, x, kinds=("batchnorm",))}

    @settings(max_examples=10)
    @given(rewrite_modules(matches=("FuseRelu",), max_ops=0, match_steps=only_batch_norm),
           st.sampled_from(PATTERN_PASSES["FuseRelu"]), st.integers(0, 2**32 - 1))
    def check(generated: GeneratedModule, pass_name: str, seed: int) -> None:
        assert check_rewrite(generated, pass_name, seed)["FuseRelu"] == 1
        bns = [op for op in generated.module.walk() if op.name == "top.BatchNorm"]
        assert len(bns) == 1 and AttrView(bns[0].attributes, SPECS["top.BatchNorm"])["do_relu"]
        assert loc_name(bns[0]).startswith("relu"), loc_name(bns[0])  # relu<n> or relu6<n>
        assert not [op for op in generated.module.walk() if op.name in ("top.Relu", "top.Clip")]
        tally.record(["BatchNorm took the relu"])

    check()
    tally.assert_each_in(1.0)


def test_every_strategy_matches_a_registered_pattern():
    assert sorted(set(MATCHES) - set(PATTERN_PASSES)) == []


@batched(max(10, settings.default.max_examples // 4), BATCH)
@given(batches(st.tuples(rewrite_modules(max_matches=3, max_ops=1), st.sampled_from(sorted(REWRITE_PASSES)),
                         st.integers(0, 2**32 - 1)), BATCH, case_key))
def test_mixed_graphs_keep_values(batch: list[tuple[GeneratedModule, str, int]]):
    """Up to three matches of any patterns in one graph, under any rewrite pass: where patterns interact."""
    for generated, pass_name, seed in batch:
        check_rewrite(generated, pass_name, seed)


def test_reorder_dyn_weight_keeps_a_permute_of_another_order():
    """A Permute [1, 0, 3, 2] feeding a Deconv filter has the transpose's result shape, but is not
    the exporter's transpose: ReorderDynWeight must add its own Permute, not drop this one."""
    block = Block(arg_types=[TensorType(f32, (1, 2, 3, 3)), TensorType(f32, (3, 2, 2, 2))])
    g = Graph(block, np.random.default_rng(0))
    x = g.emit("top.Input", [block.args[0]], (1, 2, 3, 3), {}, "x")
    source = g.emit("top.Input", [block.args[1]], (3, 2, 2, 2), {}, "w")
    filt = g.add(create("top.Permute", [source], [TensorType(f32, (2, 3, 2, 2))], {"order": [1, 0, 3, 2]},
                        loc="w_T")).results[0]
    y = g.emit("top.Deconv", [x, filt, g.none_value()], (1, 3, 4, 4), {"kernel_shape": [2, 2]}, "y")
    block.add_op(ReturnOp(y))
    module = ModuleOp([FuncOp("main", ([a.type for a in block.args], [y.type]), Region(block))])
    fired = check_rewrite(GeneratedModule(module, g.weights), "reorder-dyn-weight", 0)
    assert fired["ReorderDynWeight"] == 1  # and check_rewrite compared the values
    permutes = [op for op in module.walk() if op.name == "top.Permute"]
    assert sorted(AttrView(op.attributes, SPECS["top.Permute"])["order"] for op in permutes) == [[1, 0, 2, 3], [1, 0, 3, 2]]


def test_passes_read_weights_of_their_top_module():
    """The registered pass (not only apply_patterns) finds the weights through TopModule."""
    text = """
    func.func @main(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %0 = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
      %c = "top.Weight"() : () -> tensor<1xf32> loc("c")
      %1 = "top.Mul"(%0, %c) : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32> loc("mul")
      return %1 : tensor<2x3xf32>
    }"""
    from tpudsl.ir.parser import parse_module

    module = parse_module(text, "t.mlir", make_context())
    mod = TopModule(module, {"c": np.array([3.0], np.float32)})
    canonicalize.CanonicalizePass().apply(make_context(), mod.module)
    names = [op.name for op in mod.module.walk()]
    assert "top.MulConst" in names and "top.Mul" not in names and "top.Weight" not in names

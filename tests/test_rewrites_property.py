"""Every rewrite keeps the values: random Top graphs, seeded with the shapes the patterns look for,
interpret to the same outputs before and after a rewrite pass (rtol 1e-5, f32), keep their names,
never grow except by ReorderDynWeight's Permute, and a second run changes nothing."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects.builtin import BFloat16Type, Float16Type, ModuleOp, TensorType, f32
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region, SSAValue

from strategies import MAX_ELEMS, STEPS, GeneratedModule, Graph, divisors, nchw_shapes, shape_of, small_shapes
from tpudsl.dialects import make_context
from tpudsl.dialects.attrs import to_attr
from tpudsl.dialects.opdef import create, loc_name
from tpudsl.interp import ModuleInterpreter
from tpudsl.ir.module import TopModule
from tpudsl.rewrites import (
    canonicalize,
    cast_cleanup,
    fold_constants,
    fuse_conv_bn,
    fuse_matmul_bias,
    fuse_relu,
    permute_reshape,
    reorder_dyn_weight,
    scalar_to_const,
)
from tpudsl.rewrites.pattern import RewriteEnv, apply_patterns

PASSES = {
    "canonicalize": canonicalize.CanonicalizePass,
    "reorder-dyn-weight": reorder_dyn_weight.ReorderDynWeightPass,
    "cast-cleanup": cast_cleanup.CastCleanupPass,
    "permute-reshape-cleanup": permute_reshape.PermuteReshapeCleanupPass,
    "fuse-conv-bn": fuse_conv_bn.FuseConvBnPass,
    "fuse-relu": fuse_relu.FuseReluPass,
    "fuse-matmul-bias": fuse_matmul_bias.FuseMatMulBiasPass,
    "scalar-to-const": scalar_to_const.ScalarToConstPass,
    "fold-constants": fold_constants.FoldConstantsPass,
}


# ---- steps that build what the patterns match (each appends ops to the Graph g) --------------


def new_input(g: Graph, shape: tuple[int, ...]) -> SSAValue:
    """A further model input: what makes a Deconv filter dynamic."""
    arg = g.block.insert_arg(TensorType(f32, shape), len(g.block.args))
    return g.add(create("top.Input", [arg], [arg.type], loc=g.name("input_filter"))).results[0]


def step_dyn_deconv(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    """DragGAN: a Deconv whose filter is computed, with or without the exporter's transpose."""
    shape = shape_of(x)
    if len(shape) != 4:
        return False
    n, c, h, w = shape
    group = draw(st.sampled_from(divisors(c)))
    ocg, k = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    if n * ocg * group * (h + k - 1) * (w + k - 1) > MAX_ELEMS:
        return False
    loc = g.name("deconv")
    if draw(st.booleans()):  # torch: filter computed as [oc/g, ic, k, k], then transposed
        source = new_input(g, (ocg, c, k, k))
        filt = g.add(create("top.Permute", [source], [TensorType(f32, (c, ocg, k, k))],
                            {"order": [1, 0, 2, 3]}, loc=f"{loc}_filter_T")).results[0]
    else:
        filt = new_input(g, (c, ocg, k, k))
    if draw(st.booleans()):
        filt = g.add(create("top.MulConst", [filt], [filt.type], {"const_val": 0.5}, loc=f"{loc}_mod")).results[0]
    g.emit("top.Deconv", [x, filt, g.none_value()], (n, ocg * group, h + k - 1, w + k - 1),
           {"kernel_shape": [k, k], "group": group}, loc)
    return True


def step_dyn_conv(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    """A Conv whose filter is a model input (its layout stays, weight_is_coeff becomes 0)."""
    shape = shape_of(x)
    if len(shape) != 4:
        return False
    n, c, h, w = shape
    group = draw(st.sampled_from(divisors(c)))
    oc = group * draw(st.integers(1, 2))
    filt = new_input(g, (oc, c // group, 1, 1))
    g.emit("top.Conv", [x, filt, g.none_value()], (n, oc, h, w), {"kernel_shape": [1, 1], "group": group},
           g.name("dynconv"))
    return True


FLOAT_TYPES = {"f32": f32, "f16": Float16Type(), "bf16": BFloat16Type()}


def step_cast_chain(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    """f32 -> some of f16/bf16/f32 -> f32."""
    narrow = draw(st.sampled_from(["f16", "bf16"]))
    round_trip = [narrow, "f32", narrow]  # the middle pair is exact and goes
    chain = draw(st.one_of(st.just(round_trip), st.lists(st.sampled_from(sorted(FLOAT_TYPES)), min_size=2, max_size=4)))
    chain = [*chain, "f32"]
    value = x
    for kind in chain:
        value = g.add(create("top.Cast", [value], [TensorType(FLOAT_TYPES[kind], shape_of(x))],
                             loc=g.name("cast"))).results[0]
    g.activations.append(value)
    return True


def step_permute_chain(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    for _ in range(draw(st.integers(2, 3))):
        STEPS["permute"](draw, g, x)
        x = g.activations[-1]
    return True


def step_conv_affine_relu(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    """Conv, then BatchNorm or Scale, then maybe Relu or Clip(0, 6)."""
    if not STEPS["conv"](draw, g, x):
        return False
    y = g.activations[-1]
    if draw(st.integers(0, 3)):  # mostly without a fused activation, which would block the fold
        y.owner.attributes["do_relu"] = to_attr("bool", False)
    if draw(st.booleans()):
        STEPS["batchnorm"](draw, g, y)
    else:
        c = shape_of(y)[1]
        loc = g.name("scale")
        g.emit("top.Scale", [y, g.weight(loc, "s", (1, c, 1, 1)), g.weight(loc, "t", (1, c, 1, 1))],
               shape_of(y), {}, loc)
    step_relu(draw, g, g.activations[-1])
    return True


def step_relu(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    if draw(st.booleans()):
        g.emit("top.Relu", [x], shape_of(x), {"relu_limit": draw(st.sampled_from([-1.0, 2.0]))}, g.name("relu"))
    else:
        g.emit("top.Clip", [x], shape_of(x), {"min": 0.0, "max": 6.0}, g.name("relu6"))
    return True


def step_matmul_bias(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    shape = shape_of(x)
    if len(shape) < 2:
        return False
    n_out = draw(st.integers(1, 6))
    loc = g.name("fc")
    out = (*shape[:-1], n_out)
    mm = g.emit("top.MatMul", [x, g.weight(loc, "w", (shape[-1], n_out)), g.none_value()], out, {}, f"{loc}_mm")
    bias = g.weight(loc, "b", draw(st.sampled_from([(n_out,), (1, n_out)])))
    g.emit("top.Add", [mm, bias] if draw(st.booleans()) else [bias, mm], out, {}, loc)
    if draw(st.booleans()):
        step_relu(draw, g, g.activations[-1])
    return True


def step_scalar_binary(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    name = draw(st.sampled_from(["top.Mul", "top.Add", "top.Sub", "top.Div"]))
    loc = g.name(name[4:].lower())
    c = g.weight(loc, "c", (1,), positive=True)  # positive: never a division by zero
    g.emit(name, [x, c] if draw(st.booleans()) else [c, x], shape_of(x), {}, loc)
    return True


def step_shape_op(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    shape = shape_of(x)
    kind = draw(st.sampled_from(["squeeze", "unsqueeze", "flatten", "reshape2"]))
    loc = g.name(kind)
    if kind == "squeeze" and 1 in shape:
        g.emit("top.Squeeze", [x], tuple(d for d in shape if d != 1), {"axes": []}, loc)
    elif kind == "unsqueeze" and len(shape) < 4:
        g.emit("top.Unsqueeze", [x], (1, *shape), {"axes": [0]}, loc)
    elif kind == "flatten" and shape:
        g.emit("top.Flatten", [x], (int(np.prod(shape)),), {"start_dim": 0}, loc)
    else:
        STEPS["reshape"](draw, g, x)
        STEPS["reshape"](draw, g, g.activations[-1])
    return True


def step_foldable(draw: st.DrawFn, g: Graph, x: SSAValue) -> bool:
    """An op of weights only (folded when the weights are known), then combined with x."""
    loc = g.name("const")
    shape = shape_of(x)
    w = g.weight(loc, "a", tuple(reversed(shape)))
    folded = g.add(create("top.Permute", [w], [TensorType(f32, shape)],
                          {"order": list(reversed(range(len(shape))))}, loc=f"{loc}_T")).results[0]
    g.emit("top.Add", [x, folded], shape, {}, loc)
    return True


REWRITE_STEPS = {
    "dyn_deconv": step_dyn_deconv,
    "dyn_conv": step_dyn_conv,
    "cast_chain": step_cast_chain,
    "permute_chain": step_permute_chain,
    "conv_affine_relu": step_conv_affine_relu,
    "relu": step_relu,
    "matmul_bias": step_matmul_bias,
    "scalar_binary": step_scalar_binary,
    "shape_op": step_shape_op,
    "foldable": step_foldable,
}
ALL_STEPS = {**STEPS, **REWRITE_STEPS}


@st.composite
def rewrite_modules(draw: st.DrawFn, max_ops: int = 5) -> GeneratedModule:
    """A random valid Top module (like strategies.top_modules) built mostly from REWRITE_STEPS."""
    shapes = [draw(nchw_shapes())] + ([draw(small_shapes(2, 4))] if draw(st.booleans()) else [])
    block = Block(arg_types=[TensorType(f32, s) for s in shapes])
    g = Graph(block, np.random.default_rng(draw(st.integers(0, 2**32 - 1))))
    for i, arg in enumerate(list(block.args)):
        g.emit("top.Input", [arg], shapes[i], {}, f"input{i}")
    for _ in range(draw(st.integers(1, max_ops))):
        kind = draw(st.sampled_from(sorted(REWRITE_STEPS)) if draw(st.integers(0, 3)) else st.sampled_from(sorted(STEPS)))
        ALL_STEPS[kind](draw, g, draw(st.sampled_from(g.activations)))
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


@given(rewrite_modules(), st.sampled_from(sorted(PASSES)), st.integers(0, 2**32 - 1))
def test_rewrite_keeps_values_names_and_size(generated: GeneratedModule, pass_name: str, seed: int):
    mod = TopModule(*generated)
    rng = np.random.default_rng(seed)
    block = mod.main_func().body.block
    inputs = {loc_name(use.operation): rng.standard_normal(arg.type.get_shape()).astype(np.float32)
              for arg in block.args for use in arg.uses}
    before = run(mod.module, dict(mod.weights), inputs)
    names_before = set(op_names(mod.module))
    size_before = len(op_names(mod.module))

    fired = apply_patterns(mod.module, PASSES[pass_name].patterns, RewriteEnv(mod.weights))
    mod.module.verify()

    after = run(mod.module, mod.weights, inputs)
    assert len(after) == len(before)
    for b, a in zip(before, after, strict=True):
        scale = max(1.0, float(np.abs(b[np.isfinite(b)]).max(initial=0.0)))  # f16 casts may overflow
        np.testing.assert_allclose(a.astype(np.float32), b.astype(np.float32), rtol=1e-5, atol=1e-5 * scale)
    assert len(op_names(mod.module)) <= size_before + fired["ReorderDynWeight"]
    for name in op_names(mod.module):  # every name is an old one or derived from one
        assert name in names_before or any(name.startswith(old + "_") for old in names_before), name
    assert not apply_patterns(mod.module, PASSES[pass_name].patterns, RewriteEnv(mod.weights))


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

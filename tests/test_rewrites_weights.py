"""The patterns that read weight data, on hand-written modules: what they build, the names they
give, and the new weights checked against the textbook formulas. (tpuc-opt reads no .npz, so these
cannot be lit tests; lit_tests/rewrites/weights_unavailable.mlir shows they stay off there.)"""

from __future__ import annotations

import numpy as np
import pytest

from tpudsl.dialects import make_context
from tpudsl.dialects.opdef import AttrView, SPECS, loc_name
from tpudsl.ir.module import TopModule
from tpudsl.ir.parser import parse_module
from tpudsl.rewrites.canonicalize import CanonicalizePass
from tpudsl.rewrites.fold_constants import FoldConstantsPass
from tpudsl.rewrites.fuse_conv_bn import FuseConvBnPass
from tpudsl.rewrites.fuse_matmul_bias import FuseMatMulBiasPass
from tpudsl.rewrites.scalar_to_const import ScalarToConstPass

RNG = np.random.default_rng(7)


def rewrite(text: str, weights: dict[str, np.ndarray], pass_cls) -> TopModule:
    mod = TopModule(parse_module(text, "test.mlir", make_context()), weights)
    pass_cls().apply(make_context(), mod.module)
    mod.module.verify()
    return mod


def ops(mod: TopModule) -> list:
    return [op for op in mod.main_func().body.block.ops if op.name != "func.return"]


def attrs(op) -> AttrView:
    return AttrView(op.attributes, SPECS[op.name])


CONV_AFFINE = """
func.func @main(%arg0: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {{
  %0 = "top.Input"(%arg0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> loc("x")
  %w = "top.Weight"() : () -> tensor<3x2x3x3xf32> loc("w")
  %b = "top.Weight"() : () -> tensor<3xf32> loc("b")
  %1 = "top.Conv"(%0, %w, %b) {{kernel_shape = [3, 3], pads = [1, 1, 1, 1]}} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32> loc("conv")
  {affine}
  return %2 : tensor<1x3x4x4xf32>
}}"""


def test_conv_batchnorm_folds_into_new_weights_named_after_the_batchnorm():
    w, b = RNG.standard_normal((3, 2, 3, 3), dtype=np.float32), RNG.standard_normal(3, dtype=np.float32)
    mean, gamma, beta = (RNG.standard_normal(3, dtype=np.float32) for _ in range(3))
    var = RNG.uniform(0.5, 2.0, 3).astype(np.float32)
    affine = """%m = "top.Weight"() : () -> tensor<3xf32> loc("m")
  %v = "top.Weight"() : () -> tensor<3xf32> loc("v")
  %g = "top.Weight"() : () -> tensor<3xf32> loc("g")
  %be = "top.Weight"() : () -> tensor<3xf32> loc("be")
  %2 = "top.BatchNorm"(%1, %m, %v, %g, %be) {epsilon = 1.0e-3 : f64, do_relu = true} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32> loc("bn")"""
    weights = {"w": w, "b": b, "m": mean, "v": var, "g": gamma, "be": beta}
    mod = rewrite(CONV_AFFINE.format(affine=affine), weights, FuseConvBnPass)

    conv = ops(mod)[-1]
    assert [op.name for op in ops(mod)] == ["top.Input", "top.Weight", "top.Weight", "top.Conv"]
    assert loc_name(conv) == "bn" and attrs(conv)["do_relu"] and attrs(conv)["pads"] == [1, 1, 1, 1]
    assert [loc_name(v.owner) for v in conv.operands[1:]] == ["bn_merged_to_weight", "bn_merged_to_bias"]
    s = gamma / np.sqrt(var + 1e-3)
    np.testing.assert_allclose(mod.weights["bn_merged_to_weight"], w * s[:, None, None, None], rtol=1e-6)
    np.testing.assert_allclose(mod.weights["bn_merged_to_bias"], (b - mean) * s + beta, rtol=1e-5, atol=1e-6)


def test_conv_scale_folds_per_output_channel():
    w, b = RNG.standard_normal((3, 2, 3, 3), dtype=np.float32), RNG.standard_normal(3, dtype=np.float32)
    s, t = RNG.standard_normal((1, 3, 1, 1), dtype=np.float32), RNG.standard_normal((1, 3, 1, 1), dtype=np.float32)
    affine = """%s = "top.Weight"() : () -> tensor<1x3x1x1xf32> loc("s")
  %t = "top.Weight"() : () -> tensor<1x3x1x1xf32> loc("t")
  %2 = "top.Scale"(%1, %s, %t) : (tensor<1x3x4x4xf32>, tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32>) -> tensor<1x3x4x4xf32> loc("scale")"""
    mod = rewrite(CONV_AFFINE.format(affine=affine), {"w": w, "b": b, "s": s, "t": t}, FuseConvBnPass)

    assert loc_name(ops(mod)[-1]) == "scale" and "top.Scale" not in [op.name for op in ops(mod)]
    np.testing.assert_allclose(mod.weights["scale_merged_to_weight"], w * s.reshape(3, 1, 1, 1), rtol=1e-6)
    np.testing.assert_allclose(mod.weights["scale_merged_to_bias"], b * s.reshape(3) + t.reshape(3), rtol=1e-5)


BINARY = """
func.func @main(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {{
  %0 = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
  %c = "top.Weight"() : () -> tensor<1x1xf32> loc("c")
  %1 = "top.{op}"({operands}) : (tensor<{t0}>, tensor<{t1}>) -> tensor<2x3xf32> loc("bin")
  return %1 : tensor<2x3xf32>
}}"""


@pytest.mark.parametrize(
    "op, scalar_first, const_op, const_val, reverse",
    [
        ("Mul", False, "top.MulConst", 4.0, False),
        ("Mul", True, "top.MulConst", 4.0, False),
        ("Add", True, "top.AddConst", 4.0, False),
        ("Sub", False, "top.AddConst", -4.0, False),
        ("Sub", True, "top.SubConst", 4.0, True),
        ("Div", False, "top.MulConst", 0.25, False),
        ("Div", True, "top.DivConst", 4.0, True),
    ],
)
def test_binary_with_scalar_weight_becomes_const_op(op, scalar_first, const_op, const_val, reverse):
    operands, types = ("%c, %0", ("1x1xf32", "2x3xf32")) if scalar_first else ("%0, %c", ("2x3xf32", "1x1xf32"))
    text = BINARY.format(op=op, operands=operands, t0=types[0], t1=types[1])
    mod = rewrite(text, {"c": np.array([[4.0]], np.float32)}, ScalarToConstPass)

    assert [o.name for o in ops(mod)] == ["top.Input", const_op]  # the scalar weight is gone too
    const = ops(mod)[-1]
    assert loc_name(const) == "bin" and attrs(const)["const_val"] == const_val
    assert attrs(const).get("is_reverse", False) == reverse


def test_scalar_that_broadcasts_the_input_stays_binary():
    text = """
    func.func @main(%arg0: tensor<3xf32>) -> tensor<1x3xf32> {
      %0 = "top.Input"(%arg0) : (tensor<3xf32>) -> tensor<3xf32> loc("x")
      %c = "top.Weight"() : () -> tensor<1x1xf32> loc("c")
      %1 = "top.Mul"(%0, %c) : (tensor<3xf32>, tensor<1x1xf32>) -> tensor<1x3xf32> loc("bin")
      return %1 : tensor<1x3xf32>
    }"""
    mod = rewrite(text, {"c": np.array([[2.0]], np.float32)}, CanonicalizePass)
    assert [o.name for o in ops(mod)] == ["top.Input", "top.Weight", "top.Mul"]


def test_folding_makes_a_weight_named_like_the_op_and_removes_dead_ops():
    text = """
    func.func @main(%arg0: tensor<2x3xf32>, %arg1: tensor<5xf32>) -> (tensor<2x3xf32>, tensor<3x2xf32>) {
      %0 = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
      %unused = "top.Input"(%arg1) : (tensor<5xf32>) -> tensor<5xf32> loc("unused_input")
      %k = "top.Weight"() : () -> tensor<2x3xf32> loc("k")
      %1 = "top.Permute"(%k) {order = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32> loc("k_T")
      %2 = "top.Exp"(%k) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("k_exp")
      %3 = "top.Add"(%0, %2) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("out")
      %4 = "top.Relu"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("dead")
      return %3, %1 : tensor<2x3xf32>, tensor<3x2xf32>
    }"""
    k = RNG.standard_normal((2, 3), dtype=np.float32)
    mod = rewrite(text, {"k": k}, FoldConstantsPass)

    names = {loc_name(op): op.name for op in ops(mod)}
    assert names == {"x": "top.Input", "unused_input": "top.Input", "k_T": "top.Weight",
                     "k_exp": "top.Weight", "out": "top.Add"}
    np.testing.assert_array_equal(mod.weights["k_T"], k.T)
    np.testing.assert_allclose(mod.weights["k_exp"], np.exp(k), rtol=1e-6)


def test_a_returned_op_is_not_folded_when_its_name_is_taken_in_the_weights():
    """Folding would make the weight `k_T_1` (the data dict already holds a `k_T`): the graph output
    `k_T` would be renamed, so the op stays; one that is not returned still folds."""
    text = """
    func.func @main(%arg0: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
      %0 = "top.Input"(%arg0) : (tensor<3x2xf32>) -> tensor<3x2xf32> loc("x")
      %k = "top.Weight"() : () -> tensor<2x3xf32> loc("k")
      %1 = "top.Permute"(%k) {order = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32> loc("k_T")
      %2 = "top.Permute"(%k) {order = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32> loc("inner")
      %3 = "top.Add"(%0, %2) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32> loc("y")
      return %1, %3 : tensor<3x2xf32>, tensor<3x2xf32>
    }"""
    k = RNG.standard_normal((2, 3), dtype=np.float32)
    mod = rewrite(text, {"k": k, "k_T": np.zeros((3, 2), np.float32)}, FoldConstantsPass)

    names = {loc_name(op): op.name for op in ops(mod)}
    assert names == {"x": "top.Input", "k": "top.Weight", "k_T": "top.Permute", "inner": "top.Weight", "y": "top.Add"}
    np.testing.assert_array_equal(mod.weights["inner"], k.T)


def test_two_dim_bias_becomes_a_one_dim_weight_named_after_the_add():
    text = """
    func.func @main(%arg0: tensor<2x3xf32>) -> tensor<2x4xf32> {
      %n = "top.None"() : () -> none loc("none")
      %0 = "top.Input"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("x")
      %w = "top.Weight"() : () -> tensor<3x4xf32> loc("w")
      %b = "top.Weight"() : () -> tensor<1x4xf32> loc("b")
      %1 = "top.MatMul"(%0, %w, %n) : (tensor<2x3xf32>, tensor<3x4xf32>, none) -> tensor<2x4xf32> loc("mm")
      %2 = "top.Add"(%1, %b) : (tensor<2x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32> loc("fc")
      return %2 : tensor<2x4xf32>
    }"""
    b = RNG.standard_normal((1, 4), dtype=np.float32)
    mod = rewrite(text, {"w": RNG.standard_normal((3, 4), dtype=np.float32), "b": b}, FuseMatMulBiasPass)

    matmul = ops(mod)[-1]
    assert matmul.name == "top.MatMul" and loc_name(matmul) == "fc"
    assert loc_name(matmul.operands[2].owner) == "fc_bias"
    np.testing.assert_array_equal(mod.weights["fc_bias"], b.reshape(4))
    assert "b" not in {loc_name(op) for op in ops(mod)}

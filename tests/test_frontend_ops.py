"""Per-op ONNX -> Top conversion, checked against onnxruntime through the Top interpreter.

Each case is one small graph; `ops` names Top ops the conversion must use, so that a case about
one conversion form (say AddConst) cannot pass through another (Add with a weight)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import onnx
import pytest
from cli_support import run_main
from frontend_support import check, error_lines, locs, make_model, rand, run_top
from interp_ref import same_pool_loops
from onnx import TensorProto
from onnx import helper as h

from tpudsl.frontend.onnx_import import convert_onnx
from tpudsl.ir.diagnostics import TpudslError


@dataclass
class Case:
    id: str
    nodes: list
    inputs: dict
    inits: dict = field(default_factory=dict)
    opset: int = 13
    ops: tuple = ()
    outputs: tuple = ()
    feed: dict | None = None
    rtol: float = 1e-4
    atol: float = 1e-5


def node(op, ins, outs=("y",), **attrs):
    return h.make_node(op, list(ins), list(outs), **attrs)


def i64(*v):
    return np.array(v, np.int64)


X4 = {"x": [2, 3, 5, 6]}
X2 = {"x": [4, 6]}
X3 = {"x": [2, 4, 6]}

CASES = [
    # ---- convolution, matmul, normalization ----
    Case("conv_group_stride_dil", [node("Conv", "xwb", group=3, strides=[2, 1], dilations=[1, 2], pads=[1, 0, 0, 2])],
         {"x": [1, 6, 9, 9]}, {"w": rand(6, 2, 3, 3), "b": rand(6)}, ops=("top.Conv",)),
    Case("conv_same_upper", [node("Conv", "xw", auto_pad="SAME_UPPER", strides=[2, 2])], {"x": [1, 2, 7, 8]},
         {"w": rand(4, 2, 4, 3)}, opset=11, ops=("top.Conv",)),
    Case("conv_same_lower", [node("Conv", "xw", auto_pad="SAME_LOWER", strides=[2, 2])], {"x": [1, 2, 7, 8]},
         {"w": rand(4, 2, 4, 3)}, ops=("top.Conv",)),
    Case("conv1d", [node("Conv", "xw", pads=[1, 1])], {"x": [1, 2, 10]}, {"w": rand(3, 2, 3)}, ops=("top.Conv",)),
    Case("conv_transpose", [node("ConvTranspose", "xwb", strides=[2, 2], pads=[1, 0, 1, 0], output_padding=[1, 1])],
         {"x": [1, 4, 5, 5]}, {"w": rand(4, 3, 3, 3), "b": rand(3)}, ops=("top.Deconv",)),
    Case("conv_transpose_group_output_shape", [node("ConvTranspose", "xw", strides=[2, 2], group=2, output_shape=[10, 11])],
         {"x": [1, 4, 5, 5]}, {"w": rand(4, 2, 3, 3)}, ops=("top.Deconv",)),
    Case("conv_transpose_output_shape_beyond_kernel", [node("ConvTranspose", "xwb", strides=[3, 2], output_shape=[10, 8])],
         {"x": [1, 1, 3, 3]}, {"w": rand(1, 2, 3, 3), "b": rand(2)}, ops=("top.Deconv",)),
    Case("conv_transpose_same_upper", [node("ConvTranspose", "xw", strides=[2, 2], auto_pad="SAME_UPPER")],
         {"x": [1, 2, 4, 4]}, {"w": rand(2, 3, 3, 3)}, ops=("top.Deconv",)),
    Case("matmul", [node("MatMul", "xw")], X3, {"w": rand(6, 5)}, ops=("top.MatMul",)),
    Case("matmul_dynamic", [node("MatMul", "xz")], {"x": [2, 3, 4], "z": [2, 4, 5]}, ops=("top.MatMul",)),
    Case("gemm_transB_bias", [node("Gemm", "xwc", transB=1)], X2, {"w": rand(5, 6), "c": rand(5)}, ops=("top.MatMul",)),
    Case("gemm_alpha_beta_transA", [node("Gemm", "xwc", transA=1, alpha=0.5, beta=2.0)], {"x": [6, 4]},
         {"w": rand(6, 5), "c": rand(4, 5)}),
    Case("gemm_beta_only", [node("Gemm", "xwc", beta=3.0)], X2, {"w": rand(6, 5), "c": rand(1, 5)}),
    Case("gemm_dynamic_c", [node("Gemm", "xwz", alpha=2.0, beta=0.5)], {"x": [4, 6], "z": [4, 5]}, {"w": rand(6, 5)}),
    Case("batchnorm", [node("BatchNormalization", ["x", "s", "b", "m", "v"], epsilon=1e-3)], X4,
         {"s": rand(3), "b": rand(3), "m": rand(3), "v": rand(3, low=0.5, high=2)}, ops=("top.BatchNorm",)),
    Case("batchnorm_opset7", [node("BatchNormalization", ["x", "s", "b", "m", "v"])], X4,
         {"s": rand(3), "b": rand(3), "m": rand(3), "v": rand(3, low=0.5, high=2)}, opset=7),
    Case("layernorm", [node("LayerNormalization", "xsb", axis=-1, epsilon=1e-5)], X3, {"s": rand(6), "b": rand(6)},
         opset=17, ops=("top.LayerNorm",)),
    Case("layernorm_axis1", [node("LayerNormalization", "xs", axis=1)], X3, {"s": rand(4, 6)}, opset=17),
    Case("instancenorm", [node("InstanceNormalization", "xsb", epsilon=1e-4)], X4, {"s": rand(3), "b": rand(3)},
         ops=("top.InstanceNorm",)),
    Case("groupnorm_21", [node("GroupNormalization", "xsb", num_groups=2)], {"x": [2, 4, 3, 3]},
         {"s": rand(4), "b": rand(4)}, opset=21, ops=("top.GroupNorm",)),
    Case("prelu", [node("PRelu", "xs")], X4, {"s": rand(3, 1, 1)}, ops=("top.PRelu",)),
    Case("prelu_per_width", [node("PRelu", "xs")], X4, {"s": rand(6)}, ops=("top.MinConst",)),
    Case("prelu_full", [node("PRelu", "xs")], X3, {"s": rand(4, 6)}, ops=("top.MinConst",)),
    Case("layernorm_stats", [node("LayerNormalization", "xsb", ["y", "m", "r"], axis=1)], X3,
         {"s": rand(4, 6), "b": rand(4, 6)}, opset=17, outputs=("y", "m", "r"), ops=("top.LayerNorm", "top.Rsqrt")),
    # ---- pooling ----
    Case("maxpool_ceil", [node("MaxPool", "x", kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1)], X4, ops=("top.MaxPool",)),
    Case("maxpool_same", [node("MaxPool", "x", kernel_shape=[2, 3], auto_pad="SAME_UPPER", strides=[2, 2])], X4),
    Case("avgpool_pads", [node("AveragePool", "x", kernel_shape=[3, 3], pads=[1, 1, 1, 1])], X4, ops=("top.AvgPool",)),
    Case("avgpool_include_pad", [node("AveragePool", "x", kernel_shape=[3, 2], pads=[1, 0, 1, 1], count_include_pad=1)], X4),
    Case("avgpool_dilated_ceil", [node("AveragePool", "x", kernel_shape=[2, 2], dilations=[2, 3], strides=[2, 2],
                                       pads=[1, 0, 0, 1], ceil_mode=1, count_include_pad=1)], X4, opset=19),
    # ONNX's shape inference (onnx 1.23) counts a last window that starts in the end padding (8 -> 5),
    # which the spec and onnxruntime ignore (8 -> 4); a second such pool (4 -> 2, ONNX: 3) and a Relu
    # read the corrected shapes.
    Case("pools_ceil_window_in_end_pad", [
        node("MaxPool", "x", ["p"], kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 1, 1], ceil_mode=1),
        node("AveragePool", "p", ["q"], kernel_shape=[2, 2], strides=[2, 2], pads=[0, 0, 1, 1], ceil_mode=1,
             count_include_pad=1),
        node("Relu", "q")], {"x": [1, 2, 8, 8]}, opset=19, ops=("top.MaxPool", "top.AvgPool")),
    Case("avgpool_ceil_window_in_end_pad", [node("AveragePool", "x", kernel_shape=[3, 2], strides=[2, 2],
                                                 pads=[1, 0, 2, 1], ceil_mode=1)], {"x": [1, 2, 7, 6]}, opset=19),
    # Indices are integers: compared exactly.
    Case("maxpool_indices_dilated_ceil", [node("MaxPool", "x", ["y", "i"], kernel_shape=[2, 2], dilations=[2, 1],
                                               strides=[2, 2], pads=[1, 0, 0, 0], ceil_mode=1)],
         X4, opset=12, ops=("top.MaxPoolWithMask",), rtol=0, atol=0),
    Case("maxpool_indices_column_major_3d", [node("MaxPool", "x", ["y", "i"], kernel_shape=[2, 2, 2], strides=[1, 2, 1],
                                                  storage_order=1)],
         {"x": [1, 2, 4, 5, 3]}, opset=12, ops=("top.MaxPoolWithMask", "top.Permute"), rtol=0, atol=0),
    Case("global_avgpool", [node("GlobalAveragePool", "x")], X4, ops=("top.AvgPool",)),
    Case("global_maxpool", [node("GlobalMaxPool", "x")], X4, ops=("top.MaxPool",)),
    # ---- element-wise ----
    Case("add_broadcast", [node("Add", "xz")], {"x": [2, 3, 4], "z": [3, 1]}, ops=("top.Add",)),
    Case("add_weight", [node("Add", "xw")], X3, {"w": rand(4, 6)}, ops=("top.Add",)),
    Case("add_scalar", [node("Add", "xw")], X3, {"w": np.array(0.5, np.float32)}, ops=("top.AddConst",)),
    Case("sub_scalar_reverse", [node("Sub", "wx")], X3, {"w": np.array([2.0], np.float32)}, ops=("top.SubConst",)),
    Case("sub_scalar", [node("Sub", "xw")], X3, {"w": np.array([2.0], np.float32)}, ops=("top.SubConst",)),
    Case("sub", [node("Sub", "xz")], {"x": [3, 4], "z": [4]}, ops=("top.Sub",)),
    Case("mul_scalar", [node("Mul", "wx")], X3, {"w": np.array(3.0, np.float32)}, ops=("top.MulConst",)),
    Case("div_scalar_reverse", [node("Div", "wx")], {"x": [3, 4]}, {"w": np.array(2.0, np.float32)},
         ops=("top.DivConst",), feed={"x": rand(3, 4, low=0.5, high=2)}),
    Case("div", [node("Div", "xz")], {"x": [3, 4], "z": [3, 4]}, ops=("top.Div",),
         feed={"x": rand(3, 4), "z": rand(3, 4, low=0.5, high=2)}),
    Case("scalar_widens_rank", [node("Add", "xw")], {"x": [4]}, {"w": np.ones((1, 1), np.float32)}, ops=("top.Add",)),
    Case("min3", [node("Min", "xzw")], {"x": [3, 4], "z": [3, 4]}, {"w": rand(4)}, ops=("top.Min",)),
    Case("max_const", [node("Max", "xw")], X2, {"w": np.array(0.1, np.float32)}, ops=("top.MaxConst",)),
    Case("sum", [node("Sum", "xzx")], {"x": [3, 4], "z": [3, 4]}, ops=("top.Add",)),
    Case("mean", [node("Mean", "xz")], {"x": [3, 4], "z": [4]}),
    Case("neg", [node("Neg", "x")], X2, ops=("top.MulConst",)),
    Case("pow_const", [node("Pow", "xw")], X2, {"w": np.array(3.0, np.float32)}, ops=("top.Pow",)),
    Case("clip_opset6", [node("Clip", "x", min=-0.3, max=0.4)], X2, opset=6, ops=("top.Clip",)),
    Case("clip_inputs", [node("Clip", "xab")], X2, {"a": np.array(-0.2, np.float32), "b": np.array(0.5, np.float32)},
         opset=11, ops=("top.Clip",)),
    Case("clip_min_only", [node("Clip", ["x", "a"])], X2, {"a": np.array(-0.2, np.float32)}, opset=13),
    Case("clip_max_only", [node("Clip", ["x", "", "b"])], X2, {"b": np.array(0.2, np.float32)}, opset=13),
    Case("relu", [node("Relu", "x")], X2, ops=("top.Relu",)),
    Case("leakyrelu", [node("LeakyRelu", "x", alpha=0.2)], X2, ops=("top.LeakyRelu",)),
    Case("leakyrelu_default", [node("LeakyRelu", "x")], X2),
    Case("elu", [node("Elu", "x", alpha=0.7)], X2, ops=("top.Elu",)),
    Case("hardsigmoid", [node("HardSigmoid", "x", alpha=0.3, beta=0.4)], {"x": [4, 6]}, ops=("top.HardSigmoid",),
         feed={"x": rand(4, 6, low=-4, high=4)}),
    Case("hardswish", [node("HardSwish", "x")], X2, opset=14, ops=("top.HardSwish",), feed={"x": rand(4, 6, low=-5, high=5)}),
    Case("sigmoid", [node("Sigmoid", "x")], X2, ops=("top.Sigmoid",)),
    Case("tanh", [node("Tanh", "x")], X2, ops=("top.Tanh",)),
    Case("gelu", [node("Gelu", "x")], X2, opset=20, ops=("top.GELU",)),
    Case("gelu_tanh", [node("Gelu", "x", approximate="tanh")], X2, opset=20, ops=("top.GELU",)),
    Case("erf", [node("Erf", "x")], X2, ops=("top.Erf",)),
    Case("exp", [node("Exp", "x")], X2, ops=("top.Exp",)),
    Case("log", [node("Log", "x")], X2, ops=("top.Log",), feed={"x": rand(4, 6, low=0.1, high=3)}),
    Case("sqrt", [node("Sqrt", "x")], X2, ops=("top.Sqrt",), feed={"x": rand(4, 6, low=0.1, high=3)}),
    Case("reciprocal", [node("Reciprocal", "x")], X2, ops=("top.Reciprocal",), feed={"x": rand(4, 6, low=0.5, high=3)}),
    Case("abs", [node("Abs", "x")], X2, ops=("top.Abs",)),
    Case("softplus", [node("Softplus", "x")], X2, ops=("top.Softplus",)),
    Case("floor_ceil_round", [node("Floor", "x", ["f"]), node("Ceil", "x", ["c"]), node("Round", "x", ["r"]),
                              node("Sum", ["f", "c", "r"])], X2, feed={"x": rand(4, 6, low=-3, high=3)}),
    Case("cast_int_truncates", [node("Cast", "x", to=TensorProto.INT32), node("Cast", "y", ["z"], to=TensorProto.FLOAT)],
         X2, outputs=("z",), ops=("top.Cast",), feed={"x": rand(4, 6, low=-5, high=5)}),
    Case("cast_float_is_identity", [node("Cast", "x", ["c"], to=TensorProto.FLOAT), node("Relu", "c")], X2),
    # ---- comparisons and logic ----
    Case("greater", [node("Greater", "xz", ["g"]), node("Cast", "g", to=TensorProto.FLOAT)], {"x": [3, 4], "z": [4]},
         ops=("top.Compare",)),
    Case("less_const", [node("Less", "xw", ["g"]), node("Cast", "g", to=TensorProto.FLOAT)], X2,
         {"w": np.array(0.1, np.float32)}, ops=("top.CompareConst",)),
    Case("less_const_inversed", [node("Less", "wx", ["g"]), node("Cast", "g", to=TensorProto.FLOAT)], X2,
         {"w": np.array(0.1, np.float32)}, ops=("top.CompareConst",)),
    Case("equal_or_not", [node("Equal", "xz", ["e"]), node("Greater", "xw", ["g"]), node("Or", "eg", ["o"]),
                          node("Not", "o", ["n"]), node("Xor", "ng", ["a"]), node("Where", "axz")],
         {"x": [3, 4], "z": [3, 4]}, {"w": np.array(0.0, np.float32)},
         feed={"x": np.round(rand(3, 4, low=-2, high=2)), "z": np.round(rand(3, 4, low=-2, high=2))}),
    Case("where_weights", [node("Greater", "xw", ["g"]), node("Where", "gxv")], X2,
         {"w": np.array(0.0, np.float32), "v": rand(6)}, ops=("top.Where",)),
    # ---- reductions, softmax ----
    Case("reduce_mean", [node("ReduceMean", "x", axes=[1, -1], keepdims=1)], X4, ops=("top.Reduce",)),
    Case("reduce_sum_input_axes", [node("ReduceSum", "xa", keepdims=0)], X4, {"a": i64(2)}, ops=("top.Reduce",)),
    Case("reduce_sum_all", [node("ReduceSum", "x", keepdims=0)], X4),
    Case("reduce_max_18", [node("ReduceMax", "xa", keepdims=0)], X4, {"a": i64(0, 3)}, opset=18),
    Case("reduce_min", [node("ReduceMin", "x", axes=[2])], X4),
    Case("reduce_prod", [node("ReduceProd", "x", axes=[3])], X4),
    Case("reduce_l2", [node("ReduceL2", "x", axes=[1])], X4),
    Case("reduce_l1_18", [node("ReduceL1", "xa")], X4, {"a": i64(1)}, opset=18),
    Case("reduce_noop", [node("ReduceSum", "xa", noop_with_empty_axes=1), node("Relu", "y", ["z"])], X4,
         {"a": np.zeros(0, np.int64)}, outputs=("z",)),
    Case("reduce_sum_square", [node("ReduceSumSquare", "x", axes=[1], keepdims=0)], X4),
    Case("reduce_log_sum_18", [node("ReduceLogSum", "xa")], X4, {"a": i64(2, 3)}, opset=18,
         feed={"x": rand(2, 3, 5, 6, low=0.1, high=2)}),
    Case("reduce_log_sum_exp", [node("ReduceLogSumExp", "x", axes=[-1])], X4),
    Case("argmax", [node("ArgMax", "x", axis=2, keepdims=0)], X4, ops=("top.Arg",)),
    Case("argmin_last", [node("ArgMin", "x", axis=-1, select_last_index=1)], X4, ops=("top.Arg",),
         feed={"x": np.round(rand(2, 3, 5, 6, low=-2, high=2))}),
    Case("selu", [node("Selu", "x", alpha=1.5, gamma=1.1)], X2, ops=("top.Elu",)),
    # ---- ops with no Top op of their own: chains of Top ops (frontend/ops_composite.py) ----
    Case("celu", [node("Celu", "x", alpha=0.6)], X2, ops=("top.Elu",), feed={"x": rand(4, 6, low=-4, high=3)}),
    Case("thresholded_relu", [node("ThresholdedRelu", "x", alpha=0.25)], X2, ops=("top.Where",),
         feed={"x": np.array([[0.25, 0.2500001, -1, 0.3, 0, 2]] * 4, np.float32)}),
    Case("shrink", [node("Shrink", "x", bias=0.3, lambd=0.4)], X2, ops=("top.Where",),
         feed={"x": np.array([[-0.4, -0.41, 0.4, 0.41, 0, -3]] * 4, np.float32)}),
    Case("is_inf", [node("IsInf", "x")], X2, feed={"x": np.array([[np.inf, -np.inf, np.nan, 3.4e38, -1, 0]] * 4, np.float32)}),
    Case("is_inf_positive", [node("IsInf", "x", detect_negative=0)], X2,
         feed={"x": np.array([[np.inf, -np.inf, np.nan, 3.4e38, -1, 0]] * 4, np.float32)}),
    Case("is_inf_negative", [node("IsInf", "x", detect_positive=0)], X2,
         feed={"x": np.array([[np.inf, -np.inf, np.nan, -3.4e38, -1, 0]] * 4, np.float32)}),
    Case("is_inf_neither", [node("IsInf", "x", detect_positive=0, detect_negative=0)], X2,
         feed={"x": np.array([[np.inf, -np.inf, np.nan, -3.4e38, -1, 0]] * 4, np.float32)}, opset=20),
    Case("is_nan", [node("IsNaN", "x")], X2, ops=("top.Compare",),
         feed={"x": np.array([[np.inf, np.nan, -np.nan, 0, -1, 1]] * 4, np.float32)}),
    Case("hardmax_ties_first", [node("Hardmax", "x", axis=1)], X3, ops=("top.Arg", "top.Compare"),
         feed={"x": np.round(rand(2, 4, 6, low=-2, high=2))}),
    Case("hardmax_opset11_flattens", [node("Hardmax", "x", axis=1)], X4, opset=11, ops=("top.Reshape",)),
    Case("lp_normalization_l1", [node("LpNormalization", "x", axis=1, p=1)], X3, ops=("top.Reduce",)),
    Case("lp_normalization_l2_zero_row", [node("LpNormalization", "x")], X2,
         feed={"x": np.concatenate([rand(3, 6), np.zeros((1, 6), np.float32)])}),
    Case("mean_variance_normalization", [node("MeanVarianceNormalization", "x")], X4),
    Case("mean_variance_normalization_axes", [node("MeanVarianceNormalization", "x", axes=[1, -1])], X4),
    Case("one_hot_float_indices", [node("OneHot", "xdv", axis=1)], {"x": [2, 5]},
         {"d": np.array(4.0, np.float32), "v": np.array([-2.0, 3.5], np.float32)}, ops=("top.Compare",),
         feed={"x": np.array([[0, 3, -1, -4, 4], [1.7, -1.5, -5, 2, 9]], np.float32)}),
    Case("one_hot_int_indices_last_axis", [node("OneHot", "idv")], {"x": [2, 3]},
         {"i": np.array([[0, 2, -1], [5, -3, 1]], np.int64), "d": i64(3), "v": np.array([0, 1], np.int64)}),
    Case("lp_pool", [node("LpPool", "x", kernel_shape=[2, 3], strides=[2, 1], pads=[1, 0, 0, 1], p=3)], X4,
         ops=("top.AvgPool",), rtol=1e-4, atol=1e-5),
    Case("lp_pool_ceil_dilated", [node("LpPool", "x", kernel_shape=[2, 2], strides=[2, 2], dilations=[1, 2],
                                       ceil_mode=1)], {"x": [1, 2, 5, 7]}, opset=18),
    Case("atan", [node("Atan", "x")], {"x": [6, 6]}, ops=("top.Arcsin", "top.Arccos", "top.Where"),
         feed={"x": np.array([[0, 1e-6, -1e-3, 0.5, -0.999, 1], [-1, 1.001, 3, -40, 1e4, -3e19],
                              [np.inf, -np.inf, np.nan, 0.9999, 2e-30, -7]] * 2, np.float32)},
         rtol=5e-7, atol=0),
    Case("asin_asinh_acosh", [node("Asin", "x", ["s"]), node("Asinh", "x", ["h"]), node("Acosh", "z", ["a"])],
         {"x": [4, 6], "z": [4, 6]}, outputs=("s", "h", "a"), ops=("top.Arcsin", "top.Arcsinh", "top.Arccosh"),
         feed={"x": rand(4, 6), "z": rand(4, 6, low=1, high=30)}),
    Case("groupnorm_18_per_group", [node("GroupNormalization", "xsb", num_groups=2)], {"x": [2, 4, 3, 3]},
         {"s": rand(2), "b": rand(2)}, opset=18, ops=("top.GroupNorm",)),
    # A per-channel scale (opset 21) is an operand: one known only at run time converts too.
    Case("groupnorm_21_scale_input", [node("GroupNormalization", "xsb", num_groups=2)], {"x": [2, 4, 3, 3], "s": [4]},
         {"b": rand(4)}, opset=21, ops=("top.GroupNorm",)),
    Case("softmax", [node("Softmax", "x", axis=1)], X3, ops=("top.Softmax",)),
    Case("softmax_opset11_flattens", [node("Softmax", "x", axis=1)], X4, opset=11, ops=("top.Softmax", "top.Reshape")),
    Case("softmax_opset11_default_axis", [node("Softmax", "x")], X3, opset=11),
    Case("softmax_opset11_last", [node("Softmax", "x", axis=2)], X3, opset=11),
    Case("logsoftmax", [node("LogSoftmax", "x", axis=-1)], X3),
    Case("logsoftmax_opset9", [node("LogSoftmax", "x", axis=1)], X4, opset=9),
    # ---- data movement ----
    Case("transpose", [node("Transpose", "x", perm=[0, 2, 3, 1])], X4, ops=("top.Permute",)),
    Case("transpose_default", [node("Transpose", "x")], X3, ops=("top.Permute",)),
    Case("reshape_zero_minus1", [node("Reshape", "xs")], X4, {"s": i64(0, -1, 6)}, ops=("top.Reshape",)),
    Case("flatten", [node("Flatten", "x", axis=2)], X4, ops=("top.Reshape",)),
    Case("squeeze_attr", [node("Squeeze", "x", axes=[1])], {"x": [2, 1, 3]}, opset=11, ops=("top.Squeeze",)),
    Case("squeeze_input", [node("Squeeze", "xa")], {"x": [2, 1, 3, 1]}, {"a": i64(-1)}, ops=("top.Squeeze",)),
    Case("squeeze_all", [node("Squeeze", "x")], {"x": [1, 3, 1]}),
    Case("unsqueeze_attr", [node("Unsqueeze", "x", axes=[0, -1])], X2, opset=11, ops=("top.Unsqueeze",)),
    Case("unsqueeze_input", [node("Unsqueeze", "xa")], X2, {"a": i64(1, 3)}, ops=("top.Unsqueeze",)),
    Case("concat", [node("Concat", "xwz", axis=-1)], {"x": [2, 3], "z": [2, 1]}, {"w": rand(2, 2)}, ops=("top.Concat",)),
    Case("slice_attrs", [node("Slice", "x", starts=[1, -4], ends=[1000, -1], axes=[1, 3])], X4, opset=9, ops=("top.Slice",)),
    Case("slice_inputs_steps", [node("Slice", "xseat")], X4,
         {"s": i64(0, 5), "e": i64(3, 0), "a": i64(1, 3), "t": i64(2, -2)}, ops=("top.Slice",)),
    Case("slice_negative_to_start", [node("Slice", "xseat")], X4,
         {"s": i64(-1), "e": i64(-(2**63)), "a": i64(3), "t": i64(-1)}),
    Case("slice_no_axes", [node("Slice", "xse")], X3, {"s": i64(1), "e": i64(2)}),
    Case("split_attr", [node("Split", "x", ["a", "b"], axis=3, split=[2, 4])], X4, opset=11, outputs=("a", "b"),
         ops=("top.Slice",)),
    Case("split_input", [node("Split", "xs", ["a", "b", "c"], axis=1)], X4, {"s": i64(1, 1, 1)}, outputs=("a", "b", "c")),
    Case("split_equal", [node("Split", "x", ["a", "b"], axis=0)], X4, outputs=("a", "b")),
    Case("split_num_outputs", [node("Split", "x", ["a", "b", "c", "d"], axis=1, num_outputs=4)], {"x": [2, 7]},
         opset=18, outputs=("a", "b", "c", "d")),
    Case("pad_constant", [node("Pad", "xpv")], X4, {"p": i64(0, 0, 1, 2, 0, 0, 3, 0), "v": np.array(1.5, np.float32)},
         ops=("top.Pad",)),
    Case("pad_reflect", [node("Pad", "xp", mode="reflect")], X4, {"p": i64(0, 0, 2, 1, 0, 0, 1, 2)}, ops=("top.Pad",)),
    Case("pad_wrap", [node("Pad", "xp", mode="wrap")], X4, {"p": i64(0, 1, 2, 1, 0, 2, 1, 3)}, opset=19, ops=("top.Pad",)),
    Case("pad_edge_opset2", [node("Pad", "x", mode="edge", pads=[0, 0, 1, 1, 0, 0, 1, 1])], X4, opset=2),
    Case("pad_negative_crops", [node("Pad", "xp")], X4, {"p": i64(0, 0, -1, 2, 0, 0, 1, -3)}, ops=("top.Slice", "top.Pad")),
    Case("pad_only_negative", [node("Pad", "xp")], X4, {"p": i64(0, 0, -1, 0, 0, 0, 0, -2)}, ops=("top.Slice",)),
    Case("pad_axes_18", [node("Pad", ["x", "p", "", "a"])], X4, {"p": i64(1, 2, 3, 0), "a": i64(2, -1)}, opset=18),
    Case("tile", [node("Tile", "xr")], X3, {"r": i64(1, 2, 3)}, ops=("top.Tile",)),
    Case("expand", [node("Expand", "xs")], {"x": [3, 1]}, {"s": i64(2, 1, 4)}, ops=("top.Expand",)),
    Case("gather_const_indices", [node("Gather", "xi", axis=1)], X3, {"i": i64(3, -1, 0)}, ops=("top.Gather",)),
    Case("gather_scalar_index", [node("Gather", "xi", axis=0)], X3, {"i": np.array(1, np.int64)}, ops=("top.Gather",)),
    Case("gather_2d_indices", [node("Gather", "xi", axis=2)], X3, {"i": np.array([[0, 5], [2, 2]], np.int64)}),
    Case("gather_elements", [node("GatherElements", "xi", axis=-1)], {"x": [3, 4]},
         {"i": np.array([[0, 3], [1, -1], [2, 2]], np.int64)}, ops=("top.GatherElements",)),
    Case("trilu_upper_k", [node("Trilu", "xk")], X3, {"k": np.array(1, np.int64)}, opset=14, ops=("top.Trilu",)),
    Case("trilu_lower", [node("Trilu", "x", upper=0)], X3, opset=14, ops=("top.Trilu",)),
    Case("cumsum", [node("CumSum", "xa")], X3, {"a": np.array(1, np.int64)}, ops=("top.CumSum",)),
    Case("cumsum_reverse_exclusive", [node("CumSum", "xa", reverse=1, exclusive=1)], X3, {"a": np.array(-1, np.int64)},
         ops=("top.CumSum", "top.Reverse")),
    Case("cumsum_exclusive", [node("CumSum", "xa", exclusive=1)], X3, {"a": np.array(0, np.int64)}),
    Case("cumsum_reverse", [node("CumSum", "xa", reverse=1)], X3, {"a": np.array(2, np.int64)}),
    Case("lrn", [node("LRN", "x", size=3, alpha=0.01, beta=0.6, bias=1.5)], X4, ops=("top.LRN",)),
    Case("mod_fmod", [node("Mod", "xz", fmod=1)], {"x": [3, 4], "z": [3, 4]}, ops=("top.Mod",),
         feed={"x": rand(3, 4, low=-5, high=5), "z": rand(3, 4, low=0.5, high=2) * np.sign(rand(3, 4))}),
    Case("depth_to_space_dcr", [node("DepthToSpace", "x", blocksize=2)], {"x": [1, 8, 2, 3]}, ops=("top.Depth2Space",)),
    Case("depth_to_space_crd", [node("DepthToSpace", "x", blocksize=2, mode="CRD")], {"x": [1, 8, 2, 3]}),
    Case("space_to_depth", [node("SpaceToDepth", "x", blocksize=2)], {"x": [1, 2, 4, 6]}, ops=("top.Depth2Space",)),
    Case("identity_dropout", [node("Identity", "x", ["i"]), node("Dropout", "i", ["d"]), node("Relu", "d")], X2),
    Case("dropout_mask", [node("Dropout", "x", ["d", "mask"]), node("Relu", "d")], X2, opset=13, outputs=("y", "mask")),
    Case("dropout_training_ratio0", [node("Dropout", "xrt", ["d"]), node("Relu", "d")], X2,
         {"r": np.array(0.0, np.float32), "t": np.array(True)}, opset=13),
    Case("dropout_opset7", [node("Dropout", "x", ["d"]), node("Relu", "d")], X2, opset=7),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_op_matches_onnxruntime(case: Case) -> None:
    outputs = case.outputs or tuple(case.nodes[-1].output)
    model = make_model(case.nodes, case.inputs, outputs, case.inits, case.opset)
    feed = case.feed or {name: rand(*shape) for name, shape in case.inputs.items()}
    check(model, feed, rtol=case.rtol, atol=case.atol, op_names=case.ops)


def test_identity_output_keeps_its_name() -> None:
    """An elided Identity that is a graph output still appears under its own name."""
    model = make_model([node("Relu", "x", ["r"]), node("Identity", "r", ["out"])], X2, ["out"])
    mod = check(model, {"x": rand(4, 6)})
    assert {"x", "r", "out"} <= locs(mod)


@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "SAME_LOWER"])
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_dilated_same_pool_matches_the_spec(op: str, auto_pad: str) -> None:
    """SAME pads a dilated pool so that out = ceil(in / stride), as ONNX specifies (and ONNX shape
    inference and our Conv do); the reference is a window-by-window loop of the spec (see
    `same_pool_loops` for why not onnxruntime)."""
    kernel, strides, dilations = [2, 3], [1, 2], [2, 2]
    model = make_model([node(op, "x", kernel_shape=kernel, dilations=dilations, strides=strides, auto_pad=auto_pad)],
                       X4, ["y"], opset=19)
    x = rand(*X4["x"])
    got = run_top(convert_onnx(model, "test"), {"x": x})["y"]
    expected = same_pool_loops(x, kernel, strides, dilations, auto_pad, op == "MaxPool")
    assert got.shape == expected.shape == (2, 3, 5, 3)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("nodes,inputs,inits,message", [
    ([node("LpNormalization", "x", p=3)], X2, {}, "LpNormalization 'y': p=3 is not supported"),
    ([node("OneHot", "xdv")], {"x": [2, 3], "d": []}, {"v": np.array([0.0, 1.0], np.float32)},
     "OneHot 'y': the depth input 'd' is a graph input; only a constant one is supported"),
    ([node("Abs", "d", ["e"]), node("OneHot", "xev")], {"x": [2, 3], "d": []}, {"v": np.array([0.0, 1.0], np.float32)},
     "OneHot 'y': the depth input 'e' is computed at run time; only a constant one is supported"),
    ([node("Pad", "xpv")], X2, {"p": i64(0, 1, 0, 1), "v": np.zeros(0, np.float32)},
     "Pad 'y': constant_value 'v' has 0 elements; it must be a scalar (one element)"),
    ([node("Pad", "xpv")], X2, {"p": i64(0, 1, 0, 1), "v": np.array([2.0, 3.0], np.float32)},
     "Pad 'y': constant_value 'v' has 2 elements; it must be a scalar (one element)"),
])
def test_composite_refusals_name_what(nodes, inputs, inits, message) -> None:
    model = make_model(nodes, inputs, ["y"], inits, opset=13)
    with pytest.raises(TpudslError, match=re.escape(message)):
        convert_onnx(model, "m")


@pytest.mark.parametrize("nodes,inputs,inits,types,message", [
    ([node("ReduceMean", "xa")], {"x": [2, 3], "a": [1]}, {}, {"a": TensorProto.INT64},
     "ReduceMean 'y': the axes input 'a' is a graph input; only a constant one is supported"),
    ([node("Relu", "v", ["w"]), node("Pad", "xpw")], {"x": [2, 3], "v": []}, {"p": i64(0, 1, 0, 1)}, {},
     "Pad 'y': the constant_value input 'w' is computed at run time; only a constant one is supported"),
    ([node("GroupNormalization", "xsb", num_groups=2)], {"x": [1, 4, 3, 3], "s": [2]}, {"b": rand(2)}, {},
     "GroupNormalization 'y': the per-group scale input 's' is a graph input; only a constant one is supported"),
])
def test_run_time_value_for_a_constant_operand_is_one_line(tmp_path, nodes, inputs, inits, types, message) -> None:
    """An input a converter folds into an attribute, known only at run time: model_transform gives
    one line naming the node and the input, exit status 1, and writes nothing."""
    onnx.save(make_model(nodes, inputs, ["y"], inits, opset=18, input_types=types), tmp_path / "m.onnx")
    r = run_main("model_transform", "--model_name", "m", "--model_def", "m.onnx", "--mlir", "m.mlir", cwd=tmp_path)
    assert r.returncode == 1 and error_lines(r.stderr) == [f"error: {message}"], r.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["m.onnx"]

"""CONVERTERS: the ONNX -> Top converter of every supported ONNX op type, in one table.

A converter is `convert(node, converter) -> None`; it reads the node (frontend/onnx_node.py)
and emits Top ops with `converter.emit` (frontend/onnx_import.py). Ops that only compute
constants (Constant, Shape, ConstantOfShape, Range, ...) need no entry: they are folded before
conversion (frontend/onnx_graph.py) whenever their inputs are known."""

from __future__ import annotations

from tpudsl.frontend import ops_composite as co
from tpudsl.frontend import ops_index as ix
from tpudsl.frontend import ops_math as m
from tpudsl.frontend import ops_nn as nn
from tpudsl.frontend import ops_resize as rs
from tpudsl.frontend import ops_rnn as rnn
from tpudsl.frontend import ops_shape as sh
from tpudsl.frontend.onnx_node import Convert

CONVERTERS: dict[str, Convert] = {
    # convolution, matrix products, normalization, pooling
    "Conv": nn.conv,
    "ConvTranspose": nn.conv_transpose,
    "MatMul": nn.matmul,
    "Einsum": m.einsum,
    "Gemm": nn.gemm,
    "BatchNormalization": nn.batch_norm,
    "LayerNormalization": nn.layer_norm,
    "InstanceNormalization": nn.instance_norm,
    "RMSNormalization": nn.rms_norm,
    "GroupNormalization": nn.group_norm,
    "MaxPool": nn.max_pool,
    "AveragePool": nn.average_pool,
    "GlobalMaxPool": nn.global_pool("top.MaxPool"),
    "GlobalAveragePool": nn.global_pool("top.AvgPool"),
    "DepthToSpace": nn.depth_to_space,
    "SpaceToDepth": nn.space_to_depth,
    "PRelu": nn.prelu,
    "LRN": nn.lrn,
    # recurrent layers
    "LSTM": rnn.recurrent,
    "GRU": rnn.recurrent,
    # element-wise arithmetic
    "Add": m.binary("Add", "AddConst", commutative=True),
    "Sub": m.binary("Sub", "SubConst", commutative=False),
    "Mul": m.binary("Mul", "MulConst", commutative=True),
    "Div": m.binary("Div", "DivConst", commutative=False),
    "Min": m.variadic("Min", "MinConst"),
    "Max": m.variadic("Max", "MaxConst"),
    "Sum": m.variadic("Add", None),
    "Mean": m.mean,
    "Neg": m.neg,
    "Mod": m.mod,
    "CumSum": m.cumsum,
    "Pow": m.pow_,
    "Clip": m.clip,
    # activations and other unary functions
    "Relu": m.unary("Relu"),
    "LeakyRelu": m.unary("LeakyRelu", alpha=0.01),
    "Elu": m.unary("Elu", alpha=1.0),
    "Selu": m.selu,
    "HardSigmoid": m.unary("HardSigmoid", alpha=0.2, beta=0.5),
    "HardSwish": m.unary("HardSwish"),
    "Swish": m.swish,
    "Sigmoid": m.unary("Sigmoid"),
    "Tanh": m.unary("Tanh"),
    "Gelu": m.gelu,
    "Mish": m.unary("Mish"),
    "Softplus": m.unary("Softplus"),
    "Softsign": m.unary("Softsign"),
    "Erf": m.unary("Erf"),
    "Exp": m.unary("Exp"),
    "Log": m.unary("Log"),
    "Sqrt": m.unary("Sqrt"),
    "Reciprocal": m.unary("Reciprocal"),
    "Abs": m.unary("Abs"),
    "Sign": m.unary("Sign"),
    "Floor": m.unary("Floor"),
    "Ceil": m.unary("Ceil"),
    "Round": m.unary("Round"),
    "Sin": m.unary("Sin"),
    "Cos": m.unary("Cos"),
    "Tan": m.unary("Tan"),
    "Sinh": m.unary("Sinh"),
    "Cosh": m.unary("Cosh"),
    "Acos": m.unary("Arccos"),
    "Atanh": m.unary("Arctanh"),
    "Asin": m.unary("Arcsin"),
    "Asinh": m.unary("Arcsinh"),
    "Acosh": m.unary("Arccosh"),
    "Atan": co.atan,
    "Celu": co.celu,
    "ThresholdedRelu": co.thresholded_relu,
    "Shrink": co.shrink,
    "IsInf": co.is_inf,
    "IsNaN": co.is_nan,
    "Hardmax": co.hardmax,
    "LpNormalization": co.lp_normalization,
    "MeanVarianceNormalization": co.mean_variance_normalization,
    "OneHot": co.one_hot,
    "LpPool": co.lp_pool,
    "Cast": m.cast,
    "CastLike": m.cast,
    # comparisons and logic (booleans are 0/1 floats)
    "Equal": m.compare("Equal"),
    "Greater": m.compare("Greater"),
    "GreaterOrEqual": m.compare("GreaterOrEqual"),
    "Less": m.compare("Less"),
    "LessOrEqual": m.compare("LessOrEqual"),
    "And": m.compare("And"),
    "Xor": m.compare("Xor"),
    "Or": m.or_,
    "Not": m.not_,
    "Where": m.where,
    # reductions and softmax
    "ReduceMean": m.reduce("ReduceMean"),
    "ReduceSum": m.reduce("ReduceSum"),
    "ReduceMax": m.reduce("ReduceMax"),
    "ReduceMin": m.reduce("ReduceMin"),
    "ReduceProd": m.reduce("ReduceProd"),
    "ReduceL2": m.reduce("ReduceL2"),
    "ReduceL1": m.reduce("ReduceL1"),
    "ReduceSumSquare": m.reduce_composite,
    "ReduceLogSum": m.reduce_composite,
    "ReduceLogSumExp": m.reduce_composite,
    "ArgMax": m.arg("ArgMax"),
    "ArgMin": m.arg("ArgMin"),
    "Softmax": m.softmax,
    "LogSoftmax": m.softmax,
    # data movement
    "Identity": sh.identity,
    "Dropout": sh.identity,
    "Reshape": sh.reshape,
    "Flatten": sh.reshape,
    "Transpose": sh.transpose,
    "Squeeze": sh.squeeze,
    "Unsqueeze": sh.unsqueeze,
    "Concat": sh.concat,
    "Slice": sh.slice_,
    "Split": sh.split,
    "Pad": sh.pad,
    "Tile": sh.tile,
    "Expand": sh.expand,
    "Gather": sh.gather,
    "GatherElements": sh.gather_elements,
    "GatherND": ix.gather_nd,
    "ScatterElements": ix.scatter_elements,
    "Scatter": ix.scatter_elements,
    "ScatterND": ix.scatter_nd,
    "TopK": ix.topk,
    "Trilu": sh.trilu,
    "Resize": rs.resize,
    "Upsample": rs.resize,
    "GridSample": rs.grid_sample,
}

# Advice for ops that cannot be converted, shown with the unsupported-op error.
_RANDOM = "export the model with constant noise, e.g. noise_mode='const' (random ops cannot be compiled)"
_FOLD_ONLY = "supported only when its inputs are constants (it is folded); fix the input shapes with --input_shapes"
HINTS: dict[str, str] = {
    "RandomNormalLike": _RANDOM,
    "RandomNormal": _RANDOM,
    "RandomUniformLike": _RANDOM,
    "RandomUniform": _RANDOM,
    **{op: _FOLD_ONLY for op in ("ConstantOfShape", "Range", "NonZero", "EyeLike", "Size", "Shape")},
}

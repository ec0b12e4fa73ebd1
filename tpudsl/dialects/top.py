"""The Top dialect: framework-neutral float ops, as TPU-MLIR names them (TopOps.td).

Every op is one `OpSpec` row (see opdef.py): operands, attributes with TPU-MLIR's names and
defaults, and the shape rule. Families of ops that share a shape (unary element-wise, n-ary
broadcasting) are generated from a list of names instead of written out one by one."""

from __future__ import annotations

from xdsl.ir import Dialect

from tpudsl.dialects import shapes as S
from tpudsl.dialects.opdef import REQUIRED, A, OpSpec, define

RELU = {"do_relu": A("bool", False), "relu_limit": A("f64", -1.0)}

SPECS: list[OpSpec] = [
    OpSpec("top.None", operands=(), summary="placeholder value for an absent optional operand"),
    OpSpec("top.Weight", operands=(), summary="constant tensor stored in the weight .npz under the op's loc name"),
    OpSpec(
        "top.Input",
        operands=("input",),
        attrs={
            "do_preprocess": A("bool", False),
            "pixel_format": A("str"),
            "channel_format": A("str"),
            "resize_dims": A("i64[]"),
            "keep_aspect_ratio": A("bool"),
            "keep_ratio_mode": A("str"),
            "pad_value": A("i64"),
            "pad_type": A("str"),
            "scale": A("f64[]"),
            "mean": A("f64[]"),
        },
        shape=S.same_as_first,
    ),
    OpSpec("top.Relu", attrs={"relu_limit": A("f64", -1.0)}, shape=S.same_as_first),
]

# Unary element-wise ops without attributes of their own.
for _name in ("Exp", "Log", "Sqrt", "Rsqrt", "Abs", "Erf", "SiLU", "Tanh", "Sigmoid"):
    SPECS.append(OpSpec(f"top.{_name}", shape=S.same_as_first))

# n-ary broadcasting ops.
for _name in ("Add", "Mul", "Min", "Max"):
    SPECS.append(OpSpec(f"top.{_name}", operands=("inputs*",), attrs=dict(RELU), shape=S.broadcast_all))

OPS = [define(spec) for spec in SPECS]
Top = Dialect("top", OPS, [])

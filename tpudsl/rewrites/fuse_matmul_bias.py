"""MatMul + Add(bias) -> MatMul with a bias operand.

Add(MatMul(x, W), b), where b is a `top.Weight` of shape [n] (or [1, ..., 1, n]) and n is the
MatMul's last output dim, is MatMul(x, W, b). The fused MatMul produces the Add's tensor, so it
takes the Add's name and its fused activation. A bias that is not already 1-D is a new weight
`<name>_bias` of shape [n]; that needs the weight data."""

from __future__ import annotations

from dataclasses import dataclass

import math

from xdsl.dialects.builtin import NoneType
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter

from tpudsl.dialects.opdef import create, loc_name
from tpudsl.rewrites.pattern import PatternPass, TopPattern, attrs_of, erase_if_dead, producer, shape_of


class FuseMatMulBias(TopPattern):
    ops = ("top.Add",)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        add = attrs_of(op)
        if len(op.operands) != 2 or add.get("coeff") is not None:
            return
        for mm_value, bias_value in (op.operands, reversed(op.operands)):
            matmul = producer(mm_value, "top.MatMul")
            if matmul is not None and producer(bias_value, "top.Weight") is not None:
                break
        else:
            return
        a = attrs_of(matmul)
        out = shape_of(op.results[0])
        bias_shape = shape_of(bias_value)
        if (
            not mm_value.has_one_use() or a["do_relu"] or a["output_transpose"] or a["hdim_is_batch"]
            or not isinstance(matmul.operands[2].type, NoneType)
            or out is None or out != shape_of(mm_value) or bias_shape is None
            or bias_shape[-1:] != out[-1:] or math.prod(bias_shape) != out[-1]
        ):
            return
        bias = bias_value
        if len(bias_shape) != 1:
            data = self.env.array(bias_value)
            if data is None:
                return
            new = self.env.new_weight(f"{loc_name(op)}_bias", data.reshape(-1), bias_value.type.element_type)
            rewriter.insert(new)
            bias = new.results[0]
        fused = create(
            "top.MatMul", [matmul.operands[0], matmul.operands[1], bias], [op.results[0].type],
            {**matmul.attributes, "do_relu": add["do_relu"], "relu_limit": add["relu_limit"]}, loc=op.location,
        )
        rewriter.replace(op, fused)
        rewriter.erase(matmul)
        erase_if_dead(rewriter, [bias_value])


PATTERNS = (FuseMatMulBias,)


@dataclass(frozen=True)
class FuseMatMulBiasPass(PatternPass):
    name = "fuse-matmul-bias"
    patterns = PATTERNS

"""Binary ops with a scalar weight operand become the `*Const` op with that scalar as `const_val`.

    Mul(x, c), Mul(c, x) -> MulConst(x, c)     Add(x, c), Add(c, x) -> AddConst(x, c)
    Sub(x, c) -> AddConst(x, -c)               Sub(c, x) -> SubConst(x, c, is_reverse)
    Div(x, c) -> MulConst(x, 1/c)              Div(c, x) -> DivConst(x, c, is_reverse)

as TPU-MLIR's canonicalizer does (a multiply is cheaper than a divide on the TPU; 1/c rounds once,
so Div(x, c) changes by at most an ulp or two). `c` is a `top.Weight` with one element whose data is
known, and the result must have x's type (a scalar of higher rank would broadcast x, which a Const
op cannot express) with a float element type (integer Div truncates; x * (1/c) would not). The Const
op takes the binary op's name and fused activation.

x * x stays a Mul: Pow(x, 2) would be a transcendental kernel (exp/log) on the TPU, slower and less
exact than one multiply."""

from __future__ import annotations

from dataclasses import dataclass

import math
from collections.abc import Callable

from xdsl.dialects.builtin import AnyFloat
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter

from tpudsl.dialects.opdef import create
from tpudsl.rewrites.pattern import PatternPass, TopPattern, attrs_of, erase_if_dead

# (binary op, scalar comes first) -> (Const op, its const_val from the scalar c, extra attributes)
TO_CONST: dict[tuple[str, bool], tuple[str, Callable[[float], float], dict[str, bool]]] = {
    ("top.Mul", False): ("top.MulConst", lambda c: c, {}),
    ("top.Mul", True): ("top.MulConst", lambda c: c, {}),
    ("top.Add", False): ("top.AddConst", lambda c: c, {}),
    ("top.Add", True): ("top.AddConst", lambda c: c, {}),
    ("top.Sub", False): ("top.AddConst", lambda c: -c, {}),
    ("top.Sub", True): ("top.SubConst", lambda c: c, {"is_reverse": True}),
    ("top.Div", False): ("top.MulConst", lambda c: 1.0 / c, {}),
    ("top.Div", True): ("top.DivConst", lambda c: c, {"is_reverse": True}),
}


class ScalarWeightToConst(TopPattern):
    ops = ("top.Mul", "top.Add", "top.Sub", "top.Div")
    needs_weights = True

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        a = attrs_of(op)
        if len(op.operands) != 2 or a.get("coeff") is not None or a.get("is_reverse"):
            return
        for scalar_first, (x, c) in enumerate((op.operands, tuple(reversed(op.operands)))):
            data = self.env.array(c)
            if data is not None and data.size == 1 and x.type == op.results[0].type:
                break
        else:
            return
        if not isinstance(op.results[0].type.element_type, AnyFloat):
            return
        const_op, const_val, extra = TO_CONST[(op.name, bool(scalar_first))]
        c_value = float(data.reshape(()))
        if c_value == 0.0 and op.name == "top.Div":
            return
        value = const_val(c_value)
        if not math.isfinite(value):
            return
        const = create(const_op, [x], [op.results[0].type],
                       {"const_val": value, **extra, "do_relu": a["do_relu"], "relu_limit": a["relu_limit"]},
                       loc=op.location)
        rewriter.replace(op, const)
        erase_if_dead(rewriter, [c])


PATTERNS = (ScalarWeightToConst,)


@dataclass(frozen=True)
class ScalarToConstPass(PatternPass):
    name = "scalar-to-const"
    patterns = PATTERNS

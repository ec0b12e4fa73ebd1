"""Fuse the activations exporters spell out in ops back into one op, as TPU-MLIR's canonicalizers do.

    Mul(x, Sigmoid(x))                                   -> SiLU(x)
    Mul(x, HardSigmoid(x; alpha 1/6, beta 1/2))          -> HardSwish(x)
    x * 0.5 * (1 + erf(x / sqrt 2)), in any of the orders
      Mul(MulConst(x, 0.5), g), Mul(x, MulConst(g, 0.5)), MulConst(Mul(x, g), 0.5)
      with g = AddConst(Erf(MulConst(x, 1/sqrt 2) or DivConst(x, sqrt 2)), 1)
                                                         -> GELU(x) (approx_mode "normal")

The GELU chain is matched in the form `--scalar-to-const` leaves it (its scalar weights already
`*Const` ops), so inside `--canonicalize` it fires after that pattern. Constants are compared with
a relative tolerance of 1e-6: the exporter's float32 1/sqrt(2), or 1 / float32(sqrt 2) as
scalar-to-const computes it, are both within 1e-7 of the real one, and a different constant is a
different function. Every intermediate must have this chain as its only reader (an intermediate
read elsewhere must survive, and then fusing would compute it twice), no op of the chain may carry
a fused Relu, and every value has the result's type (no broadcasting). The fused op takes the
name of the chain's last op: the tensor users knew."""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from tpudsl.dialects.opdef import create
from tpudsl.rewrites.pattern import PatternPass, TopPattern, attrs_of, inner_link, is_float_tensor, producer

_TOLERANCE = 1e-6


def _close(value: float, target: float) -> bool:
    return math.isclose(value, target, rel_tol=_TOLERANCE)


def _gate_op(gate: Operation) -> str | None:
    """The fused op `x * gate(x)` is, or None: Sigmoid without scale, bias or log; HardSigmoid(1/6, 1/2)."""
    a = attrs_of(gate)
    if gate.name == "top.Sigmoid" and a["scale"] == 1.0 and a["bias"] == 0.0 and not a["log"]:
        return "top.SiLU"
    if gate.name == "top.HardSigmoid" and _close(a["alpha"], 1 / 6) and _close(a["beta"], 0.5):
        return "top.HardSwish"
    return None


class FuseGatedActivation(TopPattern):
    """Mul(x, Sigmoid(x)) -> SiLU(x); Mul(x, HardSigmoid(x) with alpha 1/6, beta 1/2) -> HardSwish(x)."""

    ops = ("top.Mul",)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if len(op.operands) != 2 or attrs_of(op)["do_relu"] or not is_float_tensor(op.results[0]):
            return
        out_type = op.results[0].type
        for x, gated in (op.operands, tuple(reversed(op.operands))):
            gate = gated.owner
            if (isinstance(gate, Operation) and gate.name in ("top.Sigmoid", "top.HardSigmoid")
                    and gate.operands[0] == x and x.type == out_type and inner_link(gate, out_type)):
                fused = _gate_op(gate)
                if fused is not None:
                    rewriter.replace(op, create(fused, [x], [out_type], loc=op.location))
                    rewriter.erase(gate)
                    return


def _erf_gate(value: SSAValue, out_type) -> tuple[SSAValue, list[Operation]] | None:
    """(x, the chain's ops) when `value` is 1 + erf(x / sqrt 2), each op read once, else None."""
    add_one = producer(value, "top.AddConst")
    if not inner_link(add_one, out_type) or attrs_of(add_one)["const_val"] != 1.0:
        return None
    erf = producer(add_one.operands[0], "top.Erf")
    if not inner_link(erf, out_type):
        return None
    scale = erf.operands[0].owner
    if not isinstance(scale, Operation) or not inner_link(scale, out_type):
        return None
    a = attrs_of(scale)
    if scale.name == "top.MulConst" and _close(a["const_val"], 1 / math.sqrt(2)):
        pass
    elif not (scale.name == "top.DivConst" and not a["is_reverse"] and _close(a["const_val"], math.sqrt(2))):
        return None
    return scale.operands[0], [add_one, erf, scale]


def _half(value: SSAValue, out_type) -> Operation | None:
    """The MulConst(_, 0.5) producing `value`, read once and without Relu."""
    half = producer(value, "top.MulConst")
    return half if inner_link(half, out_type) and attrs_of(half)["const_val"] == 0.5 else None


def _gelu_chain(op: Operation) -> tuple[SSAValue, list[Operation]] | None:
    """(x, the ops to erase after `op`) when `op` ends x * 0.5 * (1 + erf(x / sqrt 2))."""
    out_type = op.results[0].type
    if op.name == "top.MulConst":  # MulConst(Mul(x, g), 0.5)
        inner = producer(op.operands[0], "top.Mul")
        if attrs_of(op)["const_val"] != 0.5 or not inner_link(inner, out_type) or len(inner.operands) != 2:
            return None
        for x, g in (inner.operands, tuple(reversed(inner.operands))):
            found = _erf_gate(g, out_type)
            if found is not None and found[0] == x and x.type == out_type:
                return x, [inner, *found[1]]
        return None
    if len(op.operands) != 2:
        return None
    for a, b in (op.operands, tuple(reversed(op.operands))):
        half = _half(a, out_type)  # Mul(MulConst(x, 0.5), g)
        found = _erf_gate(b, out_type)
        if half is not None and found is not None and found[0] == half.operands[0]:
            return found[0], [half, *found[1]]
        half = _half(b, out_type)  # Mul(x, MulConst(g, 0.5))
        found = None if half is None else _erf_gate(half.operands[0], out_type)
        if found is not None and found[0] == a and a.type == out_type:
            return a, [half, *found[1]]
    return None


class FuseGelu(TopPattern):
    """x * 0.5 * (1 + erf(x / sqrt 2)) -> GELU(x), approx_mode "normal"."""

    ops = ("top.Mul", "top.MulConst")

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if attrs_of(op)["do_relu"] or not is_float_tensor(op.results[0]):
            return
        found = _gelu_chain(op)
        if found is None:
            return
        x, chain = found
        rewriter.replace(op, create("top.GELU", [x], [op.results[0].type], {"approx_mode": "normal"}, loc=op.location))
        for dead in chain:  # consumers first: each is unread once the one before is gone
            rewriter.erase(dead)


PATTERNS = (FuseGatedActivation, FuseGelu)


@dataclass(frozen=True)
class FuseActivationsPass(PatternPass):
    name = "fuse-activations"
    patterns = PATTERNS

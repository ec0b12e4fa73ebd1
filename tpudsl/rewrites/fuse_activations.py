"""Fuse the activations exporters spell out in ops back into one op, as TPU-MLIR's canonicalizers do.

    Mul(x, Sigmoid(x))                                   -> SiLU(x)
    Mul(x, HardSigmoid(x; alpha 1/6, beta 1/2))          -> HardSwish(x)
    x * c * gate(x), in any of the orders
      Mul(MulConst(x, c), g), Mul(x, MulConst(g, c)), MulConst(Mul(x, g), c), with
      any MulConst(v, c) also as DivConst(v, 1/c), and
      c = 0.5, g = AddConst(Erf(MulConst(x, 1/sqrt 2)), 1)
                                                         -> GELU(x) (approx_mode "normal")
      c = 0.5, g = AddConst(Tanh(MulConst(Add(x, MulConst(Pow(x, 3), 0.044715)), sqrt(2/pi))), 1)
                                                         -> GELU(x) (approx_mode "tanh")
      c = 1/6, g = Clip(AddConst(x, 3), 0, 6)           -> HardSwish(x)

The scaled chains are matched in the form `--scalar-to-const` leaves it (its scalar weights already
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
from typing import NamedTuple

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


class Gate(NamedTuple):
    """What x * scale * gate(x) fuses into, and the gate's ops (consumer first) to erase."""

    x: SSAValue
    ops: list[Operation]
    scale: float
    fused: str
    attrs: dict[str, str]


def _const(value: SSAValue, name: str, out_type, target: float) -> Operation | None:
    """The `name` op (a *Const) producing `value`, a chain link, with const_val close to `target`."""
    op = producer(value, name)
    return op if inner_link(op, out_type) and _close(attrs_of(op)["const_val"], target) else None


def _scaling(value: SSAValue, out_type, target: float | None = None) -> tuple[Operation, float] | None:
    """(op, c) when a chain link produces value = operand * c: MulConst(c) or DivConst(1/c) (as
    exporters and the frontend write x / 6); with `target`, only when c is close to it."""
    op = value.owner
    if not isinstance(op, Operation) or op.name not in ("top.MulConst", "top.DivConst") or not inner_link(op, out_type):
        return None
    a = attrs_of(op)
    if op.name == "top.DivConst" and (a["is_reverse"] or a["const_val"] == 0.0):
        return None
    c = a["const_val"] if op.name == "top.MulConst" else 1 / a["const_val"]
    return None if target is not None and not _close(c, target) else (op, c)


def _erf_gate(value: SSAValue, out_type) -> Gate | None:
    """1 + erf(x / sqrt 2): GELU normal, with scale 0.5."""
    add_one = _const(value, "top.AddConst", out_type, 1.0)
    erf = None if add_one is None else producer(add_one.operands[0], "top.Erf")
    scaled = _scaling(erf.operands[0], out_type, 1 / math.sqrt(2)) if inner_link(erf, out_type) else None
    if scaled is None:
        return None
    return Gate(scaled[0].operands[0], [add_one, erf, scaled[0]], 0.5, "top.GELU", {"approx_mode": "normal"})


def _tanh_gate(value: SSAValue, out_type) -> Gate | None:
    """1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)): GELU tanh, with scale 0.5."""
    add_one = _const(value, "top.AddConst", out_type, 1.0)
    tanh = None if add_one is None else producer(add_one.operands[0], "top.Tanh")
    k = None if not inner_link(tanh, out_type) else _const(tanh.operands[0], "top.MulConst", out_type, math.sqrt(2 / math.pi))
    inner = None if k is None else producer(k.operands[0], "top.Add")
    if not inner_link(inner, out_type) or len(inner.operands) != 2 or attrs_of(inner).get("coeff") is not None:
        return None
    for x, cubic in (inner.operands, tuple(reversed(inner.operands))):
        c = _const(cubic, "top.MulConst", out_type, 0.044715)
        cube = None if c is None else producer(c.operands[0], "top.Pow")
        if inner_link(cube, out_type) and attrs_of(cube)["exponent"] == 3.0 and cube.operands[0] == x:
            return Gate(x, [add_one, tanh, k, inner, c, cube], 0.5, "top.GELU", {"approx_mode": "tanh"})
    return None


def _relu6_gate(value: SSAValue, out_type) -> Gate | None:
    """clip(x + 3, 0, 6): HardSwish, with scale 1/6."""
    clip = producer(value, "top.Clip")
    if not inner_link(clip, out_type) or attrs_of(clip)["min"] != 0.0 or attrs_of(clip)["max"] != 6.0:
        return None
    add3 = _const(clip.operands[0], "top.AddConst", out_type, 3.0)
    return None if add3 is None else Gate(add3.operands[0], [clip, add3], 1 / 6, "top.HardSwish", {})


def _gate(value: SSAValue, out_type) -> Gate | None:
    for match in (_erf_gate, _tanh_gate, _relu6_gate):
        if (gate := match(value, out_type)) is not None:
            return gate
    return None


def _scaled_gate_chain(op: Operation) -> Gate | None:
    """The gate, with the ops to erase after `op`, when `op` ends x * scale * gate(x)."""
    out_type = op.results[0].type
    if op.name in ("top.MulConst", "top.DivConst"):  # MulConst(Mul(x, g), scale) or DivConst(Mul(x, g), 1/scale)
        last = _scaling(op.results[0], op.results[0].type)
        inner = producer(op.operands[0], "top.Mul")
        if last is None or not inner_link(inner, out_type) or len(inner.operands) != 2:
            return None
        for x, g in (inner.operands, tuple(reversed(inner.operands))):
            gate = _gate(g, out_type)
            if gate is not None and gate.x == x and x.type == out_type and _close(last[1], gate.scale):
                return gate._replace(ops=[inner, *gate.ops])
        return None
    if len(op.operands) != 2:
        return None
    for a, b in (op.operands, tuple(reversed(op.operands))):
        scaled = _scaling(a, out_type)  # Mul(x * scale, g)
        gate = None if scaled is None else _gate(b, out_type)
        if gate is not None and gate.x == scaled[0].operands[0] and _close(scaled[1], gate.scale):
            return gate._replace(ops=[scaled[0], *gate.ops])
        scaled = _scaling(b, out_type)  # Mul(x, g * scale)
        gate = None if scaled is None else _gate(scaled[0].operands[0], out_type)
        if gate is not None and gate.x == a and a.type == out_type and _close(scaled[1], gate.scale):
            return gate._replace(ops=[scaled[0], *gate.ops])
    return None


class FuseScaledGate(TopPattern):
    """x * 0.5 * (1 + erf(x / sqrt 2)) -> GELU normal; x * 0.5 * (1 + tanh(sqrt(2/pi) (x + 0.044715
    x^3))) -> GELU tanh; x * clip(x + 3, 0, 6) / 6 -> HardSwish; the scale on x, on the gate or last."""

    ops = ("top.Mul", "top.MulConst", "top.DivConst")

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if attrs_of(op)["do_relu"] or not is_float_tensor(op.results[0]):
            return
        gate = _scaled_gate_chain(op)
        if gate is None:
            return
        rewriter.replace(op, create(gate.fused, [gate.x], [op.results[0].type], gate.attrs, loc=op.location))
        for dead in gate.ops:  # consumers first: each is unread once the one before is gone
            rewriter.erase(dead)


PATTERNS = (FuseGatedActivation, FuseScaledGate)


@dataclass(frozen=True)
class FuseActivationsPass(PatternPass):
    name = "fuse-activations"
    patterns = PATTERNS

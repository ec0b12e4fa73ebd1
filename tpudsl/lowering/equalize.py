"""Cross-layer weight equalization (run_calibration --we), TPU-MLIR's `weight_equalization`.

For two convolutions in a row, y = W2 * f(W1 * x + b1) with f positively homogeneous
(f(s t) = s f(t) for s > 0: ReLU, LeakyRelu, PRelu, or nothing), output channel c of the first
may be divided by s_c > 0 and the second's input channel c multiplied by it without changing y:

    s_c = sqrt(r1_c / r2_c),  r1_c = max |W1[c, ...]|,  r2_c = max |W2[rows of c's group, c mod icg, ...]|

(icg: the second's input channels per group). Both ranges become sqrt(r1_c r2_c): per-tensor or
per-channel INT8 of the two filters and the activation between them loses less. A channel whose
r1 or r2 is below 1e-6 keeps s = 1 (TPU-MLIR's rule; its 0/0 gives NaN, which it maps to 1).
The pairs are taken in op order, each with the weights earlier pairs left (a chain A -> B -> C
equalizes A, B, then B, C: one sweep, as TPU-MLIR, whose loop per pair stops after the one step
that makes both ranges equal).

`PASSES_SCALE` is the table of what may stand between the two convolutions; everything else, and
each rule below, leaves the pair alone and says why (`Skipped`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from xdsl.ir import Operation

from tpudsl.dialects.opdef import SPECS, AttrView, is_none, loc_name
from tpudsl.ir.module import WEIGHT_OP, TopModule
from tpudsl.lowering.weight_rewrite import Skipped, rename, replace_weight, users, weight_array

SUFFIX = "equalized"
TINY_RANGE = 1e-6  # TPU-MLIR's: a channel range below it counts as zero


def _relu_rule(a: AttrView) -> str | None:
    limit = a["relu_limit"]
    if limit > 0:
        return f"relu_limit {limit:g} clips at a fixed value (ReLU6-like), so f(s x) != s f(x)"
    return None


def _fused_relu_rule(a: AttrView) -> str | None:
    """An op's fused activation (`do_relu`) is the rule of a Relu."""
    if a["do_relu"] and (why := _relu_rule(a)) is not None:
        return f"its fused activation: {why}"
    return None


# Op between the two convolutions -> None when f(s x) = s f(x) for every s > 0 (the scale passes
# through it), or why not. TPU-MLIR's find_successor takes Relu and PRelu; LeakyRelu is PRelu with
# one slope. The pools are tpudsl's extension (find_successor does not take them): per channel,
# max(s x) = s max(x) and avg(s x) = s avg(x) for s > 0; their pads count as -inf (max) or 0
# (avg, with or without count_include_pad the divisor is the same for s x and x), both unchanged by
# s, and the verifier refuses the pad_value and adaptive windows that would not be.
PASSES_SCALE: dict[str, Callable[[AttrView], str | None]] = {
    "top.Relu": _relu_rule,
    "top.LeakyRelu": lambda a: None,
    "top.PRelu": lambda a: None,
    "top.MaxPool": _fused_relu_rule,
    "top.AvgPool": _fused_relu_rule,
}


@dataclass(frozen=True)
class Equalized:
    first: str  # the loc names before the rewrite
    second: str
    scales: np.ndarray  # s_c, float64


def equalize_weights(mod: TopModule) -> tuple[list[Equalized], list[Skipped]]:
    """Equalize every Conv pair of `mod` in place (op order); what was done and what was skipped."""
    done: list[Equalized] = []
    skipped: list[Skipped] = []
    for first in [op for op in mod.module.walk() if op.name == "top.Conv"]:
        pair = _pair(first)
        if pair is None:
            continue
        between, second = pair
        rule = _rule(mod, first, between, second)
        if rule is not None:
            skipped.append(Skipped(loc_name(first), rule))
            continue
        done.append(_equalize(mod, first, between, second))
    return done, skipped


def _pair(first: Operation) -> tuple[Operation | None, Operation] | None:
    """(op between or None, second Conv) when `first`'s result is a Conv's input, directly or
    through one op whose other operands are constants."""
    for user, index in users(first.results[0]):
        if user.name == "top.Conv" and index == 0:
            return None, user
        if index == 0 and len(user.results) == 1 and all(
                _constant(v) for v in user.operands[1:]):
            for after, after_index in users(user.results[0]):
                if after.name == "top.Conv" and after_index == 0:
                    return user, after
    return None


def _constant(value) -> bool:
    owner = value.owner
    return isinstance(owner, Operation) and owner.name in (WEIGHT_OP, "top.None")


def _rule(mod: TopModule, first: Operation, between: Operation | None, second: Operation) -> str | None:
    """Why the pair cannot be equalized, or None."""
    if (why := _fused_relu_rule(AttrView(first.attributes, SPECS[first.name]))) is not None:
        return why
    if between is not None:
        check = PASSES_SCALE.get(between.name)
        if check is None:
            return f"{between.name} '{loc_name(between)}' between it and '{loc_name(second)}' is not in the " \
                   f"table of ops the scale passes through ({', '.join(PASSES_SCALE)})"
        if (why := check(AttrView(between.attributes, SPECS[between.name]))) is not None:
            return f"{between.name} '{loc_name(between)}': {why}"
    for op in (first, between):
        if op is not None and len(users(op.results[0])) != 1:
            return f"'{loc_name(op)}' has {len(users(op.results[0]))} users (a model output counts): " \
                   "scaling its channels would change what the others read"
    operands = [first.operands[1], second.operands[1]]
    if len(first.operands) > 2 and not is_none(first.operands[2]):
        operands.append(first.operands[2])
    for value in operands:
        if weight_array(mod, value) is None:
            return f"'{loc_name(value.owner)}' is computed at run time, not a weight"
        if not value.has_one_use():
            return f"weight '{loc_name(value.owner)}' is shared with another op"
    return None


def equalization_scales(w1: np.ndarray, w2: np.ndarray, group2: int) -> np.ndarray:
    """s_c for the first filter's output channels (module docstring), float64."""
    r1 = np.abs(w1.reshape(w1.shape[0], -1)).max(axis=1).astype(np.float64)
    icg = w2.shape[1]
    r2 = np.abs(w2.reshape(group2, w2.shape[0] // group2, icg, -1)).max(axis=(1, 3)).reshape(-1).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.sqrt(r1 / r2)
    s[(r1 < TINY_RANGE) | (r2 < TINY_RANGE) | ~np.isfinite(s)] = 1.0
    return s


def _equalize(mod: TopModule, first: Operation, between: Operation | None, second: Operation) -> Equalized:
    w1, w2 = weight_array(mod, first.operands[1]), weight_array(mod, second.operands[1])
    group2 = AttrView(second.attributes, SPECS[second.name])["group"]
    s = equalization_scales(w1, w2, group2)
    icg = w2.shape[1]
    per_out = s.reshape(-1, *([1] * (w1.ndim - 1)))
    w2_scaled = w2.reshape(group2, w2.shape[0] // group2, icg, -1) * s.reshape(group2, 1, icg, 1)
    result = Equalized(loc_name(first), loc_name(second), s)
    replace_weight(mod, first, 1, w1 / per_out, SUFFIX)
    if len(first.operands) > 2 and not is_none(first.operands[2]):
        b1 = weight_array(mod, first.operands[2])
        replace_weight(mod, first, 2, b1 / s.reshape(b1.shape), SUFFIX)
    replace_weight(mod, second, 1, w2_scaled.reshape(w2.shape), SUFFIX)
    for op in (first, between):
        if op is not None:
            rename(op, SUFFIX)
    return result

"""The noise scale of a tensor, for model validation: how large the terms were that the op which
computed it added up.

Rounding makes noise only where terms cancel, and terms cancel only where they are added: the
ReduceMean of x - mean(x) is a few units of rounding of |x|, with no sign or direction to compare.
compare.py judges a reference tensor below NOISE_ULPS x epsilon x scale by its absolute error
instead of its cosine (verdict NOISE_LEVEL). The scale is computed from the reference values of
the op's operands, by the op's row in TERM_SCALE: the largest operand for sums, the product of the
factors' largest values for sums of products. An op without a row (a product, an activation, a
copy) has no scale: its tensors are always judged by the measures, so a small real mismatch in
them cannot pass as noise.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

from tpudsl.dialects.opdef import SPECS, AttrView, result_names

# operand maxima (None for an absent optional operand) and attributes -> the largest term, or None
Rule = Callable[[Sequence[float | None], AttrView], float | None]


def _largest_summand(maxima: Sequence[float | None], attrs: AttrView) -> float | None:
    """Add and Sub: the operands (each times its coeff, when there are coeffs) are the terms."""
    coeff = attrs.get("coeff") or [1.0] * len(maxima)
    return max(abs(c) * m for c, m in zip(coeff, maxima, strict=True))


def _with_constant(maxima: Sequence[float | None], attrs: AttrView) -> float | None:
    """AddConst and SubConst: the input and the constant."""
    return max(maxima[0], abs(attrs["const_val"]))


def _summed_reduction(maxima: Sequence[float | None], attrs: AttrView) -> float | None:
    """Reduce: the elements are the terms of a mean or a sum; other modes do not add."""
    return maxima[0] if attrs["mode"] in ("ReduceMean", "ReduceSum") else None


def _sum_of_products(maxima: Sequence[float | None], attrs: AttrView) -> float | None:
    """Conv and MatMul: each term is an input times a filter (or right) value, plus the bias."""
    bias = maxima[2] if len(maxima) > 2 and maxima[2] is not None else 0.0
    return max(maxima[0] * maxima[1], bias)


TERM_SCALE: dict[str, Rule] = {
    "top.Add": _largest_summand,
    "top.Sub": _largest_summand,
    "top.AddConst": _with_constant,
    "top.SubConst": _with_constant,
    "top.Reduce": _summed_reduction,
    "top.Conv": _sum_of_products,
    "top.MatMul": _sum_of_products,
}

NO_OPERAND = "top.None"


def term_scales(func: FuncOp, *sources: Mapping[str, np.ndarray]) -> Callable[[str], float | None]:
    """`scale_of(name)` for the tensors of `func`: the term scale of the op that computes `name`,
    from operand values found in `sources` (the first that has the name: the reference run, the
    inputs, the weights), or None when the op has no row or an operand has no value there."""
    producers: dict[str, Operation] = {}
    for op in func.body.block.ops:
        if op.name in TERM_SCALE:
            producers[result_names(op)[0]] = op
    largest: dict[str, float | None] = {}

    def magnitude(name: str) -> float | None:
        if name not in largest:
            value = next((s[name] for s in sources if name in s), None)
            largest[name] = None if value is None else (float(np.max(np.abs(value))) if value.size else 0.0)
        return largest[name]

    def scale_of(name: str) -> float | None:
        op = producers.get(name)
        if op is None:
            return None
        maxima: list[float | None] = []
        for operand in op.operands:
            owner = operand.owner
            if not isinstance(owner, Operation):
                return None
            if owner.name == NO_OPERAND:
                maxima.append(None)
                continue
            m = magnitude(result_names(owner)[operand.index])
            if m is None:
                return None
            maxima.append(m)
        return TERM_SCALE[op.name](maxima, AttrView(op.attributes, SPECS[op.name]))

    return scale_of

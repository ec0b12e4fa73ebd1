"""Canonicalize Top: every rewrite family's patterns, run greedily to a fixed point.

The table is every pass the registry (tpudsl/passes.py) marks `canonical=True`, in registry order.
The order matters only among the patterns of one op name: dead-op removal first (cheapest, and
nothing else should rewrite an op nobody reads), then folding (a computed weight makes the other
patterns moot), then the families. Weight-dependent patterns (folding, Conv+BatchNorm,
scalar weights) run only when the module's weights are known (see docs/rewrites.md)."""

from __future__ import annotations

from dataclasses import dataclass

from tpudsl.passes import canonical_passes, pass_class
from tpudsl.rewrites.pattern import PatternPass

CANONICAL_PATTERNS = tuple(pattern for name in canonical_passes() for pattern in pass_class(name).patterns)


@dataclass(frozen=True)
class CanonicalizePass(PatternPass):
    name = "canonicalize"
    patterns = CANONICAL_PATTERNS

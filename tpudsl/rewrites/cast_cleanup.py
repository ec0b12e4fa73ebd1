"""Cast cleanup: drop casts that cannot change a value.

* Cast(x: A -> A) is x.
* Cast(Cast(x: A -> B) -> A) is x when every value of A is exactly representable in B (the first
  cast is exact, so the second gives x back): f16 -> f32 -> f16, bf16 -> f32 -> bf16.
  f32 -> f16 -> f32 rounds (and overflows) in the middle, so that pair stays at Top: it is the
  model's own arithmetic.
* At the Tpu level the casts are the compiler's, not the model's: tpu.Cast(tpu.Cast(x: A -> B) -> A)
  is x for any float types. A round trip through a narrower type only loses precision and range
  (the DragGAN port's F32 -> F16 -> F32 pair between two F32 ops overflowed), so removing it
  brings the value back to what the F32 ops compute: never further from it than before."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, Float64Type, TensorType
from xdsl.ir import Attribute, Operation
from xdsl.pattern_rewriter import PatternRewriter

from tpudsl.rewrites.pattern import PatternPass, TopPattern, erase_if_dead, producer, replace

# (exponent bits, mantissa bits) of the float types TPU-MLIR uses.
_FLOAT_BITS: dict[type, tuple[int, int]] = {
    Float16Type: (5, 10),
    BFloat16Type: (8, 7),
    Float32Type: (8, 23),
    Float64Type: (11, 52),
}


def holds_exactly(narrow: Attribute, wide: Attribute) -> bool:
    """Whether every value of float type `narrow` is a value of float type `wide` (False for
    types not in the table, e.g. integers: their casts round or saturate)."""
    if type(narrow) not in _FLOAT_BITS or type(wide) not in _FLOAT_BITS:
        return False
    (exp_n, man_n), (exp_w, man_w) = _FLOAT_BITS[type(narrow)], _FLOAT_BITS[type(wide)]
    return exp_w >= exp_n and man_w >= man_n


def remove_round_trip(op: Operation, rewriter: PatternRewriter, allowed: Callable[[Attribute, Attribute], bool]) -> None:
    """Cast(Cast(x: A -> B) -> A) -> x, of the same dialect's casts, when allowed(A, B)."""
    inner = producer(op.operands[0], op.name)
    if inner is None:
        return
    source, middle = inner.operands[0], op.operands[0].type
    if (source.type == op.results[0].type and isinstance(source.type, TensorType) and isinstance(middle, TensorType)
            and allowed(source.type.element_type, middle.element_type)):
        if replace(rewriter, op, [], [source]):
            erase_if_dead(rewriter, [inner.results[0]])


class RemoveNoopCast(TopPattern):
    ops = ("top.Cast", "tpu.Cast")

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if op.operands[0].type == op.results[0].type:
            replace(rewriter, op, [], [op.operands[0]])


class RemoveRoundTripCast(TopPattern):
    ops = ("top.Cast",)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        remove_round_trip(op, rewriter, holds_exactly)


class RemoveTpuCastRoundTrip(TopPattern):
    ops = ("tpu.Cast",)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        remove_round_trip(op, rewriter, lambda source, middle: type(source) in _FLOAT_BITS and type(middle) in _FLOAT_BITS)


PATTERNS = (RemoveNoopCast, RemoveRoundTripCast, RemoveTpuCastRoundTrip)


@dataclass(frozen=True)
class CastCleanupPass(PatternPass):
    name = "cast-cleanup"
    patterns = PATTERNS

"""The machinery every rewrite family shares: patterns keyed by op name, one greedy driver.

A pattern is a `TopPattern`: it names the ops it matches (`ops = ("top.Cast",)`) and implements
`match_and_rewrite(op, rewriter)` like any xDSL `RewritePattern`. `PatternTable` is the applier:
it looks up the patterns of `op.name` in a dict (so a graph of n ops costs O(n) lookups, not
O(n * patterns)), tries them in order and stops at the first that changed the IR. `apply_patterns`
runs a table to a fixed point with xDSL's `PatternRewriteWalker`.

xDSL's `GreedyRewritePatternApplier` erases every unused Pure op (`dce_enabled=True`), which would
drop unused `top.Input`s; we do not use it. Dead-op removal is an ordinary pattern
(`fold_constants.EraseDeadOp`) that knows which ops must stay.

A graph output is a name users look up (npz keys, `mlir_cut`, comparisons), so no rewrite may
change the name of a value `func.return` returns: a pattern that replaces an op's results by values
it did not create with the op's name (an operand it forwards, a weight whose name was taken)
replaces through `replace`, which declines when that would rename an output; `apply_patterns`
checks the rule after every walk.

Patterns that read weight data (folding, Conv+BatchNorm, scalar weights) get it from `RewriteEnv`.
When the module was loaded without its weight file, `RewriteEnv.weights` is None and those patterns
do not fire (see docs/rewrites.md)."""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from xdsl.context import Context
from xdsl.dialects.builtin import AnyFloat, ModuleOp, NoneType, TensorType
from xdsl.ir import Attribute, OpResult, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from tpudsl.dialects.attrs import to_attr
from tpudsl.dialects.opdef import SPECS, AttrView, create, derived_loc, loc_name, producer  # derived_loc and producer: re-exported for the patterns
from tpudsl.ir.module import top_module_of
from tpudsl.passes import PATTERN_LOG
from tpudsl.rewrites.init_deinit import require_weights

if TYPE_CHECKING:
    import numpy as np  # imported where a pattern makes an array: a run without weight data needs none


class RewriteEnv:
    """What patterns may need beyond the op: the weight arrays by loc name (None: not loaded)."""

    def __init__(self, weights: dict[str, np.ndarray] | None):
        self.weights = weights

    def array(self, value: SSAValue) -> np.ndarray | None:
        """The constant data of `value` when a `top.Weight` with known data produces it."""
        owner = value.owner
        if self.weights is None or not isinstance(owner, Operation) or owner.name != "top.Weight":
            return None
        return self.weights.get(loc_name(owner))

    def new_weight(self, name: str, array: np.ndarray, element_type: Attribute) -> Operation:
        """A `top.Weight` op (not yet inserted) holding `array` under a fresh name derived from `name`."""
        import numpy as np

        assert self.weights is not None, "only patterns with needs_weights create weights"
        unique, n = name, 0
        while unique in self.weights:
            n += 1
            unique = f"{name}_{n}"
        self.weights[unique] = np.ascontiguousarray(array)
        return create("top.Weight", [], [TensorType(element_type, array.shape)], loc=unique)


class TopPattern(RewritePattern):
    """A rewrite pattern registered with the op names it matches."""

    ops: ClassVar[tuple[str, ...]]
    needs_weights: ClassVar[bool] = False

    def __init__(self, env: RewriteEnv):
        self.env = env


class PatternTable(RewritePattern):
    """Applies the first pattern registered for `op.name` that changes the IR, and counts it."""

    def __init__(self, patterns: Iterable[TopPattern]):
        self.by_op: dict[str, list[TopPattern]] = {}
        for p in patterns:
            for name in p.ops:
                self.by_op.setdefault(name, []).append(p)
        self.fired: Counter[str] = Counter()

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        for pattern in self.by_op.get(op.name, ()):
            where = loc_name(op)  # read before the pattern may erase the op
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                self.fired[type(pattern).__name__] += 1
                PATTERN_LOG.applied(type(pattern).__name__, where)  # --debug-only=pattern-application
                return


def apply_patterns(module: ModuleOp, pattern_types: Sequence[type[TopPattern]], env: RewriteEnv) -> Counter[str]:
    """Run the patterns greedily to a fixed point; returns how often each one fired."""
    usable = [p(env) for p in pattern_types if env.weights is not None or not p.needs_weights]
    table = PatternTable(usable)
    outputs = _output_names(module)
    with _cyclic_gc_paused():
        PatternRewriteWalker(table, apply_recursively=True).rewrite_module(module)
    # A pattern that replaced a returned value without `replace` is a bug in that pattern.
    assert _output_names(module) == outputs, f"a rewrite renamed graph outputs {outputs} to {_output_names(module)}"
    return table.fired


def replace(rewriter: PatternRewriter, op: Operation, new_ops: Sequence[Operation], new_values: Sequence[SSAValue]) -> bool:
    """`rewriter.replace(op, new_ops, new_values)` unless a result of `op` that is a graph output
    would become a value of another name (say `y = x * 1` folded to `x`: the output `y` would
    disappear). Returns whether it replaced; declining leaves the IR untouched."""
    for result, value in zip(op.results, new_values, strict=True):
        if tensor_name(value) != tensor_name(result) and any(u.operation.name == "func.return" for u in result.uses):
            return False
    rewriter.replace(op, new_ops, new_values)
    return True


def tensor_name(value: SSAValue) -> str:
    """The name users know a value by: its op's loc name, `<name>_<i>` for result i > 0 (as the
    interpreter and the npz files name them); '' for a block argument."""
    if not isinstance(value, OpResult):
        return ""
    name = loc_name(value.op)
    return name if value.index == 0 else f"{name}_{value.index}"


def _output_names(module: ModuleOp) -> list[list[str]]:
    return [[tensor_name(v) for v in op.operands] for op in module.walk() if op.name == "func.return"]


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cycle collector during a walk. Every IR object sits in reference cycles
    (op <-> block, value <-> uses), so the collections a rewrite's allocations trigger scan the
    whole live module; with 16k ops that made time per op grow 1.6x (bench/canonicalize_scaling.py).
    What the walk drops is at most a few times the rewritten ops, collected when it is re-enabled."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass(frozen=True)
class PatternPass(ModulePass):
    """A pass that runs a tuple of patterns to a fixed point. A family's pass is one subclass:

        @dataclass(frozen=True)
        class CastCleanupPass(PatternPass):
            name = "cast-cleanup"
            patterns = (RemoveNoopCast, RemoveRoundTripCast)
    """

    patterns: ClassVar[tuple[type[TopPattern], ...]]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if any(p.needs_weights for p in self.patterns):
            require_weights(op, self.name)  # a weight file that init could not read is an error here
        top = top_module_of(op)
        apply_patterns(op, self.patterns, RewriteEnv(top.weights if top is not None else None))


# ----- small helpers the pattern families share -----------------------------------------------

def attrs_of(op: Operation) -> AttrView:
    """The op's attribute values with its spec's defaults."""
    return AttrView(op.attributes, SPECS[op.name])


def erase_if_dead(rewriter: PatternRewriter, values: Iterable[SSAValue]) -> None:
    """Erase the producers of `values` that a rewrite left without users (old weights, an inner
    Cast or Permute), so that each family's pass cleans up after itself without a DCE pass."""
    for value in values:
        owner = value.owner
        if isinstance(owner, Operation) and owner.name != "top.Input" and owner.parent is not None and all(
            r.first_use is None for r in owner.results
        ):
            rewriter.erase(owner)


def set_attr(op: Operation, key: str, value: object, rewriter: PatternRewriter) -> None:
    """Set attribute `key` in place (converted by the op spec's kind) and tell the rewriter."""
    op.attributes[key] = to_attr(SPECS[op.name].attrs[key].kind, value)
    rewriter.notify_op_modified(op)


def shape_of(value: SSAValue) -> tuple[int, ...] | None:
    return tuple(value.type.get_shape()) if isinstance(value.type, TensorType) else None


def is_float_tensor(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and isinstance(value.type.element_type, AnyFloat)


def inner_link(op: Operation | None, result_type: Attribute) -> bool:
    """`op` can vanish into a fused chain: it exists, has no fused Relu, produces `result_type`
    and is read only once (by the chain)."""
    return (op is not None and not attrs_of(op).get("do_relu", False) and op.results[0].type == result_type
            and op.results[0].has_one_use())


def mean_axes(op: Operation | None, rank: int) -> list[int] | None:
    """The axes of a keepdims ReduceMean, normalized and sorted; None for any other op (this and the
    next two: the norm families, fuse_layer_norm and fuse_rms_norm)."""
    if op is None or op.name != "top.Reduce":
        return None
    a = attrs_of(op)
    if a["mode"] != "ReduceMean" or not a["keepdims"]:
        return None
    return sorted(axis % rank for axis in a["axes"])


def squares(op: Operation | None, d: SSAValue) -> bool:
    """`op` is Pow(d, 2) or Mul(d, d) without a fused Relu."""
    if op is None or attrs_of(op).get("do_relu", False):
        return False
    if op.name == "top.Pow":
        return op.operands[0] == d and attrs_of(op)["exponent"] == 2.0
    return op.name == "top.Mul" and len(op.operands) == 2 and op.operands[0] == d and op.operands[1] == d


def fold_norm_parameter(op: Operation, rewriter: PatternRewriter, norm_name: str, slot: int,
                        shape: Callable[[Operation], tuple[int, ...] | None]) -> None:
    """op(norm(..., none at `slot`, ...), param), either operand order -> the norm with param at
    `slot`, under op's name: the norm read only by op, param of `shape(norm)` and of op's element
    type (LayerNorm's gamma and beta, RMSNorm's gamma)."""
    out = op.results[0].type
    for norm_value, param in (op.operands, tuple(reversed(op.operands))):
        norm = producer(norm_value, norm_name)
        if (norm is not None and inner_link(norm, out) and isinstance(norm.operands[slot].type, NoneType)
                and shape_of(param) == shape(norm) and param.type.element_type == out.element_type):
            break
    else:
        return
    operands = list(norm.operands)
    old, operands[slot] = operands[slot], param
    rewriter.replace(op, create(norm_name, operands, [out], dict(norm.attributes), loc=op.location))
    rewriter.erase(norm)
    erase_if_dead(rewriter, [old])

"""--canonicalize removes a tpu.Cast round trip F32 -> F16/BF16 -> F32 between F32 ops (the DragGAN
port's second trap), and the result is never further from the F32 computation than before.

The property builds a random F32 chain of Tpu ops (the model's F32 computation, the reference), then
puts the round trip on a random edge, with inputs scaled so that the narrow type sometimes overflows
there. It checks, element by element, that after canonicalize the outputs are at least as close to the
reference as before (here: equal to it, since the pair was the only rounding), and records how often
the round trip rounded or overflowed (each must happen in a good share of the examples).
"""

from __future__ import annotations

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import BFloat16Type, Float16Type, ModuleOp, TensorType, f32
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Region

from tests.feature_tally import FeatureTally
from tpudsl.dialects import make_context
from tpudsl.dialects.opdef import create
from tpudsl.interp import run_module
from tpudsl.passes import pass_class

NARROW = {"f16": Float16Type(), "bf16": BFloat16Type()}
UNARY = {"tpu.Relu": {}, "tpu.MulConst": {"const_val": 3.0}, "tpu.AddConst": {"const_val": -1.0}}


def build(ops: list[str], edge: int | None, narrow: str, shape: tuple[int, ...]) -> ModuleOp:
    """x -> ops[0] -> ops[1] -> ...; with `edge`, a tpu.Cast pair through `narrow` after ops[edge]."""
    block = Block(arg_types=[TensorType(f32, shape)])
    t = TensorType(f32, shape)

    def add(name, operand, result_type, loc, attrs=None):
        op = create(name, [operand], [result_type], attrs=attrs, loc=loc)
        block.add_op(op)
        return op.results[0]

    value = add("top.Input", block.args[0], t, "x")
    for i, name in enumerate(ops):
        value = add(name, value, t, f"op{i}", UNARY[name])
        if i == edge:
            value = add("tpu.Cast", add("tpu.Cast", value, TensorType(NARROW[narrow], shape), f"op{i}_{narrow}"),
                        t, f"op{i}_back")
    block.add_op(ReturnOp(add("tpu.Relu", value, t, "out")))
    return ModuleOp([FuncOp("main", ([t], [t]), Region(block))])


def run(module: ModuleOp, x: np.ndarray) -> np.ndarray:
    return run_module(module, {}, {"x": x})["out"].astype(np.float64)


# The first input element a forced example starts with (after a Relu, cast on that first edge):
# past F16's largest value, or between two F16 (and BF16) values.
FIRST = {"overflowed": 1e5, "rounded": 1 + 2.0**-12}


def test_round_trip_removal_never_moves_away_from_f32():
    """Random chains (three quarters of the examples), then an eighth where the round trip overflows
    (F16) and an eighth where it rounds (BF16), by construction (FIRST)."""
    tally = FeatureTally(("overflowed", "rounded"))

    def never_further(ops, data, narrow, scale, seed, forced):
        edge = 0 if forced else data.draw(st.integers(0, len(ops) - 1))
        shape = (2, 5)
        x = (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)
        if forced:
            ops, x[0, 0] = ["tpu.Relu", *ops], FIRST[forced]
        reference = run(build(ops, None, narrow, shape), x)
        module = build(ops, edge, narrow, shape)
        before = run(module, x)
        pass_class("canonicalize")().apply(make_context(), module)
        module.verify()
        assert sum(op.name == "tpu.Cast" for op in module.walk()) == 0, "the round trip is still there"
        after = run(module, x)
        with np.errstate(invalid="ignore"):
            err_before, err_after = np.abs(before - reference), np.abs(after - reference)
        err_before[np.isnan(err_before)] = np.inf
        assert (err_after <= err_before).all()
        np.testing.assert_array_equal(after, reference)
        overflowed = not np.isfinite(before).all()
        rounded = not overflowed and bool((before != reference).any())
        event("overflowed" if overflowed else "rounded" if rounded else "exact")
        tally.record(["overflowed"] if overflowed else ["rounded"] if rounded else [])

    examples = max(20, settings.default.max_examples // 4)
    forced_examples = -(-examples // 8)
    ops = st.lists(st.sampled_from(sorted(UNARY)), min_size=1, max_size=4)
    scales = st.sampled_from([3e5, 1.0, 1e5, 1e3])
    for forced, narrow, count in ((None, st.sampled_from(["f16", "bf16"]), examples - 2 * forced_examples),
                                  ("overflowed", st.just("f16"), forced_examples),
                                  ("rounded", st.just("bf16"), forced_examples)):  # BF16 does not overflow
        settings(max_examples=count)(given(ops, st.data(), narrow, scales, st.integers(0, 2**32 - 1),
                                           st.just(forced))(never_further))()
    tally.assert_each_in(1 / 8)

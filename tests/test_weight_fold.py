"""--weight-fold (tpudsl/rewrites/weight_fold.py) on random chains of Tpu ops over weights and the
input: every op whose operands are all weights becomes a weight (the count is computed here from
the chain), the ops that read the input stay, the outputs are bit-identical (the Tpu interpreter
before and after), the names survive, and a second run changes nothing. The Tpu patterns are
tested here, not in test_rewrites_property.py (its strategies build Top modules)."""

from __future__ import annotations

import numpy as np
from hypothesis import event, given, settings
from hypothesis import strategies as st

from tests.feature_tally import FeatureTally
from tpudsl.dialects import make_context
from tpudsl.interp import run_module
from tpudsl.ir.module import load_module
from tpudsl.passes import pass_class

T = "tensor<4xf32>"


def chain_module(d, steps: list[str], rng: np.random.Generator) -> tuple[object, int]:
    """A chain from weight w0 through `steps` (mulconst / addconst / add_w: of the chain and a new
    weight / add_x: of the chain and the input); returns the module and how many ops fold."""
    weights = {"w0": rng.standard_normal(4).astype(np.float32)}
    lines = [f'%x = "top.Input"(%arg0) : ({T}) -> {T} loc("x")', f'%v0 = "top.Weight"() : () -> {T} loc("w0")']
    foldable, const = 0, True
    for i, step in enumerate(steps, 1):
        c = float(rng.uniform(-2, 2))
        if step == "mulconst":
            lines.append(f'%v{i} = "tpu.MulConst"(%v{i - 1}) {{const_val = {c!r} : f64}} : ({T}) -> {T} loc("s{i}")')
        elif step == "addconst":
            lines.append(f'%v{i} = "tpu.AddConst"(%v{i - 1}) {{const_val = {c!r} : f64}} : ({T}) -> {T} loc("s{i}")')
        else:
            other = "%x"
            if step == "add_w":
                weights[f"w{i}"] = rng.standard_normal(4).astype(np.float32)
                lines.append(f'%w{i} = "top.Weight"() : () -> {T} loc("w{i}")')
                other = f"%w{i}"
            lines.append(f'%v{i} = "tpu.Add"(%v{i - 1}, {other}) : ({T}, {T}) -> {T} loc("s{i}")')
        const = const and step != "add_x"
        foldable += const
    n = len(steps)
    body = "\n    ".join(lines + [f"func.return %v{n} : {T}"])
    text = (f'module attributes {{module.name = "m", module.state = "TPU_LOWERED", module.chip = "bm1684x", '
            f'module.mode = "F32", module.weight_file = "m_weight.npz"}} {{\n  func.func @main(%arg0: {T}) -> {T} '
            f'{{\n    {body}\n  }}\n}}\n')
    (d / "m.mlir").write_text(text)
    np.savez(d / "m_weight.npz", **weights)
    return load_module(d / "m.mlir"), foldable


def tpu_ops(top) -> list[str]:
    return [op.name for op in top.main_func().walk() if op.name.startswith("tpu.")]


STEP = st.sampled_from(["mulconst", "addconst", "add_w", "add_x"])
# a chain that folds some ops (a weight-only first step) and keeps some (a later step reads the input)
FOLDS_AND_KEEPS = st.tuples(st.sampled_from(["mulconst", "addconst", "add_w"]), st.lists(STEP, max_size=2),
                            st.lists(STEP, max_size=2)).map(lambda t: [t[0], *t[1], "add_x", *t[2]])


def test_weight_fold_folds_exactly_the_constant_ops(tmp_path_factory):
    """Random chains (half of the examples), then chains that fold some ops and keep some: the
    floors hold by construction."""
    tally = FeatureTally(("folded some", "kept some"))

    def check(steps, seed):
        top, foldable = chain_module(tmp_path_factory.mktemp("wf"), steps, np.random.default_rng(seed))
        feed = {"x": np.random.default_rng(seed + 1).standard_normal(4).astype(np.float32)}
        before, ops_before = run_module(top.module, dict(top.weights), feed), len(tpu_ops(top))
        pass_class("weight-fold")().apply(make_context(), top.module)
        top.module.verify()
        after = run_module(top.module, top.weights, feed)
        assert list(after) == list(before) and all(np.array_equal(after[k], before[k]) for k in before)
        assert len(tpu_ops(top)) == ops_before - foldable, steps
        assert all(op.results[0].uses for op in top.main_func().walk() if op.name == "top.Weight")  # no dead weight
        text = str(top.module)
        pass_class("weight-fold")().apply(make_context(), top.module)
        assert str(top.module) == text
        event(f"{foldable} of {len(steps)} folded")
        tally.record({*(["folded some"] if foldable > 0 else []), *(["kept some"] if foldable < len(steps) else [])})

    half = settings.default.max_examples // 2
    for chains in (st.lists(STEP, min_size=1, max_size=6), FOLDS_AND_KEEPS):
        settings(max_examples=half)(given(chains, st.integers(0, 2**32 - 1))(check))()
    tally.assert_each_in(1 / 2, ["folded some"])
    tally.assert_each_in(1 / 2, ["kept some"])

"""--weight-fold (tpudsl/rewrites/weight_fold.py) on random chains of Tpu ops over weights and the
input: every op whose operands are all weights becomes a weight (the count is computed here from
the chain), the ops that read the input stay, the outputs are bit-identical (the Tpu interpreter
before and after), the names survive, and a second run changes nothing. The Tpu patterns are
tested here, not in test_rewrites_property.py (its strategies build Top modules)."""

from __future__ import annotations

import collections

import numpy as np
from hypothesis import event, given
from hypothesis import strategies as st

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


def test_weight_fold_folds_exactly_the_constant_ops(tmp_path_factory):
    seen = collections.Counter()

    @given(st.lists(st.sampled_from(["mulconst", "addconst", "add_w", "add_x"]), min_size=1, max_size=6),
           st.integers(0, 2**32 - 1))
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
        seen["folded some"] += foldable > 0
        seen["kept some"] += foldable < len(steps)
        seen["examples"] += 1
        event(f"{foldable} of {len(steps)} folded")

    check()
    assert seen["folded some"] >= seen["examples"] / 2 and seen["kept some"] >= seen["examples"] / 4, seen

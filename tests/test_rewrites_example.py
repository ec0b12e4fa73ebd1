"""The tutorial's pattern keeps values on random graphs, and the tutorial shows the repo's code."""

import re
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from strategies import top_modules
from tpudsl.dialects.opdef import create
from tpudsl.interp import ModuleInterpreter
from tpudsl.rewrites.example_mulconst_one import FoldMulConstOne
from tpudsl.rewrites.pattern import RewriteEnv, apply_patterns

ROOT = Path(__file__).resolve().parent.parent


def outputs(module, weights, inputs):
    interp = ModuleInterpreter(module, weights)
    interp.init()
    result = interp.inference(inputs)
    return [result[name] for name in interp.output_names]


@given(top_modules(max_ops=4), st.data())
def test_fold_mulconst_one_keeps_values(generated, data):
    module, weights = generated
    ret = module.body.block.ops.first.body.block.last_op
    i = data.draw(st.integers(0, len(ret.operands) - 1))
    x = ret.operands[i]  # put x * 1.0 in front of an output
    one = create("top.MulConst", [x], [x.type], {"const_val": 1.0}, loc="times_one")
    ret.parent.insert_op_before(one, ret)
    ret.operands[i] = one.results[0]
    inputs = {f"input{k}": np.random.default_rng(k).standard_normal(a.type.get_shape()).astype(np.float32)
              for k, a in enumerate(ret.parent.args)}
    before = outputs(module, weights, inputs)
    fired = apply_patterns(module, [FoldMulConstOne], RewriteEnv(weights))
    assert fired["FoldMulConstOne"] >= 1  # ours, and any the generator drew
    for b, a in zip(before, outputs(module, weights, inputs), strict=True):
        np.testing.assert_array_equal(a, b)


def test_tutorial_code_is_the_repo_code():
    """Each code block of docs/writing-a-pass.md that names a file on its first line is in that file."""
    doc = (ROOT / "docs/writing-a-pass.md").read_text()
    blocks = re.findall(r"```\w*\n(?:#|//) (\S+)\n(.*?)```", doc, re.S)
    assert len(blocks) >= 4
    for path, code in blocks:
        assert code in (ROOT / path).read_text(), f"docs/writing-a-pass.md shows code that is not in {path}"

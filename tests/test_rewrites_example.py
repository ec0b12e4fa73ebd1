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
    """The graph outputs by name."""
    interp = ModuleInterpreter(module, weights)
    interp.init()
    result = interp.inference(inputs)
    return {name: result[name] for name in interp.output_names}


@given(top_modules(max_ops=4), st.data())
def test_fold_mulconst_one_keeps_values_and_output_names(generated, data):
    """x * 1.0 goes when something reads it, and stays when it is a graph output (its name would go)."""
    module, weights = generated
    ret = module.body.block.ops.first.body.block.last_op
    i = data.draw(st.integers(0, len(ret.operands) - 1))
    returned = data.draw(st.booleans(), label="x * 1.0 is the output")
    x = ret.operands[i]
    one = create("top.MulConst", [x], [x.type], {"const_val": 1.0}, loc="times_one")
    ret.parent.insert_op_before(one, ret)
    out = one
    if not returned:
        out = create("top.MulConst", [one.results[0]], [x.type], {"const_val": 2.0}, loc="times_two")
        ret.parent.insert_op_before(out, ret)
    ret.operands[i] = out.results[0]
    inputs = {f"input{k}": np.random.default_rng(k).standard_normal(a.type.get_shape()).astype(np.float32)
              for k, a in enumerate(ret.parent.args)}
    before = outputs(module, weights, inputs)
    fired = apply_patterns(module, [FoldMulConstOne], RewriteEnv(weights))
    if returned:
        assert one.parent is not None  # still in the graph, as the output "times_one"
    else:
        assert fired["FoldMulConstOne"] >= 1 and one.parent is None  # ours, and any the generator drew
    after = outputs(module, weights, inputs)
    assert list(after) == list(before)
    for name in before:
        np.testing.assert_array_equal(after[name], before[name])


def test_tutorial_code_is_the_repo_code():
    """Each code block of docs/writing-a-pass.md that names a file on its first line is in that file."""
    doc = (ROOT / "docs/writing-a-pass.md").read_text()
    blocks = re.findall(r"```\w*\n(?:#|//) (\S+)\n(.*?)```", doc, re.S)
    assert len(blocks) >= 4
    for path, code in blocks:
        assert code in (ROOT / path).read_text(), f"docs/writing-a-pass.md shows code that is not in {path}"

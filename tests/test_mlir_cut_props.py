"""mlir_cut on random Top modules: the cut computes the chosen tensors exactly as the full
module does, given the full run's values for the new inputs, and keeps nothing dead."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.strategies import top_modules
from tpudsl.cli.mlir_cut import cut_module, named_tensors
from tpudsl.dialects.opdef import loc_name
from tpudsl.interp import ModuleInterpreter
from tpudsl.ir.module import TopModule


def run(mod, inputs, keep_all=False):
    interp = ModuleInterpreter(mod.module, mod.weights)
    interp.init()
    try:
        return interp.inference(inputs, keep_all=keep_all), interp.input_names
    finally:
        interp.deinit()


# Fewer examples than the profile's 200: each runs two interpretations on a shared 2-core machine.
@settings(max_examples=60)
@given(top_modules(max_ops=6), st.data())
def test_cut_reproduces_the_full_run(generated, data):
    module, weights = generated
    mod = TopModule(module, dict(weights))
    rng = np.random.default_rng(0)
    feeds = {f"input{i}": rng.standard_normal(a.type.get_shape()).astype(np.float32)
             for i, a in enumerate(mod.main_func().body.block.args)}
    full, _ = run(mod, feeds, keep_all=True)

    activations = [n for n, v in named_tensors(mod).items() if v.owner.name != "top.Weight"]
    outputs = data.draw(st.lists(st.sampled_from(activations), min_size=1, max_size=3, unique=True))
    cuttable = [n for n in activations if not n.startswith("input")]
    new_inputs = data.draw(st.lists(st.sampled_from(cuttable), max_size=2, unique=True)) if cuttable else []

    cut = cut_module(mod, outputs, new_inputs)
    block = cut.main_func().body.block
    assert all(op.results[0].uses for op in block.ops if op is not block.last_op)  # nothing dead
    assert set(cut.weights) == {loc_name(op) for op in cut.weight_ops()}
    # A new input replaces its producer: nothing but a top.Input computes that name any more.
    assert not [op for op in block.ops if loc_name(op) in new_inputs and op.name != "top.Input"]
    got, input_names = run(cut, {n: full[n] for n in named_inputs(cut)})
    # Inputs left: the original ones and the new ones that the outputs still need.
    assert set(input_names) <= set(new_inputs) | set(feeds)
    assert list(got) == outputs
    for name in outputs:
        np.testing.assert_array_equal(got[name], full[name])


def named_inputs(mod):
    return [loc_name(op) for op in mod.main_func().body.block.ops if op.name == "top.Input"]

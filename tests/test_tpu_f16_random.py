"""Issue 10's F16 property: random conv/pool/add/mul/activation graphs (test_tpu_int8's strategy)
lowered to F16 give outputs with cosine >= 0.9999 against the Top interpreter's F32 outputs
whenever no Top tensor leaves the F16 range (an example where one does is not counted: overflow
is test_tpu_float's and test_model_deploy's subject), and closer to Top than BF16 in most examples."""

from __future__ import annotations

import numpy as np
from hypothesis import assume, event, given, settings

from tests.feature_tally import FeatureTally
from tests.test_tpu_float import cosine, lower, run, top_module
from tests.test_tpu_int8 import random_graphs

F16_MAX = float(np.finfo(np.float16).max)


def test_random_graphs_f16_close_to_top():
    """F16 closer to Top than BF16 is what the property claims of most examples (an outcome, not a
    drawn feature: it cannot be forced)."""
    tally = FeatureTally(("F16 closer than BF16",))

    @settings(max_examples=max(10, settings.default.max_examples // 10))
    @given(random_graphs())
    def check(case):
        layers, model = case
        feed = {"input": np.random.default_rng(9).standard_normal((1, 4, 8, 8)).astype(np.float32)}
        top_all = run(top_module(model), feed, keep_all=True)
        largest = max(float(np.abs(v).max()) for v in top_all.values() if v.size and v.dtype.kind == "f")
        assume(largest < F16_MAX)
        got = run(lower(top_module(model), "F16"), feed)
        cos16 = cosine(got["output"], top_all["output"])
        assert cos16 >= 0.9999, layers
        # BF16 passes 0.9999 on these small graphs too: F16's 3 more mantissa bits must show as well
        cos_bf16 = cosine(run(lower(top_module(model), "BF16"), feed)["output"], top_all["output"])
        event("largest |x| >= 16" if largest >= 16 else "largest |x| < 16")
        tally.record(["F16 closer than BF16"] if cos16 > cos_bf16 or cos_bf16 == 1.0 else [])

    check()
    assert tally.seen["examples"] >= 10, tally.seen
    tally.assert_each_in(0.8)

"""top.MatMul's prepared kernel with a weight right operand (kernels_nn._rows_gemm: one GEMM over
all rows, shapes and the bias broadcast decided at prepare) against a float64 formula written here."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tpudsl.interp.kernel import KernelAttrs
from tpudsl.interp.table import KERNELS

from tests.feature_tally import FeatureTally, forced_runs, run_each


@st.composite
def problems(draw):
    batch = draw(st.sampled_from([[], [2], [3], [2, 3], [1, 2]]))
    m, k, n = (draw(st.integers(1, 6)) for _ in range(3))
    return dict(
        batch=batch, m=m, k=k, n=n, right_transpose=draw(st.booleans()),
        bias=draw(st.sampled_from([None, "row", "row", "full", "grows"])),
        bias_weight=draw(st.booleans()), keep_dims=draw(st.booleans()),
        # the typed input shape the prepare sees differs from the call's (a dynamic-shape module)
        typed_other=draw(st.sampled_from([False, False, False, True])), seed=draw(st.integers(0, 2**16)))


def reference(x, w, bias):
    """sum over k of x[..., m, k] w[k, n] (+ bias, broadcast), in float64."""
    y = (x.astype(np.float64)[..., :, :, None] * w.astype(np.float64)[None, :, :]).sum(axis=-2)
    return y if bias is None else y + bias.astype(np.float64)


MATMUL_FEATURES = ("batch dims", "right_transpose", "bias in place", "bias grows the result", "keep_dims false",
                   "other input shape", "weight bias")
# Runs showing their cases in every example, a tenth of the 80 each (drawn, "bias grows the result"
# fell to 3 of 80 in the dev profile): a bias that grows a batched, transposed, flattened result of
# another typed shape; a bias in place given as a weight.
MATMUL_FORCED = (
    (problems().map(lambda p: {**p, "bias": "grows", "batch": p["batch"] or [2], "keep_dims": False,
                               "typed_other": True, "right_transpose": True}),
     ("bias grows the result", "batch dims", "keep_dims false", "other input shape", "right_transpose")),
    (problems().map(lambda p: {**p, "bias": "row" if p["bias"] in (None, "grows") else p["bias"], "bias_weight": True}),
     ("bias in place", "weight bias")))


def test_prepared_matmul_matches_a_float64_formula():
    """Random batch dims, sizes, right_transpose, a bias over the columns, the whole result or one that
    broadcasts the result bigger, as a weight or computed, keep_dims false, and a call shape other than
    the typed one: the prepared kernel equals the formula (float32 tolerance). Each case in a tenth of
    the 80 examples: 64 drawn, then two runs of 8 (MATMUL_FORCED) that show their cases in every
    example."""
    tally = FeatureTally(MATMUL_FEATURES)

    def check(p, forced):
        rng = np.random.default_rng(p["seed"])
        lead, m, k, n = p["batch"], p["m"], p["k"], p["n"]
        x = rng.uniform(-1, 1, (*lead, m, k)).astype(np.float32)
        w = rng.uniform(-1, 1, (k, n)).astype(np.float32)
        bias = {None: None, "row": (n,), "full": (*lead, m, n), "grows": (2, *lead, m, n)}[p["bias"]]
        if bias is not None:
            bias = rng.uniform(-1, 1, bias).astype(np.float32)
        want = reference(x, w, bias)
        out_shape = want.shape if p["keep_dims"] or want.ndim <= 2 else (int(np.prod(want.shape[:-1])), n)
        typed, typed_bias = x.shape, None if bias is None else bias.shape
        if p["typed_other"]:  # m + 1 rows in the types
            typed = (*lead, m + 1, k)
            if bias is not None and bias.ndim >= 2:
                typed_bias = (*bias.shape[:-2], m + 1, n)
        a = KernelAttrs({"right_transpose": p["right_transpose"]}, [out_shape], in_shapes=[typed, (k, n), typed_bias])
        right = w.T.copy() if p["right_transpose"] else w
        static_bias = bias if p["bias_weight"] else None
        run = KERNELS["top.MatMul"].prepare([None, right, static_bias], a)
        got = run([x, right, bias], a)
        assert got.shape == out_shape
        np.testing.assert_allclose(got, want.reshape(out_shape), rtol=1e-5, atol=1e-5 * max(1, k))
        seen = set()
        if lead:
            seen.add("batch dims")
        if p["right_transpose"]:
            seen.add("right_transpose")
        if bias is not None and p["bias"] != "grows":
            seen.add("bias in place")
        if p["bias"] == "grows":
            seen.add("bias grows the result")
        if out_shape != want.shape:
            seen.add("keep_dims false")
        if p["typed_other"]:
            seen.add("other input shape")
        if bias is not None and p["bias_weight"]:
            seen.add("weight bias")
        assert seen.issuperset(forced), f"a forced example without {set(forced) - seen}: {p}"
        tally.record(seen)

    each = 8
    run_each(check, forced_runs(problems(), MATMUL_FORCED, 80, each))
    tally.assert_each_in(each / 80)

"""tpudsl.cli.compare against hand-computed values and separately written formulas."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from tpudsl.cli import compare as C


# Reference formulas written out element by element, independently of the numpy code under test.
def ref_cosine(a, b):
    a, b = [float(x) for x in np.ravel(a)], [float(x) for x in np.ravel(b)]
    dot = sum(x * y for x, y in zip(a, b))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def ref_euclid(a, b):
    a, b = [float(x) for x in np.ravel(a)], [float(x) for x in np.ravel(b)]
    dist = math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))
    mean_norm = math.sqrt(sum(((x + y) / 2) ** 2 for x, y in zip(a, b)))
    return 1 - dist / (mean_norm + 1e-7)


def ref_sqnr(target, reference):
    # TPU-MLIR's sqnr_similarity(target, reference): the target is the signal, target - reference the noise.
    pairs = [(float(t), float(r)) for t, r in zip(np.ravel(target), np.ravel(reference))]
    sig = [t for t, _ in pairs]
    noise = [t - r for t, r in pairs]
    ms, mn = sum(sig) / len(sig), sum(noise) / len(noise)
    return 10 * math.log10(sum((s - ms) ** 2 for s in sig) / sum((n - mn) ** 2 for n in noise))


def rng_data(shape=(2, 3, 8, 8), seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_hand_computed_metrics():
    # Orthogonal unit vectors: cos 0; ||a-b|| = sqrt2, ||(a+b)/2|| = sqrt2/2, so euclid = 1 - 2 = -1.
    a, b = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    assert C.cosine_similarity(a, b) == 0.0
    assert C.euclidean_similarity(a, b) == pytest.approx(-1.0, abs=1e-6)
    # Signal [1,2,3,4]: sum of squared deviations 5; noise +-0.1 around 0: 0.04 -> 10*log10(125).
    target = np.array([1.0, 2.0, 3.0, 4.0])
    ref = target + np.array([0.1, -0.1, 0.1, -0.1])
    assert C.sqnr_db(target, ref) == pytest.approx(10 * math.log10(125.0))


def test_zero_vectors_follow_tpu_mlir_conventions():
    z = np.zeros(4)
    assert C.cosine_similarity(z, z) == 1.0
    assert C.cosine_similarity(z, np.ones(4)) == 0.0
    assert C.sqnr_db(np.ones(4), np.ones(4)) == math.inf  # no signal variance


finite_floats = st.floats(-1e3, 1e3, allow_nan=False, width=64)


@given(arrays(np.float64, st.integers(2, 40), elements=finite_floats), st.data())
def test_metrics_match_reference_formulas(a, data):
    b = data.draw(arrays(np.float64, a.shape, elements=finite_floats))
    if np.linalg.norm(a) > 1e-3 and np.linalg.norm(b) > 1e-3:
        assert C.cosine_similarity(a, b) == pytest.approx(ref_cosine(a, b), abs=1e-9)
    assert C.euclidean_similarity(a, b) == pytest.approx(ref_euclid(a, b), rel=1e-9, abs=1e-9)
    if np.ptp(a) > 1e-3 and np.ptp(a - b) > 1e-3:
        assert C.sqnr_db(a, b) == pytest.approx(ref_sqnr(a, b), rel=1e-9, abs=1e-9)


def test_identical_is_equal():
    a = rng_data()
    r = C.compare_arrays(a, a.copy())
    assert r.verdict == C.EQUAL and r.passed and r.max_abs_error == 0.0


def test_tiny_noise_is_close():
    a = rng_data()
    b = a * (1 + 1e-6)
    r = C.compare_arrays(b, a)
    assert r.verdict == C.CLOSE and r.close_order in (5, 4)


def test_percent_noise_is_similar_not_close():
    a = rng_data()
    b = a + 0.005 * rng_data(seed=1)  # euclid about 0.995
    r = C.compare_arrays(b, a)
    assert r.verdict == C.SIMILAR
    assert r.cosine == pytest.approx(ref_cosine(b, a), abs=1e-9)
    assert r.euclid == pytest.approx(ref_euclid(b, a), abs=1e-6)
    assert r.max_abs_error == pytest.approx(float(np.max(np.abs(b.astype(np.float64) - a))), rel=1e-12)


def test_tolerance_decides_similar():
    a = rng_data()
    b = a + 0.3 * rng_data(seed=1)  # cos about 0.96, euclid about 0.7
    assert C.compare_arrays(b, a, (0.99, 0.99)).verdict == C.NOT_SIMILAR
    assert C.compare_arrays(b, a, (0.9, 0.5)).verdict == C.SIMILAR


def test_sign_flip_is_not_similar():
    a = rng_data()
    r = C.compare_arrays(-a, a)
    assert r.verdict == C.NOT_SIMILAR and not r.passed
    assert r.cosine == pytest.approx(-1.0)


def test_nan_in_one_fails_and_is_counted():
    a = rng_data()
    b = a.copy()
    b[0, 0, 0, 0] = np.nan
    r = C.compare_arrays(b, a)
    assert r.verdict == C.NOT_SIMILAR
    assert "nan: 1 vs 0" in r.notes


def test_nan_at_same_place_in_both_is_equal():
    a = rng_data()
    a[0, 1, 2, 3] = np.nan
    assert C.compare_arrays(a, a.copy()).verdict == C.EQUAL


def test_inf_of_other_sign_fails():
    a = rng_data()
    b = a.copy()
    a[0, 0, 0, 0], b[0, 0, 0, 0] = np.inf, -np.inf
    assert C.compare_arrays(a, b).verdict == C.NOT_SIMILAR
    b[0, 0, 0, 0] = np.inf
    assert C.compare_arrays(a, b).verdict == C.EQUAL


def test_shape_mismatch_reshapes_or_does_not_match():
    a = rng_data((2, 6))
    r = C.compare_arrays(a, a.reshape(3, 4))
    assert r.verdict == C.EQUAL and any("reshaped" in n for n in r.notes)
    r = C.compare_arrays(a, a[:1])
    assert r.verdict == C.NOT_MATCH and not r.passed


def test_dtype_mismatch_is_reported():
    a = np.arange(10, dtype=np.int32)
    r = C.compare_arrays(a, a.astype(np.float32))
    assert r.verdict == C.EQUAL
    assert "dtype int32 vs float32" in r.notes


def test_compare_dicts_lists_one_sided_and_excepted_names():
    a, b = rng_data(), rng_data(seed=3)
    report = C.compare_dicts({"x": a, "y": a, "t": a}, {"x": a, "y": -a, "r": a}, excepts=["y"])
    assert [r.name for r in report.results] == ["x"]
    assert report.only_in_target == ["t"] and report.only_in_reference == ["r"]
    assert report.excepted == ["y"] and report.passed
    report = C.compare_dicts({"x": a, "y": b}, {"x": a, "y": -b})
    assert not report.passed and [r.name for r in report.failed] == ["y"]
    assert report.min_similarity()[0] == pytest.approx(-1.0)


def test_nothing_in_common_fails():
    report = C.compare_dicts({"x": np.ones(2)}, {"y": np.ones(2)})
    assert not report.passed
    assert C.format_report(report)[-1] == "npz compare FAILED."


def test_report_lines():
    """TPU-MLIR's report: `[name] VERDICT [PASSED]` rows (here with shape, dtype and measures), the
    counts, min_similiarity (its spelling), the files, the verdict. Measures of y by hand: t = [1, 0],
    r = [0, 1]: cos 0; euclid 1 - sqrt2 / (sqrt2/2 + 1e-7) = -1.0000; SQNR var(t) 0.5 over var(t-r) 2."""
    t = {"same": np.arange(6, dtype=np.float32).reshape(2, 3), "near": np.float32([1, 2.00001]), "y": np.float32([1, 0])}
    r = {"same": np.arange(6, dtype=np.float32).reshape(2, 3), "near": np.float32([1, 2]), "y": np.float32([0, 1]),
         "r": np.ones(1)}
    lines = C.format_report(C.compare_dicts(t, r), files=("t.npz", "r.npz"))
    assert lines == [
        "[same                            ]        EQUAL [PASSED]  (2, 3) float32  max_abs_err 0",
        "[near                            ]        CLOSE [PASSED]  (2,) float32  close order 5  max_abs_err 1.001e-05",
        "[y                               ]  NOT_SIMILAR [FAILED]  (2,) float32  cos 0.000000 euclid -1.000000 "
        f"sqnr {10 * math.log10(0.25):.6f}  max_abs_err 1",
        "only in reference (1): r",
        "3 compared",
        "2 passed",
        "  1 equal, 1 close, 0 similar",
        "1 failed",
        "  0 not equal, 1 not similar",
        f"min_similiarity = (0.000000, -1.000000, {10 * math.log10(0.25):.6f})",
        "Target    t.npz",
        "Reference r.npz",
        "npz compare FAILED.",
    ]
    brief = C.format_report(C.compare_dicts(t, r), brief=True)
    assert [line for line in brief if line.startswith("[")] == [lines[2]]


@pytest.mark.parametrize("text", ["0.9", "a,b", "0.9,0.8,0.7", ""])
def test_bad_tolerance_is_rejected(text):
    with pytest.raises(ValueError, match="tolerance"):
        C.parse_tolerance(text)


def test_long_one_sided_lists_are_shortened_unless_verbose():
    names = {f"t{i}": np.ones(1) for i in range(20)}
    report = C.compare_dicts({"x": np.ones(1)}, {"x": np.ones(1), **names})
    short = next(line for line in C.format_report(report) if line.startswith("only in reference"))
    assert short == "only in reference (20): t0, t1, t2, t3, t4, t5, t6, t7, ... (12 more; -v lists all)"
    full = next(line for line in C.format_report(report, verbose=1) if line.startswith("only in reference"))
    assert full.endswith("t18, t19")


def test_tensors_of_several_blocks():
    """Tensors larger than a block (C.BLOCK elements): measures against whole-array float64 formulas,
    CLOSE orders against np.allclose, and a NaN or a bad value in the last block still seen."""
    n = 3 * C.BLOCK + 5
    rng = np.random.default_rng(7)
    ref = (100 + rng.standard_normal(n)).astype(np.float32)  # a large mean: SQNR's variances must not cancel
    target = (ref + 0.5 * rng.standard_normal(n)).astype(np.float32)
    r = C.compare_arrays(target, ref, (0.9, 0.9))
    t64, r64 = target.astype(np.float64), ref.astype(np.float64)
    assert r.cosine == pytest.approx(t64 @ r64 / np.linalg.norm(t64) / np.linalg.norm(r64), abs=1e-12)
    assert r.euclid == pytest.approx(1 - np.linalg.norm(t64 - r64) / (np.linalg.norm((t64 + r64) / 2) + 1e-7), abs=1e-12)
    assert r.sqnr == pytest.approx(10 * np.log10(np.var(t64) / np.var(t64 - r64)), rel=1e-9)
    assert r.max_abs_error == float(np.abs(t64 - r64).max())
    for order in (5, 4, 3):
        close = ref * np.float32(1 + 0.5 * 10.0**-order)
        want = next(k for k in (5, 4, 3) if np.allclose(close, ref, rtol=10.0**-k, atol=1e-8))
        assert C.compare_arrays(close, ref).close_order == want == order
    late = ref.copy()
    late[-1] = np.nan
    assert C.compare_arrays(late, ref).verdict == C.NOT_SIMILAR
    late[-1] = -ref[-1]  # one element of 200k: CLOSE no more, SIMILAR by the measures
    assert C.compare_arrays(late, ref).verdict == C.SIMILAR

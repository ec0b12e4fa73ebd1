"""run_calibration against independent references: TPU-MLIR's histogram and KLD written out
literally (loops, float32 as its C code), onnxruntime's MinMax and entropy calibrators on the
same ONNX model and samples, and the single-process table for --workers."""

from __future__ import annotations

import importlib.util
import logging
import math
import os
import pickle
import re
import socket
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from onnx import helper
from onnxruntime.quantization.calibrate import CalibrationDataReader, CalibrationMethod, create_calibrator

from frontend_support import make_model
from tests.feature_tally import FeatureTally
from tpudsl.cli.run_calibration import main as run_calibration
from tpudsl.frontend.onnx_import import convert_onnx
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import save_module
from tpudsl.lowering import calibration_pool
from tpudsl.lowering.calibration import merge_stats, sample_stats
from tpudsl.lowering.calibration_math import FineHistogram, fine_bins, kld_threshold, threshold
from tpudsl.lowering.calibration_table import TableEntry, as_written, parse_table, read_table, table_text

SAMPLES = 6


@pytest.fixture(scope="module")
def conv_model(tmp_path_factory):
    """Conv -> Relu -> Conv -> MaxPool -> Sigmoid, its Top module and 6 .npz samples."""
    d = tmp_path_factory.mktemp("cali")
    rng = np.random.default_rng(1)
    weights = {"w1": rng.normal(0, 0.5, (8, 3, 3, 3)).astype(np.float32), "b1": rng.normal(0, 0.1, 8).astype(np.float32),
               "w2": rng.normal(0, 0.3, (4, 8, 3, 3)).astype(np.float32)}
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("MaxPool", ["c2"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Sigmoid", ["p"], ["y"])]
    model = make_model(nodes, {"x": [1, 3, 16, 16]}, ["y"], weights)
    onnx.save(model, d / "m.onnx")
    save_module(convert_onnx(model, "m"), d / "m.mlir")
    data = d / "data"
    data.mkdir()
    feeds = []
    for i in range(SAMPLES):
        feeds.append({"x": rng.normal(0, 1, (1, 3, 16, 16)).astype(np.float32)})
        np.savez(data / f"s{i}.npz", **feeds[-1])
    return d, feeds


def calibrate_cli(d: Path, out: str, *extra: str) -> dict:
    with pytest.raises(SystemExit) as info:
        run_calibration([str(d / "m.mlir"), "--dataset", str(d / "data"), "--quiet", "-o", str(d / out), *extra])
    assert info.value.code == 0
    return read_table(str(d / out))


class _Reader(CalibrationDataReader):
    def __init__(self, feeds):
        self._feeds = iter(feeds)

    def get_next(self):
        return next(self._feeds, None)


def ort_ranges(d: Path, feeds, method, **options) -> dict[str, tuple[float, float]]:
    calibrator = create_calibrator(str(d / "m.onnx"), None, augmented_model_path=str(d / f"aug_{method.name}.onnx"),
                                   calibrate_method=method, extra_options=options)
    calibrator.collect_data(_Reader(feeds))
    return {k: (float(np.asarray(v.range_value[0]).item()), float(np.asarray(v.range_value[1]).item()))
            for k, v in calibrator.compute_data().data.items()}


# ---- the table against onnxruntime ----------------------------------------------------------------


def test_minmax_equals_onnxruntime(conv_model):
    d, feeds = conv_model
    ours = calibrate_cli(d, "minmax_table", "--method", "minmax")
    ort = ort_ranges(d, feeds, CalibrationMethod.MinMax)
    assert set(ours) == set(ort) == {"x", "c1", "r1", "c2", "p", "y"}
    for name, (lo, hi) in ort.items():
        # Exactly the input's range; computed tensors within float32 rounding of onnxruntime's
        # kernels (the table prints 7 decimals).
        tol = 0 if name == "x" else 1e-6 * max(1.0, abs(lo), abs(hi)) + 5e-8
        assert abs(ours[name].min - lo) <= tol + 5e-8 and abs(ours[name].max - hi) <= tol + 5e-8, name
        assert ours[name].threshold == pytest.approx(max(abs(lo), abs(hi)), abs=tol + 5e-8)


def test_kld_thresholds_close_to_onnxruntime_entropy(conv_model):
    """Different algorithms (docs/quantization.md): TPU-MLIR's 16 candidates on |x| vs onnxruntime's
    per-bin candidates on signed values. Both must lie in (0, abs_max]; they agree within a
    quarter of abs_max on this model."""
    d, feeds = conv_model
    ours = calibrate_cli(d, "kld_table")
    ort = ort_ranges(d, feeds, CalibrationMethod.Entropy, num_bins=512, num_quantized_bins=128, symmetric=True)
    for name, (lo, hi) in ort.items():
        abs_max = max(abs(ours[name].min), abs(ours[name].max))
        theirs = max(abs(lo), abs(hi))
        assert 0 < ours[name].threshold <= abs_max * (1 + 1 / 2047) + 1e-6
        assert abs(ours[name].threshold - theirs) <= 0.25 * abs_max, (name, ours[name].threshold, theirs, abs_max)


@pytest.fixture(scope="module")
def gemm_model(tmp_path_factory):
    """A conv whose GEMM (1024 x 144 x 16) OpenBLAS sums differently with 1 and 2 threads, its
    samples, and the single-process table."""
    d = tmp_path_factory.mktemp("gemm")
    rng = np.random.default_rng(5)
    model = make_model([helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])], {"x": [1, 16, 32, 32]}, ["y"],
                       {"w": rng.normal(0, 0.3, (16, 16, 3, 3)).astype(np.float32)})
    save_module(convert_onnx(model, "m"), d / "m.mlir")
    (d / "data").mkdir()
    for i in range(SAMPLES):
        np.savez(d / "data" / f"s{i}.npz", x=rng.normal(0, 1, (1, 16, 32, 32)).astype(np.float32))
    calibrate_cli(d, "one_table")
    one = (d / "one_table").read_text().splitlines()
    assert one[1:4] == ["# histogram number: 2048", f"# sample number: {SAMPLES}", "###"]
    return d, one


def test_workers_write_the_same_table(gemm_model):
    """The single-process run pins BLAS to one thread as the workers do, so the tables are identical."""
    d, one = gemm_model
    calibrate_cli(d, "two_table", "--workers", "2")
    assert (d / "two_table").read_text().splitlines()[1:] == one[1:]  # all but the time it was generated


def test_dask_cluster_writes_the_same_table(gemm_model, capsys):
    """Two Dask worker processes on loopback (installed by the test extra; skipped only without it);
    a bad sample met by a worker is still one line."""
    distributed = pytest.importorskip("distributed")
    d, one = gemm_model
    (d / "bad_later").mkdir()
    np.savez(d / "bad_later" / "s0.npz", x=np.zeros((1, 16, 32, 32), np.float32))
    np.savez(d / "bad_later" / "s1.npz", x=np.zeros((1, 16, 4, 4), np.float32))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        calibrate_cli(d, "dask_table", "--scheduler", cluster.scheduler_address)
        capsys.readouterr()
        with pytest.raises(SystemExit) as info:
            run_calibration([str(d / "m.mlir"), "--dataset", str(d / "bad_later"), "--scheduler", cluster.scheduler_address,
                             "--quiet", "-o", str(d / "never_table")])
        err = capsys.readouterr().err.strip()
    assert (d / "dask_table").read_text().splitlines()[1:] == one[1:]
    assert info.value.code == 1 and len(err.splitlines()) == 1, err
    assert re.match(r"^error: sample '.*bad_later/s1\.npz': test input for 'x' has shape \[1, 16, 4, 4\]", err), err
    assert not (d / "never_table").exists()


def test_scheduler_errors_are_one_line(conv_model, capsys, monkeypatch):
    d, _ = conv_model

    def fails(address: str, message: str) -> None:
        with pytest.raises(SystemExit) as info:
            run_calibration([str(d / "m.mlir"), "--dataset", str(d / "data"), "--scheduler", address, "--quiet",
                             "-o", str(d / "never_table")])
        err = capsys.readouterr().err.strip()
        assert info.value.code == 1 and len(err.splitlines()) == 1, err
        assert re.match(message, err), err
        assert not (d / "never_table").exists()

    if importlib.util.find_spec("distributed") is not None:
        import dask
        import distributed  # first: it adds its defaults to dask's config, which the set block below restores

        with socket.socket() as s:  # a loopback port nobody listens on once closed
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
            fails(f"tcp://127.0.0.1:{port}", rf"^error: cannot reach the Dask scheduler at 'tcp://127\.0\.0\.1:{port}': .+")
        # workers without tpudsl: their import of it fails (an in-process worker, whose probe is patched)
        def no_tpudsl():
            raise ModuleNotFoundError("No module named 'tpudsl'")

        monkeypatch.setattr(calibration_pool, "_probe", no_tpudsl)
        # the worker's own log of the failure would be another process's stderr on a real cluster
        monkeypatch.setattr(logging.getLogger("distributed.worker"), "disabled", True)
        with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
            fails(cluster.scheduler_address, r"^error: the Dask cluster at '.*' cannot run tpudsl's tasks \(.*No module named "
                                             r"'tpudsl'.*\): install tpudsl, the same version, on its scheduler and workers$")
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed: its import fails
    fails("tcp://127.0.0.1:1", r"^error: --scheduler needs the Dask 'distributed' package: pip install 'tpudsl\[distributed\]'$")


# ---- TPU-MLIR's histogram and KLD, written out literally ----------------------------------------------


def tpu_mlir_histogram(x: np.ndarray, abs_max: float, bins: int) -> np.ndarray:
    """BaseKldCalibrator.histogram, as TPU-MLIR writes it (float32 abs_max)."""
    t = np.abs(x.flatten())
    t = t[t != 0]
    width = np.float32(abs_max) / (bins - 1)
    hist, _ = np.histogram(np.floor(t / width + 0.5), bins=bins, range=(0, bins - 1), density=False)
    return hist


def tpu_mlir_kld(hist: np.ndarray, width: np.float32, bins: int, dst: int = 128) -> float:
    """calibration_math.cpp's kl_diversity_hist, loop by loop in float32."""
    f = np.float32
    count = int(hist.sum())
    kl = []
    for i in range(dst, bins + 1, dst):
        p = [f(0)] * i
        for j in range(bins):
            p[min(j, i - 1)] += f(hist[j])
        p = [v / f(count) for v in p]
        total = f(sum(int(hist[j]) for j in range(i)))
        expand = i // dst
        q = [f(0)] * i
        for j in range(dst):
            group = range(j * expand, (j + 1) * expand)
            s = f(sum(int(hist[k]) for k in group))
            positive = f(sum(1 for k in group if hist[k] > 0)) or f(1)
            base = s / positive / total
            for k in group:
                q[k] = base if hist[k] else f(0)
        acc = f(0)
        for k in range(i):
            acc = f(acc + float(p[k]) * (math.log10(float(p[k]) + 1e-30) - math.log10(float(q[k]) + 1e-30)))
        kl.append(acc)
    best = min(range(len(kl)), key=lambda m: (kl[m], m))
    return float(width * f((best + 1) * dst))


KINDS = ("gauss", "relu", "laplace", "outliers", "zeros")


@st.composite
def activations(draw, kind: str):
    """`kind` values (hypothesis's draws of a kind cluster when one strategy picks it: each kind has its own run)."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(1, 3000))
    x = {"gauss": rng.normal(0, 1, n), "relu": np.maximum(rng.normal(0, 1, n), 0), "laplace": rng.laplace(0, 1, n),
         "outliers": np.concatenate([rng.normal(0, 1, n), rng.normal(0, 30, 3)]), "zeros": np.zeros(n)}[kind]
    event(kind)
    return kind, x.astype(np.float32)


def fine_of(x: np.ndarray, bins: int) -> FineHistogram:
    h = FineHistogram(fine_bins(bins))
    h.add(x, float(np.abs(x).max()) if x.size else 0.0)
    return h


def test_rebinned_histogram_is_tpu_mlirs_but_at_the_edges():
    """The fine histogram rebinned to TPU-MLIR's bins against TPU-MLIR's histogram of the raw
    values: a value moves at most across the bin edge (k + 1/2) w nearest to it, and only when it
    lies within one fine width of it (fine width: the power of two above abs_max, over 64 x bins
    rounded up to a power of two, written here from the definition). So the cumulative counts
    differ at edge k by at most the number of values that close to edge k. Each kind has a fifth of
    the examples; "zeros" are equal to TPU-MLIR's in all of them, by construction, and a value
    moving a bin is an outcome (drawn, not forced)."""
    tally = FeatureTally((*KINDS, "moved", "equal"))

    def prop(case, bins):
        kind, x = case
        abs_max = float(np.abs(x).max()) or 1e-5
        h = fine_of(x, bins).coarse(abs_max, bins)
        want = tpu_mlir_histogram(x, abs_max, bins)
        assert h.zeros == int(np.sum(x == 0)) and h.counts.sum() == want.sum()
        fine_width = 2.0 ** (math.floor(math.log2(abs_max)) + 1) / 2 ** math.ceil(math.log2(64 * bins))
        w = float(np.float32(abs_max) / np.float32(bins - 1))
        v = np.abs(x[x != 0]).astype(np.float64)
        edge = np.clip(np.round(v / w - 0.5), 0, bins - 2)
        near = np.bincount(edge[np.abs(v - (edge + 0.5) * w) < fine_width].astype(np.intp), minlength=bins - 1)
        drift = np.abs(np.cumsum(h.counts - want))[:-1]
        assert np.all(drift <= near), (kind, np.nonzero(drift > near))
        moved = int(np.abs(h.counts - want).sum())
        event("some value moved a bin" if moved else "equal to TPU-MLIR's")
        tally.record({kind, "moved" if moved else "equal"})

    for kind in KINDS:
        settings(max_examples=max(1, settings.default.max_examples // len(KINDS)))(
            given(activations(kind), st.sampled_from([128, 256, 2048]))(prop))()
    tally.assert_each_in(1 / 10)


@pytest.mark.parametrize("kind", ["gauss", "relu", "laplace", "outliers"])
def test_kld_is_tpu_mlirs(kind):
    rng = np.random.default_rng(7)
    x = {"gauss": rng.normal(0, 1, 50_000), "relu": np.maximum(rng.normal(0, 1, 50_000), 0),
         "laplace": rng.laplace(0, 1, 50_000), "outliers": np.concatenate([rng.normal(0, 1, 50_000), [40.0]])}[kind]
    x = x.astype(np.float32)
    abs_max = float(np.abs(x).max())
    hist = tpu_mlir_histogram(x, abs_max, 1024)
    ours = kld_threshold(hist, abs_max)
    assert ours == tpu_mlir_kld(hist, np.float32(abs_max) / np.float32(1023), 1024)
    assert ours < abs_max or kind != "outliers"  # the outlier is clipped


def tpu_mlir_mse(array: np.ndarray, bits: int = 8) -> float:
    """cali_math.py's CaliMathCpu.threshold_mse on the raw values, as TPU-MLIR writes it."""
    unsigned = 4 if np.abs(np.min(array) - 0) < 1e-6 else 1
    abs_x = np.abs(array.flatten())
    s_n = abs_x.sum() / abs_x[abs_x > 0].size
    for _ in range(20):
        s_next = abs_x[abs_x > s_n].sum() / (1 / (4**bits) / 3 / unsigned * abs_x[abs_x <= s_n].size + abs_x[abs_x > s_n].size)
        if np.abs(s_next - s_n) < 1e-6:
            break
        s_n = s_next
    return float(s_n)


@pytest.mark.parametrize("kind", ["gauss", "relu", "laplace"])
def test_percentile_and_mse_within_a_bin_of_the_raw_values(kind):
    """Both run on the merged histogram (bin centres): the exact percentile of |x| (numpy) and
    TPU-MLIR's mse fixed point on the raw values are within one bin width of them."""
    rng = np.random.default_rng(11)
    x = {"gauss": rng.normal(0, 1, 50_000), "relu": np.maximum(rng.normal(0, 1, 50_000), 0),
         "laplace": rng.laplace(0, 1, 50_000)}[kind].astype(np.float32)
    abs_max = float(np.abs(x).max())
    width = abs_max / 2047
    h = fine_of(x, 2048).coarse(abs_max, 2048)
    assert h.zeros == int(np.sum(x == 0)) and (h.zeros > 0) == (kind == "relu")
    assert abs(threshold("percentile9999", h, float(x.min()), float(x.max())) - np.percentile(np.abs(x), 99.99)) <= width
    assert abs(threshold("mse", h, float(x.min()), float(x.max())) - tpu_mlir_mse(x)) <= width


# ---- merging ------------------------------------------------------------------------------------------


class _Activations:
    """An 'interpreter' whose tensors are the sample itself (merging is independent of the model)."""

    def inference(self, inputs, keep_all):
        return inputs


def test_any_split_of_the_samples_merges_to_the_same_statistics():
    """Samples whose ranges differ by up to 2^12, so that a share's fine range doubles several
    times and shares reach different ranges before they merge: the same statistics, bit for bit,
    as one pass over all samples in order. By construction: a twentieth of the examples in one or
    two shares, a quarter in three or four whose ranges differ (the two samples of the smallest
    range in a share of their own, the largest and the second largest in two others)."""
    tally = FeatureTally(("1 or 2 shares", "3 or 4 shares", "shares at different ranges"))
    rng = np.random.default_rng(3)
    samples = {str(i): {"a": (rng.normal(0, 1, 50) * 2.0 ** rng.integers(-6, 7)).astype(np.float32),
                        "b": (rng.laplace(0, 2, 30) * 2.0 ** rng.integers(-6, 7)).astype(np.float32),
                        "z": np.zeros(7, np.float32),
                        "r": np.maximum(rng.normal(0, 1, 40), 0).astype(np.float32) * (i % 3 > 0)}  # all 0 at times
               for i in range(8)}
    load = samples.__getitem__
    whole = sample_stats(_Activations(), load, samples, 4096)
    relu = np.concatenate([s["r"] for s in samples.values()])
    coarse = whole["r"].hist.coarse(float(relu.max()), 128)
    assert coarse.zeros == np.sum(relu == 0) and coarse.counts.sum() == np.sum(relu != 0) and coarse.counts.min() >= 0

    by_range = sorted(samples, key=lambda s: float(np.abs(samples[s]["a"]).max()))
    small, large = (float(np.abs(np.concatenate([samples[s]["a"] for s in part])).max()) for part in
                    (by_range[:2], by_range[-1:]))
    assert 2 * small <= large, "the samples' ranges no longer differ by a power of two"

    def spread(owner: list[int]) -> list[int]:
        """Three shares at least: owner 0 for the two samples of the smallest range, 1 and 2 for the
        two of the largest (the rest as drawn, from 1 to 3)."""
        fixed = {by_range[0]: 0, by_range[1]: 0, by_range[-1]: 1, by_range[-2]: 2}
        return [fixed.get(s, o) for s, o in zip(samples, owner, strict=True)]

    def prop(owner, random):
        shares = [[s for s, o in zip(samples, owner) if o == w] for w in range(4)]
        shares = [s for s in shares if s]
        for share in shares:
            random.shuffle(share)
        random.shuffle(shares)
        parts = [sample_stats(_Activations(), load, s, 4096) for s in shares]
        exps = {p["a"].hist.exp for p in parts}
        event(f"{len(shares)} shares")
        tally.record({"1 or 2 shares" if len(shares) <= 2 else "3 or 4 shares",
                      *(["shares at different ranges"] if len(exps) > 1 else [])})
        merged = merge_stats(pickle.loads(pickle.dumps(p)) for p in parts)  # as workers send them
        assert merged.keys() == whole.keys()
        for k in merged:
            m, w = merged[k], whole[k]
            assert (m.lo, m.hi, m.hist.exp, m.hist.zeros) == (w.lo, w.hi, w.hist.exp, w.hist.zeros), k
            if w.hist.exp is not None:
                np.testing.assert_array_equal(m.hist.counts, w.hist.counts)

    total = settings.default.max_examples
    for owner, share in ((st.lists(st.integers(0, 3), min_size=8, max_size=8), 0.7),
                         (st.lists(st.integers(0, 1), min_size=8, max_size=8), 0.05),
                         (st.lists(st.integers(1, 3), min_size=8, max_size=8).map(spread), 0.25)):
        settings(max_examples=max(1, int(total * share)))(given(owner, st.randoms(use_true_random=False))(prop))()
    tally.assert_each_in(1 / 40, ["1 or 2 shares"])
    tally.assert_each_in(1 / 4, ["3 or 4 shares", "shares at different ranges"])


def test_counts_widen_to_uint64_before_uint32_would_wrap():
    h = FineHistogram(256, exp=0, counts=np.zeros(256, np.uint32), total=2**32 - 3, peak=2**32 - 3)
    h.counts[5] = 2**32 - 3
    h.add(np.full(4, 0.75, np.float32), 0.75)
    assert h.counts.dtype == np.uint64 and h.counts[5] == 2**32 - 3 and h.counts[192] == 4 and h.total == 2**32 + 1
    back = pickle.loads(pickle.dumps(h))  # held again in the narrowest type for the largest count
    assert back.counts.dtype == np.uint32 and np.array_equal(back.counts, h.counts) and back.peak == 2**32 - 3


def test_counts_start_in_uint8_and_widen_exactly():
    """255 values in one bin fit uint8; the 256th widens the array first (no wrap); a fold that sums
    bins beyond 255 holds the sums, and a merge of two uint8 halves too."""
    h = FineHistogram(256)
    h.add(np.full(255, 0.5, np.float32), 0.5)
    assert h.counts.dtype == np.uint8 and h.counts[128] == 255
    h.add(np.array([0.5, 0.25], np.float32), 0.5)
    assert h.counts.dtype == np.uint16 and h.counts[128] == 256 and h.counts[64] == 1
    g = FineHistogram(256)
    g.add(np.full(200, 0.5, np.float32), 0.5)
    g.add(np.full(200, 0.75, np.float32), 0.75)  # same exp: bins 128 and 192
    g.add(np.array([1.5], np.float32), 1.5)  # exp grows by 1: bins 64 and 96 of the folded, 192 the new
    assert g.counts.dtype == np.uint8 and (g.counts[64], g.counts[96], g.counts[192]) == (200, 200, 1)
    g.add(np.array([3.9], np.float32), 3.9)  # exp + 1: 0.5 and 0.75 fold into bins 32 and 48
    merged = g.merge(g)
    assert merged.counts.dtype == np.uint16 and (merged.counts[32], merged.counts[48]) == (400, 400)
    assert merged.total == 2 * g.total == 2 * 402


def test_nan_activation_is_an_error_naming_it():
    with pytest.raises(TpudslError, match=r"^error: sample '0': tensor 'a' has NaN values"):
        sample_stats(_Activations(), {"0": {"a": np.array([1.0, np.nan], np.float32)}}.__getitem__, ["0"], 4096)


F32_MAX = float(np.finfo(np.float32).max)


def test_inf_counts_as_the_largest_float32_and_a_mask_gets_a_finite_threshold():
    """GPT-2's masks: finfo(float32).min, and -inf where two of them add up. +-inf is counted as
    +-float32's largest (the same statistics as that array written out), and every method's
    threshold of such a tensor is finite (the KLD product near float32's largest overflowed to inf)."""
    lo = np.float32(np.finfo(np.float32).min)
    mask = np.array([0.0, 3.0, -2.0, lo, -np.inf, np.inf, 0.5], np.float32)
    written = np.array([0.0, 3.0, -2.0, lo, lo, -lo, 0.5], np.float32)
    got = sample_stats(_Activations(), {"0": {"a": mask}}.__getitem__, ["0"], 4096)["a"]
    want = sample_stats(_Activations(), {"0": {"a": written}}.__getitem__, ["0"], 4096)["a"]
    assert (got.lo, got.hi) == (want.lo, want.hi) == (-F32_MAX, F32_MAX)
    assert got.hist.exp == want.hist.exp and np.array_equal(got.hist.counts, want.hist.counts)
    coarse = got.hist.coarse(F32_MAX, 2048)
    for method in ("kld", "minmax", "percentile9999", "mse"):
        th = threshold(method, coarse, got.lo, got.hi)
        assert math.isfinite(th) and 0 < th <= F32_MAX, (method, th)
    # BERT's extended mask: 0 where attended, finfo.min where not: all nonzero values in the last bin
    bert = np.array([0.0] * 11 + [lo] * 5, np.float32)
    h = sample_stats(_Activations(), {"0": {"m": bert}}.__getitem__, ["0"], 4096)["m"]
    assert math.isfinite(threshold("kld", h.hist.coarse(F32_MAX, 2048), h.lo, h.hi))


# ---- the table reader -----------------------------------------------------------------------------------

HEADER = "# genetated time: x\n# histogram number: 2048\n# sample number: 1\n###\n# op_name    threshold    min    max\n"


@pytest.mark.parametrize("body, message", [
    ("a 1.0 -1.0\n", r"t:6:1: error: expected 'op_name threshold min max', found 3 field\(s\)"),
    ("a 1.0 -1.0 x\n", r"t:6:3: error: threshold, min and max of 'a' must be numbers"),
    ("a 1.0 -1.0 1.0\nb 1 0 1\na 2.0 -1.0 1.0\n", r"t:8:1: error: 'a' appears twice \(first on line 6\)"),
    ("a 0.0 -1.0 1.0\n", r"t:6:3: error: threshold of 'a' must be positive"),
    ("a 1.0 2.0 1.0\n", r"t:6:7: error: min of 'a' is above its max"),
    ("a 1.0 -1.0 nan\n", r"t:6:3: error: threshold, min and max of 'a' must be finite"),
    ("zz 1.0 -1.0 1.0\n", r"t:6:1: error: 'zz' is not a tensor of the module"),
    ("a 1.0 -1.0 1.0\n#int4_th\na 2.0 -1.0 1.0\n", r"t:7:1: error: TPU-MLIR's '#int4_th' table section is not supported"),
])
def test_reader_rejects_malformed_lines(body, message):
    with pytest.raises(TpudslError, match="^" + message):
        parse_table(HEADER + body, "t", tensor_names={"a", "b"})


def test_table_is_written_in_tpu_mlirs_format(conv_model):
    d, _ = conv_model
    table = calibrate_cli(d, "format_table", "--method", "minmax")
    lines = (d / "format_table").read_text().splitlines()
    assert lines[0].startswith("# genetated time: ")  # TPU-MLIR's spelling
    assert lines[1:5] == ["# histogram number: 2048", f"# sample number: {SAMPLES}", "###", "# op_name    threshold    min    max"]
    assert [line.split()[0] for line in lines[5:]] == ["x", "c1", "r1", "c2", "p", "y"]  # op order
    for line, (name, e) in zip(lines[5:], table.items(), strict=True):
        assert line == "{} {:.7f} {:.7f} {:.7f}".format(name, e.threshold, e.min, e.max)



@st.composite
def table_entries(draw) -> dict[str, TableEntry]:
    """Up to 4 entries whose thresholds have digits below the table's 7 decimals (up to 1e6, where
    those digits survive in float64), min and max of any float32 size."""
    entries = {}
    for i in range(draw(st.integers(1, 4))):
        threshold = draw(st.integers(1, 10**13)) / 1e7 + draw(st.floats(1e-9, 4e-8))
        lo, hi = sorted(draw(st.floats(-3.4e38, 3.4e38)) for _ in range(2))
        entries[f"t{i}"] = TableEntry(threshold, lo, hi)
    return entries


def test_entries_as_written_are_what_the_reader_reads_from_the_written_table():
    """as_written (the thresholds run_qtable's and run_sensitive_layer's searches score) against
    the reader on the writer's text: what model_deploy reads from the table they write."""
    tally = FeatureTally(("threshold rounded",))

    @given(table_entries())
    def prop(entries):
        written = as_written(entries)
        assert written == parse_table(table_text(entries, 2048, 1), "t")
        tally.record({"threshold rounded"} if any(written[n].threshold != e.threshold for n, e in entries.items())
                     else set())

    prop()
    tally.assert_each_in(1)

# ---- bad input: one line, exit 1, no table --------------------------------------------------------------


@pytest.mark.parametrize("make_args, message", [
    (lambda d: ["--dataset", str(d / "nowhere")], r"^error: --dataset '.*nowhere' is not a directory$"),
    (lambda d: ["--data_list", str(d / "list_missing")], r"^error: .*list_missing: sample 2: cannot open '.*gone\.npz': No such file$"),
    (lambda d: ["--dataset", str(d / "bad_shape")], r"^error: sample '.*bad_shape/s\.npz': test input for 'x' has shape \[1, 3, 4, 4\], the model input has \[1, 3, 16, 16\]$"),
    # met by a worker process, after the first sample was checked
    (lambda d: ["--dataset", str(d / "bad_later"), "--workers", "2"], r"^error: sample '.*bad_later/s1\.npz': test input for 'x' has shape \[1, 3, 4, 4\]"),
    (lambda d: ["--dataset", str(d / "data"), "--histogram_bin_num", "64"], r"^error: --histogram_bin_num must be at least 128"),
    (lambda d: ["--dataset", str(d / "data"), "--method", "best"], r"^error: argument --method: invalid choice: 'best'"),
])
def test_bad_input_is_one_line(conv_model, capsys, make_args, message):
    d, _ = conv_model
    (d / "bad_shape").mkdir(exist_ok=True)
    np.savez(d / "bad_shape" / "s.npz", x=np.zeros((1, 3, 4, 4), np.float32))
    (d / "bad_later").mkdir(exist_ok=True)
    np.savez(d / "bad_later" / "s0.npz", x=np.zeros((1, 3, 16, 16), np.float32))
    np.savez(d / "bad_later" / "s1.npz", x=np.zeros((1, 3, 4, 4), np.float32))
    (d / "list_missing").write_text(f"{d / 'data' / 's0.npz'}\n{d / 'gone.npz'}\n")
    with pytest.raises(SystemExit) as info:
        run_calibration([str(d / "m.mlir"), *make_args(d), "--quiet", "-o", str(d / "never_table")])
    err = capsys.readouterr().err.strip()
    assert info.value.code == 1 and len(err.splitlines()) == 1
    assert re.match(message, err), err
    assert not (d / "never_table").exists()


# ---- sample forms ------------------------------------------------------------------------------------------


def test_data_list_of_npy_files_gives_the_dataset_table_and_a_progress_bar(conv_model, capsys):
    d, feeds = conv_model
    lines = []
    for i, feed in enumerate(feeds):
        np.save(d / f"x{i}.npy", feed["x"])
        lines.append(str(d / f"x{i}.npy"))
    (d / "npy_list").write_text("\n".join(lines) + "\n")
    calibrate_cli(d, "dataset_table", "--method", "minmax")
    with pytest.raises(SystemExit) as info:
        run_calibration([str(d / "m.mlir"), "--data_list", str(d / "npy_list"), "--method", "minmax", "-o", str(d / "list_table")])
    assert info.value.code == 0
    assert "100%" in capsys.readouterr().err  # tqdm's bar on stderr without --quiet
    assert (d / "list_table").read_text().splitlines()[1:] == (d / "dataset_table").read_text().splitlines()[1:]


def test_images_use_the_preprocessing_recorded_on_the_input(tmp_path):
    """A flat RGB image (100, 150, 200) with mean 10,20,30 and scale 0.5 is x = 45, 65, 85."""
    from PIL import Image

    from tpudsl.frontend.preprocess import Preprocess

    model = make_model([helper.make_node("Relu", ["x"], ["y"])], {"x": [1, 3, 8, 8]}, ["y"])
    pre = Preprocess(mean=(10.0, 20.0, 30.0), scale=(0.5,), pixel_format="rgb")
    save_module(convert_onnx(model, "m", preprocess=pre), tmp_path / "m.mlir")
    (tmp_path / "data").mkdir()
    Image.new("RGB", (12, 10), (100, 150, 200)).save(tmp_path / "data" / "a.png")
    table = calibrate_cli(tmp_path, "image_table", "--method", "minmax")
    assert (table["x"].min, table["x"].max) == (45.0, 85.0)


# ---- local worker processes ------------------------------------------------------------------------------


def _fold_or_die(job, acc, item):
    if item == job:
        os._exit(3)
    return (acc or 0) + item


def test_local_workers_fold_every_item_once_and_a_dead_worker_is_an_error():
    ticks = []
    parts = calibration_pool.local_fold(2, _fold_or_die, -1, list(range(1, 41)), ticks.append)
    assert sum(p for p in parts if p is not None) == 820 and len(parts) == 2 and ticks == [1] * 40
    with pytest.raises(TpudslError, match=r"^error: a calibration worker process died \(exit code 3\)$"):
        calibration_pool.local_fold(2, _fold_or_die, 7, list(range(1, 41)), None)


class _Unpicklable(Exception):
    def __reduce__(self):
        raise TypeError("cannot pickle this")


def _fold_unpicklable(job, acc, item):
    raise _Unpicklable("x")


def test_a_worker_result_that_cannot_be_sent_is_an_error_not_a_hang():
    """(The worker's queue thread prints the pickling error on the worker's stderr.)"""
    with pytest.raises(TpudslError, match=r"^error: a calibration worker process ended without sending its result$"):
        calibration_pool.local_fold(1, _fold_unpicklable, None, [1], None)

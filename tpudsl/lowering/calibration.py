"""Calibration: run the Top interpreter over sample inputs and compute a threshold per tensor.

One interpreter run per sample. Per tensor it collects min, max and a `FineHistogram` of |x|
(calibration_math.py: exact counts over a power-of-two range that doubles as larger values come,
64x finer than the table's histogram), all of them mergeable exactly and in any order, so that N
processes (local, or the workers of a Dask cluster: calibration_pool.py) can share the samples and
the table is the same as one process's. At the end each fine histogram is rebinned to TPU-MLIR's
histogram over the final abs_max, and calibration_math turns it into a threshold.

`load_sample(spec) -> {input name: array}` turns one sample (an entry of the list) into model
inputs; the command (cli/run_calibration.py) supplies it. It must be picklable for workers > 1
and a scheduler.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

from tpudsl.dialects.opdef import result_names
from tpudsl.interp import ModuleInterpreter
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import TopModule, load_module
from tpudsl.lowering.calibration_math import (ALL_ZERO_RANGE, FLOAT32_MAX, AbsHistogram, FineHistogram, fine_bins,
                                              threshold)
from tpudsl.lowering.calibration_pool import Pool, dask_pool, local_fold
from tpudsl.lowering.calibration_table import TableEntry

Ranges = dict[str, tuple[float, float]]
Histograms = dict[str, AbsHistogram]
LoadSample = Callable[[str], dict[str, np.ndarray]]


@dataclass
class TensorStats:
    lo: float
    hi: float
    hist: FineHistogram | None  # None: minmax only
    # max |x| per index of the last axis (SmoothQuant's channels), for the tensors asked for
    channel_max: np.ndarray | None = None
    # the tensor itself on every sample, for the tensors asked for (SmoothQuant's search)
    kept: list[np.ndarray] = field(default_factory=list)

    def merge(self, other: TensorStats) -> TensorStats:
        return TensorStats(min(self.lo, other.lo), max(self.hi, other.hi),
                           self.hist.merge(other.hist) if self.hist is not None else None,
                           _maximum(self.channel_max, other.channel_max), self.kept + other.kept)


Stats = dict[str, TensorStats]


def _maximum(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    return b if a is None else a if b is None else np.maximum(a, b)


@dataclass
class CalibrationResult:
    ranges: Ranges  # after the all-zero rule
    histograms: Histograms  # TPU-MLIR's, over each tensor's final abs_max
    order: list[str]  # tensor names in module order
    channel_max: dict[str, np.ndarray] = field(default_factory=dict)  # of the `channels` asked for
    kept: dict[str, list[np.ndarray]] = field(default_factory=dict)  # of the tensors asked to `keep`

    def table(self, method: str) -> dict[str, TableEntry]:
        entries = {}
        for name in self.order:
            lo, hi = self.ranges[name]
            entries[name] = TableEntry(threshold(method, self.histograms.get(name), lo, hi), lo, hi)
        return entries


# ---- one interpreter run per sample ----------------------------------------------------------------


def sample_stats(interp: ModuleInterpreter, load_sample: LoadSample, samples: Iterable[str],
                 fine: int | None, stats: Stats | None = None, channels: Collection[str] = (),
                 keep: Collection[str] = ()) -> Stats:
    """Adds the tensors of each sample's run to `stats` (a new dict when None); `fine` histogram
    bins per tensor, None for min and max only; for the tensors named in `channels` also the
    maximum of |x| per index of the last axis, and a copy of those named in `keep`."""
    stats = {} if stats is None else stats
    for sample in samples:
        for name, x in interp.inference(load_sample(sample), keep_all=True).items():
            x = np.asarray(x, dtype=np.float32)
            if x.size == 0:
                continue
            lo, hi = float(x.min()), float(x.max())
            if np.isnan(lo) or np.isnan(hi):  # min/max propagate NaN
                raise TpudslError(f"sample '{sample}': tensor '{name}' has NaN values; "
                                  "calibration needs numbers")
            if np.isinf(lo) or np.isinf(hi):
                x, lo, hi = saturated(x), max(lo, -FLOAT32_MAX), min(hi, FLOAT32_MAX)
            s = stats.get(name)
            if s is None:
                s = stats[name] = TensorStats(lo, hi, FineHistogram(fine) if fine else None)
            else:
                s.lo, s.hi = min(s.lo, lo), max(s.hi, hi)
            if s.hist is not None:
                s.hist.add(x, max(-lo, hi))
            if name in channels:
                m = np.abs(x.reshape(-1, x.shape[-1])).max(axis=0)
                s.channel_max = _maximum(s.channel_max, m)
            if name in keep:
                s.kept.append(x.copy())
    return stats


def saturated(x: np.ndarray) -> np.ndarray:
    """`x` with +-inf as +-the largest float32. An attention mask filled with finfo(float32).min
    and added to another one overflows to -inf (GPT-2's causal and padding masks); any int8 scale
    saturates both alike, so the table keeps finite numbers (docs/quantization.md)."""
    return np.clip(x, -FLOAT32_MAX, FLOAT32_MAX)


def merge_stats(parts: Iterable[Stats]) -> Stats:
    merged: Stats = {}
    for part in parts:
        for name, s in part.items():
            merged[name] = merged[name].merge(s) if name in merged else s
    return merged


def nonzero_ranges(ranges: Ranges) -> Ranges:
    """TPU-MLIR's rule: a tensor that was zero on every sample gets [-1e-5, 1e-5]."""
    return {n: (lo, hi) if max(abs(lo), abs(hi)) > 0 else (-ALL_ZERO_RANGE, ALL_ZERO_RANGE) for n, (lo, hi) in ranges.items()}


def result_of(stats: Stats, order: Sequence[str], bins: int) -> CalibrationResult:
    ranges = nonzero_ranges({n: (s.lo, s.hi) for n, s in stats.items()})
    hists = {n: s.hist.coarse(max(-ranges[n][0], ranges[n][1]), bins) for n, s in stats.items() if s.hist is not None}
    maxima = {n: s.channel_max for n, s in stats.items() if s.channel_max is not None}
    return CalibrationResult(ranges, hists, [n for n in order if n in ranges], maxima,
                             {n: s.kept for n, s in stats.items() if s.kept})


# ---- drivers -------------------------------------------------------------------------------------


def calibrate(mlir: str, samples: Sequence[str], load_sample: LoadSample, bins: int = 2048,
              workers: int = 1, progress: Callable[[int], None] | None = None,
              need_histograms: bool = True, mod: TopModule | None = None,
              scheduler: str | None = None, channels: Collection[str] = (),
              keep: Collection[str] = ()) -> CalibrationResult:
    """Statistics of every tensor of `mlir` (`mod`, when already loaded) over `samples`, the
    per-channel maxima of the tensors named in `channels` and every sample's value of those named
    in `keep` (in no particular order over workers); `progress(n)` after each n samples. With workers > 1 the samples are split over that many
    local processes, with `scheduler` (a Dask address) over that cluster's workers, which load
    `mlir` (a path they must see, as the samples)."""
    mod = mod or load_module(mlir)
    order = tensor_names(mod.module)
    job = _Job(mlir, load_sample, uuid.uuid4().hex, fine_bins(bins) if need_histograms else None,
               frozenset(channels), frozenset(keep))
    if scheduler is not None:
        with dask_pool(scheduler) as pool:
            return result_of(_pooled(pool, job, _shares(samples, pool.slots), progress), order, bins)
    # One BLAS thread here too: the thread count changes the summation order of float32 GEMMs,
    # and with it the last digits of the table (measured on a ResNet-18), so N workers could not
    # reproduce this table otherwise.
    with threadpool_limits(limits=1):
        interp = _interpreter(mod)
        if workers <= 1:
            stats: Stats = {}
            for sample in samples:
                sample_stats(interp, load_sample, [sample], job.fine, stats, job.channels, job.keep)
                if progress:
                    progress(1)
            return result_of(stats, order, bins)
        # Forked workers inherit this interpreter, initialised: no module load or init in them.
        _INHERITED[job.run] = interp
        try:
            parts = local_fold(workers, _fold_sample, job, samples, progress)
        finally:
            del _INHERITED[job.run]
        return result_of(merge_stats(p for p in parts if p is not None), order, bins)


def _shares(samples: Sequence[str], workers: int) -> list[list[str]]:
    """Round-robin shares for a Dask cluster, a few per worker so that the progress bar moves and a
    worker slowed by another job leaves its last shares to the others (merging is order-free)."""
    count = min(len(samples), workers * 4) or 1
    return [list(samples[i::count]) for i in range(count)]


def _pooled(pool: Pool, job: _Job, shares: list[list[str]], progress) -> Stats:
    futures = {pool.submit(_worker_stats, job, share): len(share) for share in shares}
    merged: Stats = {}
    for future in pool.completed(futures):
        merged = merge_stats([merged, future.result()])
        if progress:
            progress(futures[future])
    return merged


def _interpreter(mod: TopModule) -> ModuleInterpreter:
    interp = ModuleInterpreter(mod.module, mod.weights)
    interp.init()
    return interp


def tensor_names(module) -> list[str]:
    """The names of the tensors calibration measures, in op order (TPU-MLIR's table order):
    every result of @main's ops but weights and `none`."""
    names: list[str] = []
    for op in module.walk():
        if op.name.startswith("top.") and op.name not in ("top.Weight", "top.None"):
            names += result_names(op)
    return names


# ---- workers (local processes or Dask worker threads) ----------------------------------------------


@dataclass(frozen=True)
class _Job:
    """What a worker needs: `run` is new for every calibrate call, so that a long-lived Dask worker
    reloads the module of a new run (the file may have changed); `fine` bins, None for minmax."""

    mlir: str
    load_sample: LoadSample
    run: str
    fine: int | None
    channels: frozenset[str] = frozenset()  # tensors whose per-channel maxima are collected
    keep: frozenset[str] = frozenset()  # tensors kept whole, every sample


# A forked local worker finds the parent's interpreter here under the run's id.
_INHERITED: dict[str, ModuleInterpreter] = {}
# Per thread: a Dask worker may run several shares at once in its threads; one interpreter each.
_WORKER = threading.local()


def _worker_interpreter(job: _Job) -> ModuleInterpreter:
    if getattr(_WORKER, "run", None) != job.run:
        # One BLAS thread for the life of the worker: N workers on N cores, not N x cores threads
        # fighting, and the same float32 results as the single-process run (see calibrate).
        _WORKER.limits = threadpool_limits(limits=1)
        _WORKER.interp = _INHERITED.get(job.run) or _interpreter(load_module(job.mlir))
        _WORKER.run = job.run
    return _WORKER.interp


def _worker_stats(job: _Job, samples: list[str]) -> Stats:
    return sample_stats(_worker_interpreter(job), job.load_sample, samples, job.fine, channels=job.channels, keep=job.keep)


def _fold_sample(job: _Job, stats: Stats | None, sample: str) -> Stats:
    return sample_stats(_worker_interpreter(job), job.load_sample, [sample], job.fine, stats, job.channels, job.keep)

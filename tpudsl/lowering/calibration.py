"""Calibration: run the Top interpreter over sample inputs and compute a threshold per tensor.

Two passes over the samples, each mergeable, so that N processes (local, or the workers of a
Dask cluster: calibration_pool.py) can share the work and the table is the same as one process's:
  1. ranges:      per tensor min and max (merge: min of mins, max of maxes);
  2. histograms:  per tensor histogram of |x| over the final abs_max and the count of zeros
                  (merge: sums).
Then calibration_math turns each (histogram, min, max) into a threshold.

`load_sample(spec) -> {input name: array}` turns one sample (an entry of the list) into model
inputs; the command (cli/run_calibration.py) supplies it. It must be picklable for workers > 1
and a scheduler.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from tpudsl.interp import ModuleInterpreter
from tpudsl.interp.module_interpreter import result_names
from tpudsl.ir.module import TopModule, load_module
from tpudsl.lowering.calibration_math import ALL_ZERO_RANGE, AbsHistogram, abs_histogram, threshold
from tpudsl.lowering.calibration_pool import Pool, dask_pool, process_pool
from tpudsl.lowering.calibration_table import TableEntry

Ranges = dict[str, tuple[float, float]]
Histograms = dict[str, AbsHistogram]
LoadSample = Callable[[str], dict[str, np.ndarray]]


@dataclass
class CalibrationResult:
    ranges: Ranges  # after the all-zero rule
    histograms: Histograms
    order: list[str]  # tensor names in module order

    def table(self, method: str) -> dict[str, TableEntry]:
        entries = {}
        for name in self.order:
            lo, hi = self.ranges[name]
            entries[name] = TableEntry(threshold(method, self.histograms.get(name), lo, hi), lo, hi)
        return entries


# ---- the two passes over one share of the samples --------------------------------------------


def _activations(interp: ModuleInterpreter, load_sample: LoadSample, sample: str) -> dict[str, np.ndarray]:
    return interp.inference(load_sample(sample), keep_all=True)


def sample_ranges(interp: ModuleInterpreter, load_sample: LoadSample, samples: Iterable[str]) -> Ranges:
    ranges: Ranges = {}
    for sample in samples:
        for name, x in _activations(interp, load_sample, sample).items():
            x = np.asarray(x, dtype=np.float32)
            if x.size == 0:
                continue
            lo, hi = float(x.min()), float(x.max())
            ranges[name] = (lo, hi) if name not in ranges else (min(ranges[name][0], lo), max(ranges[name][1], hi))
    return ranges


def sample_histograms(interp: ModuleInterpreter, load_sample: LoadSample, samples: Iterable[str],
                      ranges: Ranges, bins: int) -> Histograms:
    hists: Histograms = {}
    for sample in samples:
        for name, x in _activations(interp, load_sample, sample).items():
            if name not in ranges:
                continue
            h = abs_histogram(x, max(abs(ranges[name][0]), abs(ranges[name][1])), bins)
            hists[name] = hists[name] + h if name in hists else h
    return hists


def merge_ranges(parts: Iterable[Ranges]) -> Ranges:
    merged: Ranges = {}
    for part in parts:
        for name, (lo, hi) in part.items():
            merged[name] = (lo, hi) if name not in merged else (min(merged[name][0], lo), max(merged[name][1], hi))
    return merged


def merge_histograms(parts: Iterable[Histograms]) -> Histograms:
    merged: Histograms = {}
    for part in parts:
        for name, h in part.items():
            merged[name] = merged[name] + h if name in merged else h
    return merged


def nonzero_ranges(ranges: Ranges) -> Ranges:
    """TPU-MLIR's rule: a tensor that was zero on every sample gets [-1e-5, 1e-5]."""
    return {n: (lo, hi) if max(abs(lo), abs(hi)) > 0 else (-ALL_ZERO_RANGE, ALL_ZERO_RANGE) for n, (lo, hi) in ranges.items()}


# ---- drivers -------------------------------------------------------------------------------------


def calibrate(mlir: str, samples: Sequence[str], load_sample: LoadSample, bins: int = 2048,
              workers: int = 1, progress: Callable[[int], None] | None = None,
              need_histograms: bool = True, mod: TopModule | None = None,
              scheduler: str | None = None) -> CalibrationResult:
    """Statistics of every tensor of `mlir` (`mod`, when already loaded) over `samples`;
    `progress(n)` after each n samples (each pass counts once). With workers > 1 the samples
    are split over that many processes, with `scheduler` (a Dask address) over that cluster's
    workers; each worker loads `mlir` (a path the workers must see, as the samples)."""
    mod = mod or load_module(mlir)
    order = tensor_names(mod.module)
    if workers <= 1 and scheduler is None:
        # One BLAS thread here too: the thread count changes the summation order of float32 GEMMs,
        # and with it the last digits of the table (measured on a ResNet-18), so N workers could
        # not reproduce this table otherwise.
        with threadpool_limits(limits=1):
            interp = _interpreter(mod)
            ranges = nonzero_ranges(_each(lambda s: sample_ranges(interp, load_sample, s), samples, progress, merge_ranges))
            hists = {}
            if need_histograms:
                hists = _each(lambda s: sample_histograms(interp, load_sample, s, ranges, bins), samples, progress, merge_histograms)
        return CalibrationResult(ranges, hists, [n for n in order if n in ranges])
    job = _Job(mlir, load_sample, uuid.uuid4().hex)
    with dask_pool(scheduler) if scheduler is not None else process_pool(workers) as pool:
        shares = _shares(samples, pool.slots)
        ranges = nonzero_ranges(_pooled(pool, _worker_ranges, job, shares, (), progress, merge_ranges))
        hists = _pooled(pool, _worker_histograms, job, shares, (ranges, bins), progress, merge_histograms) if need_histograms else {}
    return CalibrationResult(ranges, hists, [n for n in order if n in ranges])


def _each(run, samples, progress, merge):
    parts = []
    for sample in samples:
        parts.append(run([sample]))
        if progress:
            progress(1)
    return merge(parts)


def _shares(samples: Sequence[str], workers: int) -> list[list[str]]:
    """Round-robin shares, a few per worker so that the progress bar moves (merging is order-free)."""
    count = min(len(samples), workers * 4) or 1
    return [list(samples[i::count]) for i in range(count)]


def _pooled(pool: Pool, fn, job, shares, extra, progress, merge):
    futures = {pool.submit(fn, job, share, *extra): len(share) for share in shares}
    parts = []
    for future in pool.completed(futures):
        parts.append(future.result())
        if progress:
            progress(futures[future])
    return merge(parts)


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
    """What a worker needs to build its interpreter; `run` is new for every calibrate call, so a
    long-lived Dask worker reloads the module of a new run (the file may have changed)."""

    mlir: str
    load_sample: LoadSample
    run: str


# Per thread: a Dask worker may run several shares at once in its threads; one interpreter each.
_WORKER = threading.local()


def _worker_interpreter(job: _Job) -> ModuleInterpreter:
    if getattr(_WORKER, "run", None) != job.run:
        # One BLAS thread for the life of the worker: N workers on N cores, not N x cores threads
        # fighting, and the same float32 results as the single-process run (see calibrate).
        _WORKER.limits = threadpool_limits(limits=1)
        _WORKER.interp = _interpreter(load_module(job.mlir))
        _WORKER.run = job.run
    return _WORKER.interp


def _worker_ranges(job: _Job, samples: list[str]) -> Ranges:
    return sample_ranges(_worker_interpreter(job), job.load_sample, samples)


def _worker_histograms(job: _Job, samples: list[str], ranges: Ranges, bins: int) -> Histograms:
    return sample_histograms(_worker_interpreter(job), job.load_sample, samples, ranges, bins)

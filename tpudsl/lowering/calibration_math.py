"""Thresholds from activation statistics, as TPU-MLIR's calibration computes them.

A tensor's statistics are its min, max and a histogram of |x| (zeros left out) over
[0, abs_max] in `bins` bins of width abs_max / (bins - 1): value x counts in bin
floor(|x| / width + 0.5) (TPU-MLIR's `BaseKldCalibrator.histogram`). Histograms of the same
tensor over the same abs_max add up, which is what makes the statistics mergeable.

Thresholds (docs/quantization.md gives the algorithms and the float rounding):
  kld            TPU-MLIR's `kl_diversity_hist` (calibration_math.cpp): candidates are multiples of
                 128 bins; the first candidate with the least KL divergence wins.
  minmax         max(|min|, |max|).
  percentile9999 the upper edge of the bin where the cumulative count reaches 99.99 %.
  mse            TPU-MLIR's fixed point for the threshold minimising the int8 quantization
                 error (cali_math `threshold_mse`), over the histogram's bin centres.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tpudsl.lowering.calibration_methods import METHODS

QUANT_BINS = 128  # int8: the histogram is merged into 128 levels per sign
ALL_ZERO_RANGE = 1e-5  # TPU-MLIR gives an all-zero tensor the range [-1e-5, 1e-5]


def bin_width(abs_max: float, bins: int) -> np.float32:
    """TPU-MLIR computes the width in float32 (abs_max is a float32 maximum)."""
    return np.float32(abs_max) / np.float32(bins - 1)


def histogram(x: np.ndarray, abs_max: float, bins: int) -> np.ndarray:
    """Counts of |x| (zeros left out) in `bins` bins over [0, abs_max]; x must lie within abs_max."""
    return abs_histogram(x, abs_max, bins).counts


@dataclass(frozen=True)
class AbsHistogram:
    """A tensor's histogram statistics: TPU-MLIR's histogram of the nonzero |x|, and how many
    values were exactly 0 (the mse and percentile methods count them; KLD does not)."""

    counts: np.ndarray
    zeros: int

    def __add__(self, other: AbsHistogram) -> AbsHistogram:
        return AbsHistogram(self.counts + other.counts, self.zeros + other.zeros)


def abs_histogram(x: np.ndarray, abs_max: float, bins: int) -> AbsHistogram:
    """One pass over a copy of |x|, no boolean compaction: the zeros land in bin 0 (floor(0 + 0.5))
    and are taken out of it afterwards. 2x faster than filtering the zeros first (bench/calibration.py)."""
    x = np.asarray(x, dtype=np.float32)
    t = np.abs(x.ravel())
    np.divide(t, bin_width(abs_max, bins), out=t)
    t += np.float32(0.5)
    # np.histogram(range=(0, bins-1)) puts the value bins-1 in the last bin; nothing lies beyond it
    # when abs_max is the true maximum (|x| / width + 0.5 < bins): the clip only guards bincount's size.
    np.minimum(t, np.float32(bins - 1), out=t)
    counts = np.bincount(t.astype(np.intp), minlength=bins)  # t >= 0, so truncation is floor
    zeros = x.size - np.count_nonzero(x)
    counts[0] -= zeros
    return AbsHistogram(counts, int(zeros))


def kld_threshold(hist: np.ndarray, abs_max: float) -> float:
    """The KL-divergence threshold of TPU-MLIR's kl_diversity_hist (dst_bins 128), in float64 sums.
    One numpy step per candidate (16 for 2048 bins): a candidates x bins matrix computes twice
    the logarithms (the kept bins form a triangle) and measured 3x slower (bench/RESULTS.md)."""
    bins = hist.size
    width = bin_width(abs_max, bins)
    counts = hist.astype(np.float64)
    total = counts.sum()
    if total == 0:  # TPU-MLIR's KL values are all NaN then and it takes the first candidate
        return float(width * np.float32(QUANT_BINS))
    kl = []
    for i in range(QUANT_BINS, bins + 1, QUANT_BINS):
        p = counts[:i].copy()
        p[i - 1] += counts[i:].sum()  # outliers clip into the last bin
        p /= total
        kept = counts[:i]
        group = kept.reshape(QUANT_BINS, i // QUANT_BINS)
        nonzero = np.maximum((group > 0).sum(axis=1), 1)
        q_level = group.sum(axis=1) / nonzero / kept.sum()  # Q spreads each level over its nonzero bins
        q = np.where(kept > 0, np.repeat(q_level, i // QUANT_BINS), 0.0)
        kl.append(float(np.sum(p * (np.log10(p + 1e-30) - np.log10(q + 1e-30)))))
    best = int(np.argmin(kl))  # the first minimum, as TPU-MLIR's the_min_index
    return float(width * np.float32((best + 1) * QUANT_BINS))


def percentile_threshold(h: AbsHistogram, abs_max: float, percent: float = 99.99) -> float:
    """The upper edge of the bin where the cumulative count of |x| (zeros in bin 0) reaches `percent`."""
    counts = h.counts.astype(np.int64).copy()
    counts[0] += h.zeros
    if h.counts.sum() == 0:
        return float(abs_max)
    index = int(np.searchsorted(np.cumsum(counts), counts.sum() * percent / 100.0))
    return min(float(abs_max), (index + 0.5) * float(bin_width(abs_max, counts.size)))


def mse_threshold(h: AbsHistogram, abs_max: float, lo: float, bits: int = 8) -> float:
    """TPU-MLIR's fixed point s = sum(|x| > s) / (count(|x| <= s) / (3 * 4**bits * u) + count(|x| > s)),
    u = 4 for a tensor whose min is 0 (unsigned), started at the mean of the nonzero |x|, over bin
    centres weighted by their counts (zeros count in |x| <= s)."""
    values = np.arange(h.counts.size) * float(bin_width(abs_max, h.counts.size))
    counts = h.counts.astype(np.float64)
    if counts.sum() == 0:
        return float(abs_max)
    unsigned = 4 if abs(lo) < 1e-6 else 1
    s = float((counts * values).sum() / counts.sum())
    for _ in range(20):
        above = values > s
        s_next = float((counts[above] * values[above]).sum()
                       / ((counts[~above].sum() + h.zeros) / (4**bits) / 3 / unsigned + counts[above].sum()))
        if abs(s_next - s) < 1e-6:
            break
        s = s_next
    return s


def threshold(method: str, h: AbsHistogram | None, lo: float, hi: float) -> float:
    """`h` may be None for minmax only."""
    abs_max = max(abs(lo), abs(hi))
    if method == "minmax":
        return abs_max
    if method == "kld":
        return kld_threshold(h.counts, abs_max)
    if method == "percentile9999":
        return percentile_threshold(h, abs_max)
    if method == "mse":
        return mse_threshold(h, abs_max, lo)
    raise ValueError(f"unknown calibration method '{method}'; known: {', '.join(METHODS)}")

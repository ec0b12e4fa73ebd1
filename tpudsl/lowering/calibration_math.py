"""Thresholds from activation statistics, as TPU-MLIR's calibration computes them.

A tensor's statistics are its min, max and a histogram of |x| (zeros left out) over
[0, abs_max] in `bins` bins of width abs_max / (bins - 1): value x counts in bin
floor(|x| / width + 0.5) (TPU-MLIR's `BaseKldCalibrator.histogram`). Calibration collects them in
one interpreter run per sample, before the global abs_max is known, as a `FineHistogram` (64x
finer, over a power-of-two range that doubles as needed: exact and mergeable), and rebins it once
to TPU-MLIR's bins at the end (`FineHistogram.coarse`).

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
FLOAT32_MAX = float(np.finfo(np.float32).max)


def bin_width(abs_max: float, bins: int) -> np.float32:
    """TPU-MLIR computes the width in float32 (abs_max is a float32 maximum)."""
    return np.float32(abs_max) / np.float32(bins - 1)


@dataclass(frozen=True)
class AbsHistogram:
    """A tensor's histogram statistics as the thresholds take them: TPU-MLIR's histogram of the
    nonzero |x| over [0, abs_max], and how many values were exactly 0 (the mse and percentile
    methods count them; KLD does not)."""

    counts: np.ndarray
    zeros: int


def fine_bins(bins: int) -> int:
    """Fine bins per tensor: the power of two >= 64 x `bins`, so that each of the `bins` bins over
    [0, abs_max] gathers 32 to 64 fine bins (the fine range is (abs_max, 2 abs_max]). With 16 x,
    one KLD threshold of MobileNetV2's 67 moved a step from the exact two-pass table's; with 64 x
    none of ResNet-18's and MobileNetV2's did (docs/quantization.md)."""
    return 1 << (64 * bins - 1).bit_length()


# The fine range never goes below 2^MIN_EXP, so that the float32 scale 2^(log2(fine) - exp) stays finite.
MIN_EXP = -96


def _holding(peak: int) -> np.dtype:
    """The narrowest unsigned type that holds counts up to `peak` (uint8, 16, 32 or 64)."""
    return np.min_scalar_type(peak)


@dataclass
class FineHistogram:
    """Counts of the nonzero |x| in `size` (a power of two) bins of width 2^exp / size over
    [0, 2^exp), where 2^exp is the least power of two above every |x| seen (so |x| * size / 2^exp
    is exact in float32 and its floor is the bin), and the count of exact zeros apart.

    Exact and order-free: when a value beyond 2^exp arrives, exp grows and adjacent bin pairs
    merge (floor(v / 2w) = floor(floor(v / w) / 2)), so a histogram is a function of the multiset
    of values only, and `merge` (fold to the larger exp, add) is associative and commutative.
    `coarse` turns it into TPU-MLIR's histogram over [0, abs_max] (docs/quantization.md).

    Counts are held in the narrowest unsigned type that provably holds them: `peak` bounds the
    largest count (exact after a fold or merge; after an add, the previous bound plus the largest
    count added), and the array widens (uint8 -> 16 -> 32 -> 64) before an add could wrap. The bins
    are fine (64 per TPU-MLIR bin), so counts stay small: ResNet-18's 33 tensors after 10 samples
    of 224x224 peak at 346, 2 bytes per bin at most instead of 4 (bench/RESULTS.md,
    calibration_memory)."""

    size: int
    exp: int | None = None  # None: no nonzero value yet
    counts: np.ndarray | None = None
    zeros: int = 0
    total: int = 0  # the sum of counts
    peak: int = 0  # >= every count

    def add(self, x: np.ndarray, abs_max: float) -> None:
        """Counts the values of float32 `x`, whose largest |x| is `abs_max` (finite)."""
        zeros = x.size - np.count_nonzero(x)
        self.zeros += zeros
        if abs_max == 0:
            return
        self._fold(max(int(np.frexp(np.float32(abs_max))[1]), MIN_EXP))  # abs_max < 2^exp
        self.total += x.size - zeros
        t = np.abs(x.ravel())
        t *= np.float32(2.0 ** (self.size.bit_length() - 1 - self.exp))  # exact: a power of two
        # t < size (|x| < 2^exp); truncation of t >= 0 is floor. The zeros land in bin 0: taken out.
        counts = np.bincount(t.astype(np.intp))  # up to the largest bin used: cheaper on small tensors
        counts[0] -= zeros
        self._hold(self.peak + int(counts.max()))
        used = self.counts[:counts.size]
        np.add(used, counts, out=used, casting="unsafe")  # fits: _hold widened it to the bound

    def merge(self, other: FineHistogram) -> FineHistogram:
        out = FineHistogram(self.size, zeros=self.zeros + other.zeros, total=self.total + other.total)
        parts = [h for h in (self, other) if h.exp is not None]
        if parts:
            out.exp = max(h.exp for h in parts)
            out._set(sum(h._folded(out.exp).astype(np.int64) for h in parts))
        return out

    def _hold(self, peak: int) -> None:
        """Counts up to `peak` will be held: widen the array first where its type could not."""
        self.peak = peak
        if peak > np.iinfo(self.counts.dtype).max:
            self.counts = self.counts.astype(_holding(peak))

    def _set(self, counts: np.ndarray) -> None:
        """`counts` (exact) in the narrowest type for their largest."""
        self.peak = int(counts.max())
        self.counts = counts.astype(_holding(self.peak))

    def _fold(self, exp: int) -> None:
        if self.exp is None:
            self.exp, self.counts, self.peak = exp, np.zeros(self.size, np.uint8), 0
        elif exp > self.exp:
            folded = self._folded(exp)
            self.exp = exp
            self._set(folded)

    def _folded(self, exp: int) -> np.ndarray:
        """The counts over [0, 2^exp), exp >= self.exp: groups of 2^(exp - self.exp) bins summed
        (in uint64: a sum may exceed the narrow type of the parts)."""
        shift = exp - self.exp
        if shift == 0:
            return self.counts
        out = np.zeros(self.size, np.uint64)
        if shift >= self.size.bit_length() - 1:
            out[0] = self.total
        else:
            merged = self.counts.reshape(-1, 1 << shift).sum(axis=1, dtype=np.uint64)
            out[:merged.size] = merged
        return out

    def __getstate__(self) -> tuple:
        """Pickled compact (a worker sends its statistics back once): the counts up to the last
        nonzero bin, in the narrowest unsigned type that holds them."""
        counts = self.counts
        if counts is not None:
            nonzero = np.flatnonzero(counts)
            counts = counts[:nonzero[-1] + 1 if nonzero.size else 0]
            counts = counts.astype(_holding(int(counts.max()) if counts.size else 0))
        return self.size, self.exp, counts, self.zeros, self.total

    def __setstate__(self, state: tuple) -> None:
        self.size, self.exp, counts, self.zeros, self.total = state
        self.counts, self.peak = None, 0
        if counts is not None:
            full = np.zeros(self.size, counts.dtype)
            full[:counts.size] = counts
            self._set(full)

    def coarse(self, abs_max: float, bins: int) -> AbsHistogram:
        """TPU-MLIR's `bins` bins over [0, abs_max] (width w = abs_max / (bins - 1) in float32; a
        value v counts in floor(v / w + 0.5)): each fine bin goes whole to the bin of its centre
        (the nonzero values of fine bin 0 to bin 0). A value lands in TPU-MLIR's bin or, when it
        lies within one fine width of a bin edge, in the neighbour (tests/test_calibration.py)."""
        out = np.zeros(bins, np.int64)
        if self.exp is None:
            return AbsHistogram(out, self.zeros)
        counts = self.counts.astype(np.int64)
        fine_width = 2.0 ** (self.exp - (self.size.bit_length() - 1))
        centres = (np.arange(self.size) + 0.5) * fine_width  # float64, exact
        target = np.minimum(np.floor(centres / float(bin_width(abs_max, bins)) + 0.5), bins - 1).astype(np.intp)
        # target is non-decreasing: a cumulative sum cut at each bin's last fine bin sums exactly in int64.
        ends = np.searchsorted(target, np.arange(bins), side="right")
        cum = np.concatenate([[0], np.cumsum(counts)])
        out[:] = np.diff(cum[np.concatenate([[0], ends])])
        return AbsHistogram(out, self.zeros)


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
        with np.errstate(invalid="ignore"):  # no value below the candidate: 0 / 0, its KL is NaN as TPU-MLIR's
            q_level = group.sum(axis=1) / nonzero / kept.sum()  # Q spreads each level over its nonzero bins
        q = np.where(kept > 0, np.repeat(q_level, i // QUANT_BINS), 0.0)
        kl.append(float(np.sum(p * (np.log10(p + 1e-30) - np.log10(q + 1e-30)))))
    best = int(np.argmin(kl))  # the first minimum, as TPU-MLIR's the_min_index
    with np.errstate(over="ignore"):
        th = width * np.float32((best + 1) * QUANT_BINS)
    # near float32's largest (a mask filled with finfo.min) the product overflows: the largest float32
    return float(th) if np.isfinite(th) else FLOAT32_MAX


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

"""Tensor comparison as TPU-MLIR's TensorCompare does it (npz_tool compare, model validation).

A tensor pair gets one verdict, tried from strictest to loosest:

  EQUAL        identical values (NaN positions counted as equal)
  CLOSE        np.allclose with rtol = 10^-order (atol 1e-8) for some order 5, 4 or 3
  SIMILAR      cosine > tol[0] and euclidean similarity > tol[1]
  NOT_SIMILAR  anything else, or NaN/inf in different places
  NOT_MATCH    element counts differ (shapes of equal size are reshaped and compared)

The metrics are those of TPU-MLIR: cosine similarity; euclidean similarity
1 - ||a-b|| / ||(a+b)/2||; SQNR in dB, 10*log10(var(signal) / var(noise)) with the second
(reference) tensor as the signal and its zero elements removed. SQNR is reported, never gates.
model_transform, model_deploy and the demo import `compare_dicts` and `format_report`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

EQUAL = "EQUAL"
CLOSE = "CLOSE"
SIMILAR = "SIMILAR"
NOT_SIMILAR = "NOT_SIMILAR"
NOT_MATCH = "NOT_MATCH"
PASSING = (EQUAL, CLOSE, SIMILAR)
NUMERIC_KINDS = "biuf"  # bool, signed, unsigned, float

# allclose orders tried, strictest first; TPU-MLIR accepts order >= 3 as CLOSE.
CLOSE_ORDERS = (5, 4, 3)


@dataclass
class Result:
    """The verdict on one tensor pair, with the metrics that led to it."""

    name: str
    verdict: str
    cosine: float = math.nan
    euclid: float = math.nan
    sqnr: float = math.nan
    max_abs_error: float = math.nan
    close_order: int | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.verdict in PASSING


@dataclass
class Report:
    """All verdicts of a file-against-file (or dict-against-dict) comparison."""

    results: list[Result]
    only_in_target: list[str]
    only_in_reference: list[str]
    excepted: list[str]

    @property
    def failed(self) -> list[Result]:
        return [r for r in self.results if not r.passed]

    @property
    def passed(self) -> bool:
        # Comparing nothing proves nothing: an empty intersection fails.
        return bool(self.results) and not self.failed

    def min_similarity(self) -> tuple[float, float, float]:
        """Smallest (cosine, euclid, sqnr) over the compared tensors that have metrics."""
        measured = [r for r in self.results if not math.isnan(r.cosine)]
        if not measured:
            return (math.nan, math.nan, math.nan)
        return (
            min(r.cosine for r in measured),
            min(r.euclid for r in measured),
            min(r.sqnr for r in measured),
        )


def parse_tolerance(text: str) -> tuple[float, float]:
    """'0.99,0.90' -> (0.99, 0.90); ValueError with a readable message otherwise."""
    parts = text.split(",")
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        values = ()
    if len(values) != 2 or not all(math.isfinite(v) for v in values):
        raise ValueError(f"tolerance must be two numbers 'cos,euclid', got '{text}'")
    return values  # type: ignore[return-value]


def cosine_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine of the angle between the flattened tensors; 1 when both are zero, 0 when one is."""
    a, b = a.ravel(), b.ravel()
    norm_a, norm_b = np.linalg.norm(a), np.linalg.norm(b)
    if norm_a == 0.0 or norm_b == 0.0:
        return 1.0 if norm_a == norm_b else 0.0
    return float(np.dot(a, b) / (norm_a * norm_b))


def euclidean_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """1 - ||a-b|| / ||(a+b)/2||; the 1e-7 keeps a = -b finite (and very negative), as TPU-MLIR does."""
    distance = np.linalg.norm((a - b).ravel())
    mean_norm = np.linalg.norm(((a + b) / 2).ravel()) + 1e-7
    return float(1.0 - distance / mean_norm)


def sqnr_db(target: np.ndarray, reference: np.ndarray) -> float:
    """Signal-to-quantization-noise ratio of `target` against `reference` (the signal), in dB.

    Zeros of the reference are dropped first (they carry no signal); no noise or no signal
    variance gives +inf, as in TPU-MLIR."""
    keep = reference.ravel() != 0
    signal = reference.ravel()[keep]
    noise = signal - target.ravel()[keep]
    signal_var = np.sum(np.square(signal - signal.mean())) if signal.size else 0.0
    noise_var = np.sum(np.square(noise - noise.mean())) if noise.size else 0.0
    if signal_var == 0 or noise_var == 0:
        return math.inf
    return float(10 * np.log10(signal_var / noise_var))


def _nonfinite_notes(a: np.ndarray, b: np.ndarray) -> tuple[bool, list[str]]:
    """Whether NaN and inf sit at the same places in both (infs with the same sign), and the counts."""
    notes = []
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    inf_a, inf_b = np.isinf(a), np.isinf(b)
    for what, mask_a, mask_b in (("nan", nan_a, nan_b), ("inf", inf_a, inf_b)):
        if mask_a.any() or mask_b.any():
            notes.append(f"{what}: {int(mask_a.sum())} vs {int(mask_b.sum())}")
    agree = (
        np.array_equal(nan_a, nan_b)
        and np.array_equal(inf_a, inf_b)
        and np.array_equal(a[inf_a], b[inf_b])
    )
    return agree, notes


def compare_arrays(
    target: np.ndarray,
    reference: np.ndarray,
    tolerance: tuple[float, float] = (0.99, 0.99),
    name: str = "",
) -> Result:
    """Compare `target` with `reference` and give the verdict (see the module docstring)."""
    a, b = np.asarray(target), np.asarray(reference)
    notes: list[str] = []
    if a.dtype != b.dtype:
        notes.append(f"dtype {a.dtype} vs {b.dtype}")
    if a.shape != b.shape:
        shapes = f"shape {_shape(a)} vs {_shape(b)}"
        if a.size != b.size:
            return Result(name, NOT_MATCH, notes=[*notes, shapes])
        notes.append(shapes + " (reshaped)")
        b = b.reshape(a.shape)
    if a.dtype.kind not in NUMERIC_KINDS or b.dtype.kind not in NUMERIC_KINDS:
        # Strings or objects have no metrics: they are equal or they are not.
        return Result(name, EQUAL if np.array_equal(a, b) else NOT_SIMILAR, notes=notes)
    # float64 so that metrics of float16/int inputs neither overflow nor round.
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    nonfinite_agree, nonfinite = _nonfinite_notes(a, b)
    notes += nonfinite
    result = Result(name, NOT_SIMILAR, notes=notes)
    if not nonfinite_agree:
        return result
    finite = np.isfinite(a)
    fa, fb = a[finite], b[finite]
    result.max_abs_error = float(np.max(np.abs(fa - fb))) if fa.size else 0.0
    if np.array_equal(fa, fb):
        result.verdict = EQUAL
        result.cosine, result.euclid, result.sqnr = 1.0, 1.0, math.inf
        return result
    result.cosine = cosine_similarity(fa, fb)
    result.euclid = euclidean_similarity(fa, fb)
    result.sqnr = sqnr_db(fa, fb)
    for order in CLOSE_ORDERS:
        if np.allclose(fa, fb, rtol=10.0**-order, atol=1e-8):
            result.verdict, result.close_order = CLOSE, order
            return result
    if result.cosine > tolerance[0] and result.euclid > tolerance[1]:
        result.verdict = SIMILAR
    return result


def compare_dicts(
    target: Mapping[str, np.ndarray],
    reference: Mapping[str, np.ndarray],
    tolerance: tuple[float, float] = (0.99, 0.99),
    excepts: Sequence[str] = (),
) -> Report:
    """Compare every tensor name present in both mappings (target order), except `excepts`."""
    skip = set(excepts)
    results = [
        compare_arrays(target[k], reference[k], tolerance, k)
        for k in target
        if k in reference and k not in skip
    ]
    return Report(
        results=results,
        only_in_target=[k for k in target if k not in reference and k not in skip],
        only_in_reference=[k for k in reference if k not in target and k not in skip],
        excepted=[k for k in target if k in skip],
    )


def _shape(a: np.ndarray) -> str:
    return "x".join(map(str, a.shape)) or "scalar"


def _num(x: float) -> str:
    # Similarities live near 1 (6 decimals show 1 - 1e-6); far-off values read better in e-notation.
    if not math.isfinite(x):
        return str(x)
    return f"{x:.6f}" if abs(x) < 1e4 else f"{x:.4e}"


# One-sided names shown without -v: comparing outputs against a dump of all tensors is common,
# and a list of hundreds of names would bury the verdict.
NAMES_SHOWN = 8


def _name_list(names: Sequence[str], everything: bool) -> str:
    if everything or len(names) <= NAMES_SHOWN:
        return ", ".join(names)
    return ", ".join(names[:NAMES_SHOWN]) + f", ... ({len(names) - NAMES_SHOWN} more; -v lists all)"


def format_result(r: Result) -> str:
    """One table row: name, verdict, cosine, euclidean similarity, SQNR, max abs error, notes."""
    verdict = f"{r.verdict}(rtol=1e-{r.close_order})" if r.close_order else r.verdict
    row = (
        f"{r.name:<40} {verdict:<16} {_num(r.cosine):>10} {_num(r.euclid):>10} "
        f"{_num(r.sqnr):>11} {_num(r.max_abs_error):>12}"
    )
    return row + ("  " + "; ".join(r.notes) if r.notes else "")


TABLE_HEADER = (
    f"{'name':<40} {'verdict':<16} {'cosine':>10} {'euclid':>10} {'sqnr(dB)':>11} {'max_abs_err':>12}"
)


def format_report(report: Report, verbose: int = 0, tolerance: tuple[float, float] | None = None) -> list[str]:
    """The report as lines: rows (all with verbose >= 1, failures only otherwise), one-sided
    names, the minimum similarities and the PASSED/FAILED line."""
    rows = report.results if verbose >= 1 else report.failed
    lines = [TABLE_HEADER, *(format_result(r) for r in rows)] if rows else []
    for where, names in (("target", report.only_in_target), ("reference", report.only_in_reference)):
        if names:
            lines.append(f"only in {where} ({len(names)}): " + _name_list(names, everything=verbose >= 1))
    if report.excepted and verbose >= 1:
        lines.append("excepted: " + ", ".join(report.excepted))
    counts = {v: 0 for v in (EQUAL, CLOSE, SIMILAR, NOT_SIMILAR, NOT_MATCH)}
    for r in report.results:
        counts[r.verdict] += 1
    lines.append(
        f"{len(report.results)} compared: " + ", ".join(f"{n} {v}" for v, n in counts.items() if n)
        + (f" (tolerance cos > {tolerance[0]}, euclid > {tolerance[1]})" if tolerance else "")
    )
    cos, euclid, sqnr = report.min_similarity()
    lines.append(f"min_similarity = ({_num(cos)}, {_num(euclid)}, {_num(sqnr)})")
    if not report.results:
        lines.append("no tensor name is in both files")
    lines.append("npz compare PASSED." if report.passed else "npz compare FAILED.")
    return lines

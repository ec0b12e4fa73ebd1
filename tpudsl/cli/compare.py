"""Tensor comparison as TPU-MLIR's TensorCompare does it (npz_tool compare, model validation).

A tensor pair gets one verdict, tried from strictest to loosest:

  EQUAL        identical values (NaN at the same places counts as equal)
  NOT_EQUAL    an int8 pair that is not EQUAL: int8 tensors are exact or wrong (TPU-MLIR)
  CLOSE        |t - r| <= 1e-8 + 10^-k |r| everywhere (np.allclose) for some order k = 5, 4 or 3
  SIMILAR      cosine > tol[0] and euclidean similarity > tol[1]
  NOISE_LEVEL  not similar, but the reference is rounding noise of the op that computed it and the
               target differs from it by no more than that noise (see `noise_floor`)
  NOT_SIMILAR  anything else, or NaN/inf in different places
  NOT_MATCH    element counts differ (shapes of equal size are reshaped and compared)

The measures are those of TPU-MLIR: cosine similarity; euclidean similarity
1 - ||t-r|| / (||(t+r)/2|| + 1e-7); SQNR in dB, 10*log10(var(t) / var(t - r)) with the
target as the signal, as TPU-MLIR's sqnr_similarity(target, reference) does. SQNR is reported,
never gates.

Speed: every element is read by one cheap exact check, |t - r| in the tensors' own float type
(float32 for float32 pairs): its maximum gives EQUAL and the max abs error, and the allclose orders
are checked on it. Only a tensor that is not EQUAL or CLOSE pays for the measures, which accumulate
in float64 over blocks (no float64 copy of a whole tensor). No tensor is sampled or skipped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from tpudsl.ir.diagnostics import TpudslError

EQUAL = "EQUAL"
NOT_EQUAL = "NOT_EQUAL"
CLOSE = "CLOSE"
SIMILAR = "SIMILAR"
NOISE_LEVEL = "NOISE_LEVEL"
NOT_SIMILAR = "NOT_SIMILAR"
NOT_MATCH = "NOT_MATCH"
PASSING = (EQUAL, CLOSE, SIMILAR, NOISE_LEVEL)
NUMERIC_KINDS = "biuf"  # bool, signed, unsigned, float

# allclose orders tried, strictest first; TPU-MLIR accepts order >= 3 as CLOSE.
CLOSE_ORDERS = (5, 4, 3)
CLOSE_ATOL = 1e-8

# A reference tensor is rounding noise when every value is within NOISE_ULPS units of rounding
# (the float type's epsilon) of the scale of the terms its op added up: float32 sums of terms near
# 1 that cancel leave values near 1e-7, and 64 ulps leave room for long reductions. The target
# passes when it differs from such a reference by no more than the same floor.
NOISE_ULPS = 64

# Measures accumulate in float64 over blocks of this many elements (a block stays in cache).
BLOCK = 1 << 16

Scale = float | Callable[[], float | None] | None


@dataclass
class Result:
    """The verdict on one tensor pair, with the measures that led to it."""

    name: str
    verdict: str
    shape: tuple[int, ...] = ()
    dtype: str = ""
    cosine: float = math.nan
    euclid: float = math.nan
    sqnr: float = math.nan
    max_abs_error: float = math.nan
    close_order: int | None = None
    noise_floor: float | None = None
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
        """Smallest (cosine, euclid, sqnr) over the SIMILAR and NOT_SIMILAR tensors, from
        (1, 1, inf), as TPU-MLIR counts them (EQUAL and CLOSE tensors are not measured)."""
        # A NOISE_LEVEL tensor's cosine is that of rounding noise: it measures nothing.
        measured = [r for r in self.results if r.verdict in (SIMILAR, NOT_SIMILAR) and not math.isnan(r.cosine)]
        return (
            min([1.0, *(r.cosine for r in measured)]),
            min([1.0, *(r.euclid for r in measured)]),
            min([math.inf, *(r.sqnr for r in measured)]),
        )


def parse_tolerance(text: str) -> tuple[float, float]:
    """'0.99,0.90' -> (0.99, 0.90); ValueError with a readable message otherwise. Both are
    similarities, so each lies in [-1, 1]."""
    parts = text.split(",")
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        values = ()
    if len(values) != 2 or not all(math.isfinite(v) for v in values):
        raise ValueError(f"tolerance must be two numbers 'cos,euclid', got '{text}'")
    if not all(-1.0 <= v <= 1.0 for v in values):
        raise ValueError(f"tolerance values must lie in [-1, 1] (they are similarities), got '{text}'")
    return values  # type: ignore[return-value]


def tolerance_flag(text: str) -> tuple[float, float]:
    """A command's `--tolerance`: parse_tolerance, its error naming the flag."""
    try:
        return parse_tolerance(text)
    except ValueError as e:
        raise TpudslError(f"--tolerance: {e}") from None


@dataclass
class Measures:
    """The similarity measures of a tensor pair (TPU-MLIR's cosine, euclid and sqnr)."""

    cosine: float
    euclid: float
    sqnr: float


def measures(target: np.ndarray, reference: np.ndarray) -> Measures:
    """Cosine, euclidean similarity and SQNR of two finite tensors of equal size, accumulated in
    float64 block by block, in buffers reused for every block (no float64 copy of a whole tensor).

    Sums that could cancel are formed directly when they would: ||t+r||^2 = tt + rr + 2tr unless
    t and r point apart, and a block's spread sum(x^2) - n mean^2 unless the mean dominates it.
    Blocks are combined by Chan's formula, so a large mean does not cancel a small spread."""
    t, r = np.ravel(target), np.ravel(reference)
    tt = rr = tr = dd = ss = 0.0
    signal, noise = _Moments(), _Moments()
    buffers = np.empty((4, min(BLOCK, t.size)))
    for start in range(0, t.size, BLOCK):
        n = min(BLOCK, t.size - start)
        a, b, d, scratch = buffers[:, :n]
        np.copyto(a, t[start:start + n])
        np.copyto(b, r[start:start + n])
        np.subtract(a, b, out=d)
        block_tt, block_rr, block_tr, block_dd = _dot(a, a), _dot(b, b), _dot(a, b), _dot(d, d)
        block_ss = block_tt + block_rr + 2 * block_tr
        if block_ss < 0.25 * (block_tt + block_rr):  # t and r point apart: add them first
            np.add(a, b, out=scratch)
            block_ss = _dot(scratch, scratch)
        tt, rr, tr, dd, ss = tt + block_tt, rr + block_rr, tr + block_tr, dd + block_dd, ss + block_ss
        signal.add(a, block_tt, scratch)
        noise.add(d, block_dd, scratch)
    if tt == 0.0 or rr == 0.0:
        cosine = 1.0 if tt == rr else 0.0
    else:
        cosine = float(tr / (math.sqrt(tt) * math.sqrt(rr)))
    # 1e-7 keeps t = -r finite (and very negative), as TPU-MLIR does.
    euclid = 1.0 - math.sqrt(dd) / (math.sqrt(ss) / 2 + 1e-7)
    if signal.m2 == 0.0 or noise.m2 == 0.0:
        sqnr = math.inf  # no signal or no noise variance, as in TPU-MLIR
    else:
        sqnr = float(10 * math.log10(signal.m2 / noise.m2))
    return Measures(cosine, float(euclid), sqnr)


def _dot(x: np.ndarray, y: np.ndarray) -> float:
    """x . y with numpy's own loop: BLAS's dot starts threads, and on a busy machine a thread that
    waits for a core makes one 64k-element dot a thousand times slower."""
    return float(np.einsum("i,i->", x, y))


class _Moments:
    """Count, mean and sum of squared deviations of float64 blocks (Chan et al.'s combination)."""

    def __init__(self) -> None:
        self.n, self.mean, self.m2 = 0, 0.0, 0.0

    def add(self, x: np.ndarray, sum_sq: float, scratch: np.ndarray) -> None:
        """Add block `x`, whose sum of squares is `sum_sq`."""
        n = x.size
        mean = float(x.sum()) / n
        m2 = sum_sq - n * mean * mean
        if n * mean * mean > 0.5 * sum_sq:  # the mean dominates: center the block first
            np.subtract(x, mean, out=scratch)
            m2 = _dot(scratch, scratch)
        total = self.n + n
        delta = mean - self.mean
        self.m2 += m2 + delta * delta * self.n * n / total
        self.mean += delta * n / total
        self.n = total


def cosine_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine of the angle between the flattened tensors; 1 when both are zero, 0 when one is."""
    return measures(a, b).cosine


def euclidean_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """1 - ||a-b|| / (||(a+b)/2|| + 1e-7)."""
    return measures(a, b).euclid


def sqnr_db(target: np.ndarray, reference: np.ndarray) -> float:
    """Signal-to-quantization-noise ratio in dB: `target` is the signal, `target - reference` the
    noise (TPU-MLIR's argument order)."""
    return measures(target, reference).sqnr


def noise_floor(dtype: np.dtype, scale: float) -> float:
    """The largest value (and error) that is rounding noise for an op whose terms are `scale` large."""
    return NOISE_ULPS * float(np.finfo(dtype).eps) * scale


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
    scale: Scale = None,
) -> Result:
    """Compare `target` with `reference` and give the verdict (see the module docstring).

    `scale`, when given, is the magnitude of the terms the op that computed the tensor added up
    (or a function giving it, called only for a tensor the measures fail): a reference that is
    rounding noise at that scale is judged by its absolute error instead of by cosine."""
    a, b = np.asarray(target), np.asarray(reference)
    result = Result(name, NOT_SIMILAR, shape=a.shape, dtype=str(a.dtype))
    if a.dtype != b.dtype:
        result.notes.append(f"dtype {a.dtype} vs {b.dtype}")
    if a.shape != b.shape:
        shapes = f"shape {_shape(a)} vs {_shape(b)}"
        if a.size != b.size:
            result.verdict = NOT_MATCH
            result.notes.append(shapes)
            return result
        result.notes.append(shapes + " (reshaped)")
        b = b.reshape(a.shape)
    if a.dtype.kind not in NUMERIC_KINDS or b.dtype.kind not in NUMERIC_KINDS:
        # Strings or objects have no measures: they are equal or they are not.
        result.verdict = EQUAL if np.array_equal(a, b) else NOT_SIMILAR
        return result
    if np.int8 in (a.dtype, b.dtype):
        # TPU-MLIR's int8_tensor_close: quantized values are exact or wrong.
        result.verdict = EQUAL if np.array_equal(a, b) else NOT_EQUAL
        result.max_abs_error = _max_abs_diff(a, b)
        return result
    # The noise rule is for rounding: only a float pair has it (the coarser type's epsilon).
    rounding = max((a.dtype, b.dtype), key=lambda t: np.finfo(t).eps) if a.dtype.kind == b.dtype.kind == "f" else None
    work = np.result_type(a.dtype, b.dtype, np.float32)  # float32 stays float32; ints -> float64
    a, b = a.astype(work, copy=False), b.astype(work, copy=False)
    worst, order = _exact_checks(a, b)
    if not math.isfinite(worst):
        # NaN or inf somewhere (or a difference too large for the type): the careful float64 path.
        return _nonfinite(a, b, tolerance, result, _Noise(rounding, scale))
    return _verdict(a, b, tolerance, result, _Noise(rounding, scale), worst, order)


def _verdict(a: np.ndarray, b: np.ndarray, tolerance: tuple[float, float], result: Result, noise: _Noise,
             worst: float, order: int | None) -> Result:
    result.max_abs_error = worst
    if worst == 0.0:
        result.verdict = EQUAL
    elif order is not None:
        result.verdict, result.close_order = CLOSE, order
    else:
        _judge(a, b, tolerance, result, noise)
    return result


@dataclass
class _Noise:
    """What the noise rule needs: the float type that rounded, and the op's term scale."""

    rounding: np.dtype | None
    scale: Scale

    def floor(self) -> tuple[float, float] | None:
        """(floor, scale), or None when the rule does not apply (no float type, no finite scale)."""
        if self.rounding is None or self.scale is None:
            return None
        value = self.scale() if callable(self.scale) else self.scale
        if value is None or not math.isfinite(value):
            return None
        return noise_floor(self.rounding, value), value


def _judge(a: np.ndarray, b: np.ndarray, tolerance: tuple[float, float], result: Result, noise: _Noise) -> Result:
    """SIMILAR, NOISE_LEVEL or NOT_SIMILAR for finite tensors that are neither EQUAL nor CLOSE."""
    m = measures(a, b)
    result.cosine, result.euclid, result.sqnr = m.cosine, m.euclid, m.sqnr
    if m.cosine > tolerance[0] and m.euclid > tolerance[1]:
        result.verdict = SIMILAR
        return result
    rule = noise.floor()
    if rule is not None:
        floor, scale = rule
        if float(np.max(np.abs(b))) <= floor and result.max_abs_error <= floor:
            result.verdict, result.noise_floor = NOISE_LEVEL, floor
            result.notes.append(f"reference and error <= noise floor {floor:.3g} ({NOISE_ULPS} ulp x op term scale {scale:.3g})")
    return result


def _exact_checks(a: np.ndarray, b: np.ndarray) -> tuple[float, int | None]:
    """max |a - b| (NaN when a NaN or inf is met) and the strictest allclose order k (|a-b| <= 1e-8 +
    10^-k |b| everywhere) or None: one pass over blocks that stay in cache. The loosest order is
    checked in that pass; a stricter one is looked for only when it holds (a CLOSE tensor)."""
    a, b = a.ravel(), b.ravel()
    worst, loosest = 0.0, True
    for start in range(0, a.size, BLOCK):
        diff, magnitude = _block_diff(a, b, start)
        largest = float(diff.max())
        if not math.isfinite(largest):  # checked before max(): max(0.0, nan) is 0.0
            return math.nan, None
        worst = max(worst, largest)
        loosest = loosest and _within(diff, magnitude, CLOSE_ORDERS[-1])
    if not loosest:
        return worst, None
    return worst, next(k for k in CLOSE_ORDERS if all(
        _within(*_block_diff(a, b, start), k) for start in range(0, a.size, BLOCK)))


def _block_diff(a: np.ndarray, b: np.ndarray, start: int) -> tuple[np.ndarray, np.ndarray]:
    x, y = a[start:start + BLOCK], b[start:start + BLOCK]
    with np.errstate(over="ignore", invalid="ignore"):
        return np.abs(x - y), np.abs(y)


def _within(diff: np.ndarray, magnitude: np.ndarray, order: int) -> bool:
    """np.allclose's test, |a - b| <= atol + rtol |b|, in the tensors' float type as TPU-MLIR runs it."""
    bound = magnitude * np.asarray(10.0**-order, magnitude.dtype)
    bound += np.asarray(CLOSE_ATOL, magnitude.dtype)
    return bool(np.less_equal(diff, bound).all())


def _nonfinite(a: np.ndarray, b: np.ndarray, tolerance: tuple[float, float], result: Result, noise: _Noise) -> Result:
    """NaN and inf must sit at the same places (infs with the same sign); the finite rest is judged
    in float64 like any tensor."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    agree, notes = _nonfinite_notes(a, b)
    result.notes += notes
    if not agree:
        return result
    finite = np.isfinite(a)
    fa, fb = a[finite], b[finite]
    return _verdict(fa, fb, tolerance, result, noise, *_exact_checks(fa, fb))


def _max_abs_diff(a: np.ndarray, b: np.ndarray) -> float:
    if not a.size:
        return 0.0
    with np.errstate(invalid="ignore"):
        return float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))


def compare_dicts(
    target: Mapping[str, np.ndarray],
    reference: Mapping[str, np.ndarray],
    tolerance: tuple[float, float] = (0.99, 0.99),
    excepts: Sequence[str] = (),
    scale_of: Callable[[str], float | None] | None = None,
) -> Report:
    """Compare every tensor name present in both mappings (target order), except `excepts`.
    `scale_of(name)`, when given, is the noise scale of a tensor (see `compare_arrays`)."""
    skip = set(excepts)
    results = [
        compare_arrays(target[k], reference[k], tolerance, k, _scale_thunk(scale_of, k))
        for k in target
        if k in reference and k not in skip
    ]
    return Report(
        results=results,
        only_in_target=[k for k in target if k not in reference and k not in skip],
        only_in_reference=[k for k in reference if k not in target and k not in skip],
        excepted=[k for k in target if k in skip],
    )


def fuzzy_match(target: Mapping[str, np.ndarray], reference: Mapping[str, np.ndarray],
                tolerance: tuple[float, float]) -> tuple[list[str], bool]:
    """TPU-MLIR's fuzzy match (npz_tool compare --fuzzy_match, model_deploy --fazzy_match), for files
    whose names differ: each target tensor is matched with the reference tensor of its shape that has
    the highest cosine (an equal one ends the search, as cosine and euclid 1); passes when the worst
    match reaches both tolerances. A target tensor with no numeric reference of its shape matches
    nothing (0, 0), as in TPU-MLIR. The lines name each match and end with the worst measures."""
    lines, worst_cos, worst_euclid = [], 1.0, 1.0
    for name, a in target.items():
        best: tuple[float, float, str] | None = None
        for ref_name, b in reference.items():
            if b.shape != a.shape or a.dtype.kind not in NUMERIC_KINDS or b.dtype.kind not in NUMERIC_KINDS:
                continue
            if np.array_equal(a, b):
                best = (1.0, 1.0, ref_name)
                break
            m = measures(a, b)
            if best is None or m.cosine > best[0]:  # a NaN cosine (NaN or inf in the data) never wins
                best = (m.cosine, m.euclid, ref_name)
        cos, euclid, match = best or (0.0, 0.0, "")
        lines.append(f"find max_cos:{cos:.6f}, max_euc:{euclid:.6f} for {name}" + (
            f" (reference {match})" if match else f" (no reference of shape {list(a.shape)})"))
        worst_cos, worst_euclid = min(worst_cos, cos), min(worst_euclid, euclid)
    lines.append(f"min_similiarity = ({worst_cos:.6f}, {worst_euclid:.6f})")
    return lines, bool(target) and worst_cos >= tolerance[0] and worst_euclid >= tolerance[1]


def bmodel_mismatch(got: np.ndarray, want: np.ndarray, mode: str) -> str | None:
    """model_deploy's rule for a tensor of the cmodel against the Tpu interpreter's (both widened to
    float32 when f16/bf16), or None when it holds. INT8: bit-exact (both compute in integers by the
    same formulas; an F32 fallback op in the model is held to it too). F16/BF16: bit-exact too (each
    reduction is its exact value rounded once, element-wise ops one rounding of the same formula:
    docs/quantization.md "F16/BF16 arithmetic"; NaN where NaN). F32: within 1e-5 of the tensor's
    largest magnitude (float32 sums in each side's own order)."""
    if got.shape != want.shape:
        return f"shape {_shape(got)} vs {_shape(want)} in the Tpu interpreter"
    if mode != "F32":
        if np.array_equal(got, want, equal_nan=got.dtype.kind == "f"):
            return None
        same = (got == want) | (np.isnan(got) & np.isnan(want) if got.dtype.kind == "f" else False)
        return (f"{int(np.count_nonzero(~same))} of {got.size} values differ from the Tpu interpreter "
                f"({mode} must be bit-exact)")
    reference = want.astype(np.float64)
    err = float(np.abs(got.astype(np.float64) - reference).max(initial=0))
    limit = 1e-5 * float(np.abs(reference).max(initial=0))
    return None if err <= limit else f"max difference {err:g} from the Tpu interpreter (allowed {limit:g} in {mode})"


def _scale_thunk(scale_of: Callable[[str], float | None] | None, name: str) -> Scale:
    return None if scale_of is None else (lambda: scale_of(name))


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
    """One line per tensor: TPU-MLIR's `[name] VERDICT [PASSED]`, then shape and dtype (of the
    target), the measures the verdict rests on, and notes."""
    cells = [f"[{r.name:<32}] {r.verdict:>12} [{'PASSED' if r.passed else 'FAILED':>6}]", f"{r.shape} {r.dtype}"]
    if r.close_order is not None:
        cells.append(f"close order {r.close_order}")
    if not math.isnan(r.cosine):
        cells.append(f"cos {_num(r.cosine)} euclid {_num(r.euclid)} sqnr {_num(r.sqnr)}")
    if not math.isnan(r.max_abs_error):
        cells.append(f"max_abs_err {r.max_abs_error:.4g}")
    return "  ".join(cells + r.notes)


def _counts(report: Report) -> list[str]:
    """TPU-MLIR's summary; NOISE_LEVEL and NOT_MATCH are added only when they occur."""
    n = {v: 0 for v in (EQUAL, NOT_EQUAL, CLOSE, SIMILAR, NOISE_LEVEL, NOT_SIMILAR, NOT_MATCH)}
    for r in report.results:
        n[r.verdict] += 1
    passed = f"  {n[EQUAL]} equal, {n[CLOSE]} close, {n[SIMILAR]} similar"
    failed = f"  {n[NOT_EQUAL]} not equal, {n[NOT_SIMILAR]} not similar"
    return [
        f"{len(report.results)} compared",
        f"{len(report.results) - len(report.failed)} passed",
        passed + (f", {n[NOISE_LEVEL]} noise level" if n[NOISE_LEVEL] else ""),
        f"{len(report.failed)} failed",
        failed + (f", {n[NOT_MATCH]} not match" if n[NOT_MATCH] else ""),
    ]


def format_report(report: Report, verbose: int = 0, brief: bool = False,
                  files: tuple[str, str] | None = None) -> list[str]:
    """The report as lines: one per tensor (with `brief`, only those that failed or passed as
    NOISE_LEVEL: the verdicts a reader must see), one-sided names, the counts, `min_similiarity`
    (TPU-MLIR's spelling, which scripts grep for), the two files and the PASSED/FAILED line."""
    rows = [r for r in report.results if not brief or not r.passed or r.verdict == NOISE_LEVEL]
    lines = [format_result(r) for r in rows]
    for where, names in (("target", report.only_in_target), ("reference", report.only_in_reference)):
        if names:
            lines.append(f"only in {where} ({len(names)}): " + _name_list(names, everything=verbose >= 1))
    if report.excepted and verbose >= 1:
        lines.append("excepted: " + ", ".join(report.excepted))
    lines += _counts(report)
    cos, euclid, sqnr = report.min_similarity()
    lines.append(f"min_similiarity = ({_num(cos)}, {_num(euclid)}, {_num(sqnr)})")
    if files:
        lines += [f"Target    {files[0]}", f"Reference {files[1]}"]
    if not report.results:
        lines.append("no tensor name is in both files")
    lines.append("npz compare PASSED." if report.passed else "npz compare FAILED.")
    return lines

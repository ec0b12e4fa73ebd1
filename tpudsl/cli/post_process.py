"""TPU-MLIR's `--post_process FILE.py`: the user's `PostProcess(outputs)` run on each sample's
scored tensors before they are compared (run_qtable, run_sensitive_layer, run_calibration
--search search_threshold; the scoring: cli/model_score.py's Scoring).

As TPU-MLIR's MixPrecSearcher.run_model: the file is imported by path (importlib, its name the
file's stem, not put in sys.modules nor its folder on sys.path), its `PostProcess` is called with
one sample's {name: array} (the outputs, or --global_compare_layers' tensors), and returns a dict
of arrays keyed by name, compared float run against INT8 run, name by name. tpudsl imports the
file once, before any calibration work (TPU-MLIR imports it again for every sample), and checks
what it returns: anything else is one error naming the file (docs/quantization.md, "--post_process")."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import math
import os
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import NoReturn, TypeVar

import numpy as np

from tpudsl.ir.diagnostics import TpudslError, last_line, one_line, same_file

T = TypeVar("T")

FLAG = "--post_process"
FUNCTION = "PostProcess"  # the name TPU-MLIR calls


class PostProcess:
    """The user's `PostProcess` of the file `path`, imported at construction."""

    def __init__(self, path: str):
        self.path = path
        if not os.path.isfile(path):
            self.fail("no such file" if not os.path.exists(path) else "not a file")
        if not path.endswith(".py"):
            self.fail("not a .py file (TPU-MLIR imports it as Python)")
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        assert spec is not None and spec.loader is not None  # a .py path always has a source loader
        module = importlib.util.module_from_spec(spec)
        self._user_code("importing it", spec.loader.exec_module, module)
        self.function = getattr(module, FUNCTION, None)
        if not callable(self.function):
            self.fail(f"it defines no function {FUNCTION} (TPU-MLIR calls {FUNCTION}(outputs))")

    def fail(self, what: str) -> NoReturn:
        raise TpudslError(f"{FLAG}: {what}", self.path)

    def _own(self, filename: str | None) -> bool:
        """Whether `filename` (a code object's or a SyntaxError's) is the user's file."""
        return filename is not None and same_file(filename, self.path)

    def _user_code(self, doing: str, call: Callable[..., T], *args: object) -> T:
        """`call(*args)`, the user's code `doing` (for the messages). Whatever it raises is one error
        naming the file, SystemExit too (sys.exit() or argparse in the file would end the tool with
        their status, no message, nothing written). What it writes to stderr meanwhile is held back
        (written after it returns): on an error its last line ends the message (argparse's reason)
        instead of standing as lines of their own (argparse's usage, not the tool's)."""
        written = io.StringIO()
        try:
            with contextlib.redirect_stderr(written):
                result = call(*args)
        except (Exception, SystemExit) as e:
            self._raised(doing, e, last_line(written.getvalue()))
        sys.stderr.write(written.getvalue())
        return result

    def _raised(self, doing: str, e: BaseException, wrote: str) -> NoReturn:
        """The error for `e`, raised while `doing` after writing `wrote` to stderr, at its position
        in the user's file: a SyntaxError's own, else the innermost line of the file it passed."""
        if isinstance(e, SyntaxError) and self._own(e.filename):
            line, col, message = e.lineno, e.offset, e.msg
        else:
            frames = [f for f in traceback.extract_tb(e.__traceback__) if self._own(f.filename)]
            line, col = (frames[-1].lineno, (frames[-1].colno or 0) + 1) if frames else (None, None)
            message = one_line(str(e))
        said = f"{type(e).__name__}: {message}" if message else type(e).__name__  # `raise ValueError` says nothing
        after = f" after writing '{wrote}'" if wrote else ""
        raise TpudslError(f"{FLAG}: {doing} raised {said}{after}", self.path, line, col) from None

    def __call__(self, outputs: Mapping[str, np.ndarray], which: str) -> dict[str, np.ndarray]:
        """`PostProcess` of a copy of `outputs` (it may change what it is given), checked: a dict of
        finite, non-empty real-number arrays keyed by name, returned as copies (it may reuse a
        buffer it returned before: the INT8 run would overwrite the float reference). `which`: the
        run, for the messages."""
        result = self._user_code(f"{FUNCTION} on {which}", self.function,
                                 {name: np.array(a) for name, a in outputs.items()})
        if not isinstance(result, dict) or not result:
            self.fail(f"{FUNCTION} returned {_described(result)} on {which}, not a dict of numpy arrays keyed "
                       "by name (TPU-MLIR compares the values of the dict it returns)")
        copies: dict[str, np.ndarray] = {}
        for name, returned in result.items():
            what = f"{FUNCTION}'s {name!r} on {which}"
            if not isinstance(name, str):
                self.fail(f"{FUNCTION} returned the key {name!r} on {which}: the names must be strings")
            if not isinstance(returned, np.ndarray):
                self.fail(f"{what} is {_described(returned)}, not a numpy array")
            if isinstance(returned, np.ma.MaskedArray):  # the copy would score the values under the mask
                self.fail(f"{what} is a numpy masked array: what its mask means to a cosine is not modelled "
                          "(return a plain array, e.g. np.ma.filled(a, 0))")
            a = copies[name] = np.array(returned)
            if a.dtype.kind not in "iuf":  # bool is "b"
                self.fail(f"{what} has dtype {a.dtype}, not a real number type (a cosine compares numbers)")
            if a.size == 0:
                self.fail(f"{what} is empty (shape {a.shape}): a cosine needs values")
            if not np.isfinite(a).all():
                self.fail(f"{what} holds non-finite values (a cosine of them is not a number)")
            if a.dtype.kind == "f" and not _squares_fit(a):
                self.fail(f"{what} holds values out of the range a cosine's float64 sums square and add (|value| up "
                          f"to {np.format_float_scientific(np.abs(a).max(), precision=2, trim='-')}): scale them")
        return copies

    def check_reference(self, reference: Sequence[Mapping[str, np.ndarray]]) -> list[str]:
        """The names of the arrays every sample's float run (`reference`) returns: the same, in
        the same order, on each."""
        names = list(reference[0])
        for i, result in enumerate(reference):
            self._check_names(result, names, f"sample {i}'s float run")
        return names

    def check_alike(self, runs: Sequence[Mapping[str, np.ndarray]],
                    reference: Sequence[Mapping[str, np.ndarray]]) -> None:
        """Every sample's INT8 results (`runs`) name the arrays of the float `reference` (already
        `check_reference`d) in the same order, each with one shape in both (TPU-MLIR's "Calc loss
        fail" check, which also asks for one dtype: not here, where a tensor the search keeps F16 is
        float16 on the INT8 run and float32 on the float one, and the cosine reads both in
        float64)."""
        names = list(reference[0])
        for i, (got, want) in enumerate(zip(runs, reference, strict=True)):
            self._check_names(got, names, f"sample {i}'s INT8 run")
            for name in names:
                a, b = want[name], got[name]
                if a.shape != b.shape:
                    self.fail(f"{FUNCTION}'s {name!r} on sample {i} has shape {list(a.shape)} on the float run but "
                              f"{list(b.shape)} on the INT8 run: they are compared element by element")

    def _check_names(self, result: Mapping[str, np.ndarray], names: list[str], which: str) -> None:
        if list(result) != names:
            self.fail(f"{FUNCTION} returned {list(result)} on {which} but {names} on sample 0's float run: it "
                      "must return the same names, in the same order")


def _squares_fit(a: np.ndarray) -> bool:
    """Whether the float64 sums of squares and products a cosine of `a` and another such array adds
    up (compare.measures: a.a, (a-b).(a-b) and (a+b).(a+b) up to 4 size peak^2) stay finite, and do
    not all underflow to 0 (cosine would take the arrays for zeros). Outside it (|x| near 1e154
    and above, longdouble beyond float64, or every |x| below 1e-154) the cosine is NaN, which
    passes every threshold, or wrong."""
    peak = float(np.abs(a).max())  # inf for a longdouble beyond float64
    return peak == 0 or (math.isfinite(4 * a.size * peak * peak) and peak * peak >= sys.float_info.min)


def _described(value: object) -> str:
    if value is None:
        return "None"
    return "an empty dict" if isinstance(value, dict) and not value else f"a {type(value).__name__}"


def load_post_process(path: str | None) -> PostProcess | None:
    """The `--post_process` file `path` imported; None when the flag is not given or is '' (TPU-MLIR's
    `if self.post_process_path:`)."""
    return PostProcess(path) if path else None


"""Shared bits of the benches: paths, thread pinning, and RESULTS.md section replacement."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "RESULTS.md"


def pin_one_thread() -> None:
    """One BLAS/OpenMP thread for numpy, so the interpreter and onnxruntime (intra_op=1) compare fairly.
    Must run before numpy is imported."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
        os.environ.setdefault(var, "1")


def add_paths() -> None:
    for p in (str(ROOT), str(ROOT / "tests")):
        if p not in sys.path:
            sys.path.insert(0, p)


def write_section(key: str, text: str) -> None:
    """Replace (or append) the section between `<!-- key:begin -->` and `<!-- key:end -->`."""
    begin, end = f"<!-- {key}:begin -->", f"<!-- {key}:end -->"
    block = f"{begin}\n{text.rstrip()}\n{end}\n"
    old = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n\n"
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        _, tail = rest.split(end, 1)
        new = head + block + tail.lstrip("\n")
    else:
        new = old.rstrip("\n") + "\n\n" + block
    tmp = RESULTS.with_suffix(".md.tmp")
    tmp.write_text(new)
    os.replace(tmp, RESULTS)

"""Reading grouped modules back: the parser's `#tpu.lg` dictionary shortcut against the same parser
without it (the generic xDSL path for every dictionary), alternating in one process.

    .venv/bin/python bench/parse_grouped.py DIR [--runs 7]

DIR holds `*_final.mlir` files, e.g. the `--out` of bench/layer_group_search_time.py (model_deploy's
grouped modules). Times are CPU seconds (time.process_time), best of `--runs` per side; both sides
must give modules that print the same text (checked once per file).
"""

from __future__ import annotations

import argparse
import glob
import os
import time

import _common  # noqa: F401 (the repo on sys.path, one BLAS thread)

from tpudsl.ir.module import load_module
from tpudsl.ir.parse_base import ParserBase


def best_of(runs: int, path: str) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        load_module(path)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir")
    p.add_argument("--runs", type=int, default=7)
    args = p.parse_args()
    shortcut = ParserBase.dict_with_canonical_attrs
    print(f"load average at start {os.getloadavg()[0]:.1f}")
    print("| module | #tpu.lg | with shortcut ms | without ms | with / without |")
    print("|---|---|---|---|---|")
    for path in sorted(glob.glob(os.path.join(args.dir, "*_final.mlir"))):
        with_text = str(load_module(path).module)
        ParserBase.dict_with_canonical_attrs = lambda self, key: None  # the generic path for every dictionary
        try:
            assert str(load_module(path).module) == with_text, path
            without = best_of(args.runs, path)
        finally:
            ParserBase.dict_with_canonical_attrs = shortcut
        with_ = best_of(args.runs, path)
        groups = open(path).read().count("#tpu.lg<")
        print(f"| {os.path.basename(path)} | {groups} | {with_ * 1e3:.1f} | {without * 1e3:.1f} | {with_ / without:.2f} |")
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()

"""Element-wise steps writing into their dying operand (tpudsl/interp/inplace.py): per interp_zoo model,
how many steps could (the plan's candidates) and did (one inference), and tracemalloc's peak of one
inference with in-place on and off (the same tree, `in_place` cleared in the table).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/interp_inplace.py [--models a,b]

Prints only (bench/RESULTS.md `inplace` is written by hand with interp_ab's timings).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common  # noqa: E402

_common.add_paths()

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import os  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402


def counting(kernels: dict, counts: dict) -> dict:
    """`kernels` with every in-place kernel counting the calls given `out` (counts["wrote"])."""

    def wrap(run):
        def r(ins, a, *out):
            counts["wrote"] += bool(out)
            return run(ins, a, *out)

        return r

    def counted(k):
        prepare = (lambda st, a: wrap(k.prepare(st, a))) if k.prepare is not None else None
        return dataclasses.replace(k, run=wrap(k.run), prepare=prepare)

    return {n: counted(k) if k.in_place else k for n, k in kernels.items()}


def peak_mib(it, feed) -> float:
    tracemalloc.start()  # numpy reports its buffers: the peak of one inference above what was there
    base, _ = tracemalloc.get_traced_memory()
    it.inference(feed)
    peak = (tracemalloc.get_traced_memory()[1] - base) / 2**20
    tracemalloc.stop()
    return peak


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="", help="comma-separated subset of interp_zoo's models")
    args = ap.parse_args()

    import interp_zoo
    from tpudsl.interp import KERNELS, ModuleInterpreter

    builders = interp_zoo.zoo()
    print(f"load average {os.getloadavg()[0]:.1f}")
    print("| model | element-wise steps that may write in place | did (one inference) | peak MiB in place | "
          "peak MiB fresh |\n|---|---|---|---|---|")
    off = {n: dataclasses.replace(k, in_place=False) for n, k in KERNELS.items()}
    for name in [n for n in args.models.split(",") if n] or list(builders):
        model = builders[name]()
        top = _common.top_module(model, name)
        counts = {"wrote": 0}
        its = {k: ModuleInterpreter(top.module, top.weights, table, threads=1)
               for k, table in (("on", counting(KERNELS, counts)), ("off", off))}
        for it in its.values():
            it.init()
        shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
        feed = {its["on"].input_names[0]: np.random.default_rng(0).standard_normal(shape).astype(np.float32)}
        its["on"].inference(feed)
        candidates = sum(1 for s in its["on"]._steps if s.donors)
        peaks = {k: peak_mib(it, feed) for k, it in its.items()}
        print(f"| {name} | {candidates} | {counts['wrote'] // 2} | {peaks['on']:.1f} | {peaks['off']:.1f} |", flush=True)
        for it in its.values():
            it.deinit()
    return 0


if __name__ == "__main__":
    sys.exit(main())

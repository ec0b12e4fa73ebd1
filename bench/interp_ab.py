"""The Top kernels of a base revision against this tree's, in one process, on the interp_zoo models.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/interp_ab.py --base REV \
        [--runs 15] [--models a,b] [--whole] [--no-write]

The kernel modules of tpudsl/interp (kernel.py, table.py, kernels_*.py, mathfn.py, winograd.py, depthwise.py,
pointwise.py, windows.py) are read at REV with `git show` and imported as a separate package, so both tables run
in the same ModuleInterpreter (this tree's step loop, result checks and fused relu), on the same
inputs, alternating, one BLAS thread each. A before/after of kernel changes that other jobs on a
shared machine disturb equally on both sides: the figure is base time / this tree's time (best and
median process_time), and the outputs must agree (cosine >= 0.99999).

--whole: the base side runs REV's module_interpreter.py too (its step loop and result checks),
so a change to the inference loop is measured with the kernels (written to `interp_ab_whole`).
"""

from __future__ import annotations

import sys

import _common  # noqa: E402

import argparse  # noqa: E402
import importlib.abc  # noqa: E402
import importlib.util  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

PACKAGE = "base_interp"


class _BaseFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves `base_interp.X` from tpudsl/interp/X.py at the base revision, its own
    `tpudsl.interp` imports redirected to `base_interp`."""

    def __init__(self, rev: str):
        self.rev = rev

    def find_spec(self, name, path, target=None):
        if name == PACKAGE:
            return importlib.util.spec_from_loader(name, self, is_package=True)
        if name.startswith(PACKAGE + "."):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        if module.__name__ == PACKAGE:  # an empty package: its __init__ would import the whole interpreter
            return
        rel = f"tpudsl/interp/{module.__name__.split('.', 1)[1]}.py"
        src = subprocess.run(["git", "show", f"{self.rev}:{rel}"], cwd=_common.ROOT, check=True,
                             capture_output=True, text=True).stdout
        exec(compile(src.replace("tpudsl.interp", PACKAGE), f"{self.rev}:{rel}", "exec"), module.__dict__)


def base_kernels(rev: str) -> dict:
    from tpudsl.interp.kernel import Kernel

    sys.meta_path.insert(0, _BaseFinder(rev))
    table = importlib.import_module(f"{PACKAGE}.table")
    return {n: Kernel(k.run, k.prepare, k.fuses_relu) for n, k in table.KERNELS.items()}


def base_conv(base: str) -> tuple[str, object]:
    """(the short revision of `base`, its top.Conv kernel): the reference of interp_conv_ab and interp_pointwise."""
    rev = subprocess.run(["git", "rev-parse", "--short", base], cwd=_common.ROOT, check=True,
                         capture_output=True, text=True).stdout.strip()
    return rev, base_kernels(rev)["top.Conv"]


def base_whole(rev: str) -> tuple[type, dict]:
    """REV's ModuleInterpreter class and its own Top kernel table."""
    sys.meta_path.insert(0, _BaseFinder(rev))
    return (importlib.import_module(f"{PACKAGE}.module_interpreter").ModuleInterpreter,
            importlib.import_module(f"{PACKAGE}.table").KERNELS)


def compare(model, top, kernels: dict, runs: int, classes: dict | None = None) -> dict:
    from onnx_node.harness import cosine
    from tpudsl.interp import ModuleInterpreter

    classes = classes or {}
    its = {k: classes.get(k, ModuleInterpreter)(top.module, top.weights, table, threads=1)
           for k, table in kernels.items()}
    for it in its.values():
        it.init()
    name = model.graph.input[0].name
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    cpu: dict = {k: [] for k in its}
    for i in range(runs + 1):
        x = np.random.default_rng(i).standard_normal(shape).astype(np.float32)
        outs = {}
        for k, it in its.items():
            c0 = time.process_time()
            outs[k] = next(iter(it.inference({name: x}).values()))
            if i:  # the first run is the warm-up
                cpu[k].append(time.process_time() - c0)
        assert cosine(outs["base"], outs["tree"]) >= 0.99999
    for it in its.values():
        it.deinit()
    return {k: (min(v), statistics.median(v)) for k, v in cpu.items()}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="git revision whose tpudsl/interp kernels are the reference")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--models", default="", help="comma-separated subset of interp_zoo's models")
    ap.add_argument("--whole", action="store_true", help="the base's module_interpreter.py too, not only its kernels")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    import interp_zoo
    from tpudsl.interp import KERNELS

    rev = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=_common.ROOT, check=True,
                         capture_output=True, text=True).stdout.strip()
    classes = {}
    if args.whole:
        classes["base"], base_table = base_whole(rev)
        kernels = {"base": base_table, "tree": KERNELS}
    else:
        kernels = {"base": base_kernels(rev), "tree": KERNELS}
    builders = interp_zoo.zoo()
    names = [n for n in args.models.split(",") if n] or list(builders)
    load0 = os.getloadavg()[0]
    rows, best_ratios = [], []
    for name in names:
        model = builders[name]()
        r = compare(model, _common.top_module(model, name), kernels, args.runs, classes)
        (b_best, b_med), (t_best, t_med) = r["base"], r["tree"]
        best_ratios.append(b_best / t_best)
        rows.append(f"| {name} | {b_best * 1e3:.1f} | {t_best * 1e3:.1f} | **{b_best / t_best:.2f}** | "
                    f"{b_med * 1e3:.1f} | {t_med * 1e3:.1f} | {b_med / t_med:.2f} |")
        print(rows[-1], flush=True)
    load1 = os.getloadavg()[0]
    geo = math.exp(sum(map(math.log, best_ratios)) / len(best_ratios))
    key = "interp_ab_whole" if args.whole else "interp_ab"
    text = "\n".join([
        f"## {key}: Top {'interpreter (loop and kernels)' if args.whole else 'kernels'} of a base revision vs this "
        "tree, exported architectures",
        "",
        f"Command: `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/interp_ab.py --base {rev} "
        f"--runs {args.runs}{' --whole' if args.whole else ''}` ({time.strftime('%Y-%m-%d %H:%M')}; one BLAS thread; load average {load0:.1f} before, "
        f"{load1:.1f} after on {os.cpu_count()} cores). CPU ms per inference (process_time), both kernel tables in "
        "one process, alternating; speed-up = base / tree.",
        "",
        "| model | base best ms | tree best ms | speed-up (best) | base median ms | tree median ms | speed-up (median) |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
        f"- geometric mean of the best-time speed-ups: **{geo:.2f}x**",
    ])
    _common.publish(key, text, write=not args.no_write and len(names) == len(builders))
    return 0


if __name__ == "__main__":
    sys.exit(main())

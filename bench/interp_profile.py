"""Where an inference's time goes, per op type, for a base revision's interpreter and this tree's, in one process.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/interp_profile.py --base REV \
        [--runs 15] [--models a,b] [--no-write]

Both sides (REV's module_interpreter.py and kernel modules, imported as interp_ab does, and this
tree's) run with every kernel wrapped in a CPU-time timer (process_time), alternating, one BLAS
thread. Per op type: the sum over its steps of each step's best time of the runs; "dispatch" is
an inference's time outside its kernels (the step loop, result checks, fused relu, freeing,
reading the inputs, the timer itself), the best of the runs. ms per inference.
"""

from __future__ import annotations

import sys

import _common  # noqa: E402

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import collections  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402


def timed(table: dict, acc: dict) -> dict:
    """`table` with each step's kernel (after its prepare) adding its CPU time to acc[(op, step id)]."""

    def timer(name, k, prep):
        def prepare(static, attrs):
            run = prep(static, attrs) if prep is not None else k.run
            key = (name, id(attrs))

            def r(ins, a):
                t0 = time.process_time()
                y = run(ins, a)
                acc[key] = acc.get(key, 0.0) + time.process_time() - t0
                return y

            return r

        return prepare

    def wrap(name, k):
        # the kernel's other fields (fuses_relu, and strided_operands/view where the revision has them) kept
        fields = {"prepare": timer(name, k, k.prepare)}
        if getattr(k, "view", None) is not None:
            fields["view"] = timer(name, k, k.view)
        return dataclasses.replace(k, **fields)

    return {n: wrap(n, k) for n, k in table.items()}


def profile(model, top, sides: dict, runs: int) -> dict:
    """side -> (best inference ms, {op type: ms})."""
    name = model.graph.input[0].name
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    accs, its = {}, {}
    for side, (cls, table) in sides.items():
        accs[side] = {}
        its[side] = cls(top.module, top.weights, timed(table, accs[side]), threads=1)
        its[side].init()
    best_total = {s: float("inf") for s in sides}
    best_outside = {s: float("inf") for s in sides}
    best_step: dict = {s: {} for s in sides}
    for i in range(runs + 1):
        for side, it in its.items():
            accs[side].clear()
            c0 = time.process_time()
            it.inference({name: x})
            total = time.process_time() - c0
            if i:  # the first run is the warm-up
                best_total[side] = min(best_total[side], total)
                best_outside[side] = min(best_outside[side], total - sum(accs[side].values()))
                for key, t in accs[side].items():
                    best_step[side][key] = min(best_step[side].get(key, t), t)
    out = {}
    for side in sides:
        by_op: dict = collections.defaultdict(float)
        for (op, _), t in best_step[side].items():
            by_op[op.removeprefix("top.")] += t * 1e3
        by_op["dispatch"] = best_outside[side] * 1e3
        out[side] = (best_total[side] * 1e3, dict(by_op))
        its[side].deinit()
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="git revision whose interpreter is the 'before'")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--models", default="transformer,shufflenet,vit,convnext,efficientnet_silu")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    import interp_ab
    import interp_zoo
    from tpudsl.interp import KERNELS, ModuleInterpreter

    rev = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=_common.ROOT, check=True,
                         capture_output=True, text=True).stdout.strip()
    base_cls, base_table = interp_ab.base_whole(rev)
    sides = {"base": (base_cls, base_table), "tree": (ModuleInterpreter, KERNELS)}
    load0 = os.getloadavg()[0]
    lines = []
    for name in args.models.split(","):
        model = interp_zoo.zoo()[name]()
        r = profile(model, _common.top_module(model, name), sides, args.runs)
        (bt, bops), (tt, tops) = r["base"], r["tree"]
        ops = sorted(set(bops) | set(tops), key=lambda o: -bops.get(o, 0.0))
        cells = ", ".join(f"{o} {bops.get(o, 0.0):.2f} -> {tops.get(o, 0.0):.2f}" for o in ops
                          if max(bops.get(o, 0.0), tops.get(o, 0.0)) >= 0.01)
        lines.append(f"- {name}: **{bt:.2f} -> {tt:.2f} ms** ({bt / tt:.2f}x); {cells}")
        print(lines[-1], flush=True)
    load1 = os.getloadavg()[0]
    text = "\n".join([
        "## interp_profile: per op type, base revision -> this tree (CPU ms per inference)",
        "",
        f"Command: `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/interp_profile.py --base {rev} "
        f"--runs {args.runs}` ({time.strftime('%Y-%m-%d %H:%M')}; one BLAS thread; both interpreters in one process, "
        f"alternating, best of {args.runs}; load average {load0:.1f} before, {load1:.1f} after on {os.cpu_count()} cores). "
        "`dispatch`: an inference's time outside its kernels, best of the runs.",
        "",
        *lines,
    ])
    _common.publish("interp_profile", text, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())

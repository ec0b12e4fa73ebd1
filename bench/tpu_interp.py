"""The Tpu interpreter against the Top interpreter on the same model, in one process.

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/tpu_interp.py \
        [--size 224] [--modes F32,F16] [--runs 9] [--no-write]

tests/models resnet18 (the bench model), canonicalized as model_transform writes it, then lowered
to Tpu per mode; optionally (`--reorder`) after --weight-reorder too. Each run times, alternating: the Top
interpreter, the Tpu interpreter as it is (float kernels run the Top kernel's `prepare` at init:
filters packed once), and the Tpu interpreter with `prepare` stripped from its `tpu.*` kernels,
which packs every filter on every inference (what it did before kernels_tpu.py hooked prepare up).
Medians of wall time, one BLAS thread. In F32 the Tpu result must equal Top's; unprepared is close (cosine;
float16 roundings flip where the float32 sums differ in the last bit).
"""

from __future__ import annotations

import sys

import _common  # noqa: E402

import argparse  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--modes", default="F32,F16")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--reorder", action="store_true", help="run --weight-reorder on the Tpu module too")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    from tests.backend_support import lowered
    from tests.models import resnet18
    from tpudsl.dialects import make_context
    from tpudsl.interp import KERNELS, ModuleInterpreter
    from tpudsl.interp.kernel import Kernel
    from tpudsl.interp.kernels_tpu import ALL_KERNELS
    from tpudsl.passes import pass_class
    from onnx_node.harness import cosine

    model = resnet18(input_size=args.size, num_classes=1000)
    top = _common.top_module(model, "resnet18")
    unprepared = {n: Kernel(k.run, None, k.fuses_relu) if n.startswith("tpu.") else k for n, k in ALL_KERNELS.items()}
    rng = np.random.default_rng(0)
    xs = [rng.random((1, 3, args.size, args.size), dtype=np.float32) for _ in range(args.runs + 1)]
    load0 = os.getloadavg()[0]
    rows = []
    for mode in args.modes.split(","):
        tpu = lowered(model, mode, "bm1684x")
        if args.reorder:
            pass_class("weight-reorder")().apply(make_context(), tpu.module)
        its = {"top": ModuleInterpreter(top.module, top.weights, KERNELS, threads=1),
               "tpu": ModuleInterpreter(tpu.module, tpu.weights, ALL_KERNELS, threads=1),
               "tpu_unprepared": ModuleInterpreter(tpu.module, tpu.weights, unprepared, threads=1)}
        times: dict[str, list[float]] = {k: [] for k in its}
        for it in its.values():
            it.init()
        for i, x in enumerate(xs):
            outs = {}
            for k, it in its.items():
                t0 = time.perf_counter()
                outs[k] = next(iter(it.inference({"input": x}).values()))
                if i:  # the first run is the warm-up
                    times[k].append(time.perf_counter() - t0)
            # Prepared, F32 runs exactly Top's kernels; unprepared differs by float32 rounding (a
            # transposed MatMul operand is made contiguous only by prepare: another BLAS path).
            if mode == "F32":
                np.testing.assert_array_equal(outs["tpu"], outs["top"])
            assert cosine(outs["tpu"], outs["tpu_unprepared"]) > 0.99999, mode
        for it in its.values():
            it.deinit()
        med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
        rows.append(f"| {mode} | {med['top']:.1f} | {med['tpu_unprepared']:.1f} | {med['tpu']:.1f} | "
                    f"{med['tpu_unprepared'] / med['top']:.2f} | **{med['tpu'] / med['top']:.2f}** |")
        print(rows[-1], flush=True)
    load1 = os.getloadavg()[0]
    text = "\n".join([
        "## tpu_interp: Tpu interpreter vs Top interpreter, ResNet-18",
        "",
        f"Command: `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/tpu_interp.py --size {args.size} "
        f"--modes {args.modes} --runs {args.runs}{' --reorder' if args.reorder else ''}` "
        f"({time.strftime('%Y-%m-%d %H:%M')}; one BLAS thread; load average {load0:.1f} before, {load1:.1f} after "
        f"on {os.cpu_count()} cores). Medians, ms per inference; 'unprepared': the Tpu kernels without `prepare` "
        "(every filter packed on every inference, as before the hookup).",
        "",
        "| mode | Top ms | Tpu unprepared ms | Tpu ms | unprepared / Top | Tpu / Top |",
        "|---|---|---|---|---|---|",
        *rows,
    ])
    _common.publish("tpu_interp", text, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Peak memory of a one-process calibration (issue 10's fine histograms, docs/quantization.md).

    .venv/bin/python bench/calibration_memory.py [--size 224] [--samples 10] [--no-write]

Model: tests/models resnet18 (width 64), canonicalized as model_transform writes it, input 1x3xSxS,
--samples random-normal .npz samples (seed 0). In one process, under tracemalloc (numpy reports its
buffers to it): calibrate() (kld, 2048 bins) once to warm up, then once measured: the peak of traced
memory above the level before the call, and the bytes the fine histograms hold at the end of the
samples (the statistics a run keeps: the counts arrays of its 33 tensors). The reference in the same
process: the same histograms held as the previous scheme held them (uint32, 512 KiB per tensor).
Writes its section of bench/RESULTS.md unless --no-write.
"""

from __future__ import annotations

import sys
from pathlib import Path

import _common  # noqa: E402

_common.pin_one_thread()

import argparse  # noqa: E402
import os  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--samples", type=int, default=10)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    from calibration import resnet18_samples
    from tpudsl.cli.calibration_run import sample_loader
    from tpudsl.ir.module import load_module
    from tpudsl.lowering.calibration import _interpreter, calibrate, sample_stats
    from tpudsl.lowering.calibration_math import fine_bins

    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench_calibration_memory_") as tmp:
        work = Path(tmp)
        _, mlir, samples = resnet18_samples(work, args.size, args.samples)
        mod = load_module(mlir)
        loader = sample_loader(mod)
        calibrate(mlir, samples[:1], loader, mod=mod)  # warm-up: lazy imports and caches out of the figure

        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        t0 = time.process_time()
        calibrate(mlir, samples, loader, mod=mod)
        cpu = time.process_time() - t0
        peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.stop()

        stats = sample_stats(_interpreter(mod), loader, samples, fine_bins(2048))
        held = sum(s.hist.counts.nbytes for s in stats.values() if s.hist is not None and s.hist.counts is not None)
        dtypes = sorted({str(s.hist.counts.dtype) for s in stats.values() if s.hist.counts is not None})
        as_uint32 = sum(s.hist.size * 4 for s in stats.values() if s.hist.counts is not None)
        peak_count = max(int(s.hist.counts.max()) for s in stats.values() if s.hist.counts is not None)
    mib = 2**20
    text = "\n".join([
        "## calibration_memory: peak memory of a one-process calibration (issue 10)",
        "",
        f"Command: `.venv/bin/python bench/calibration_memory.py --size {args.size} --samples {args.samples}`",
        f"({time.strftime('%Y-%m-%d %H:%M')}; load average {load0[0]:.1f}).",
        "",
        f"- model: tests/models resnet18 (canonicalized), input 1x3x{args.size}x{args.size}, {args.samples} .npz "
        f"samples, kld, 2048 bins, {len(stats)} tensors",
        f"- calibrate(), one process, under tracemalloc: peak {peak / mib:.1f} MiB above the level before the call "
        f"({cpu:.1f} s CPU with tracing)",
        f"- fine histograms held after the samples: {held / mib:.2f} MiB ({', '.join(dtypes)}; largest count "
        f"{peak_count}); as uint32 (the previous scheme): {as_uint32 / mib:.2f} MiB",
    ])
    _common.publish("calibration_memory", text, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())

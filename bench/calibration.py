"""run_calibration's throughput against onnxruntime inference, and what --workers 2 gains (issue 10).

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/calibration.py \
        [--size 224] [--samples 24] [--rounds 3] [--busy] [--no-write]

(unset both where the machine sets them, as for bench/interp_zoo.py; the kernels in use are printed)

Model: tests/models resnet18 (width 64), canonicalized as model_transform writes it, input
1x3xSxS; --samples random-normal .npz samples (seed 0) in a temporary directory. In one process:
  - onnxruntime (one intra-op and one inter-op thread) runs the samples' arrays: samples/s;
  - calibrate() (the library behind run_calibration, kld, 2048 bins, one process) on the same
    samples, npz reading included: samples/s; the ratio calibration / onnxruntime (target >= 0.4);
  - where calibration's time goes: the Top interpreter (once per sample, all tensors kept), npz
    reading, min/max, the fine histograms, and once per table their rebinning and the KLD search;
  - calibrate(workers=2) against workers=1, alternating, --rounds times each: the least wall time
    of each gives the speed-up (target >= 1.6 on 2 cores), the
    CPU time both spent (parent + worker processes), which shows the overhead of the split, and the
    speed-up that CPU time gives on 2 free cores (one-process CPU / (parent + half the workers' CPU)).
Times are CPU seconds (process_time, and getrusage of the worker processes) where one process
runs, since other jobs stretch wall time on a shared machine; the speed-up can only be wall time.
--busy starts a process that keeps one core busy for the whole measurement (issue 10 asks for the
figures under such a load and on a quiet machine). Writes its section of bench/RESULTS.md (one
section per --busy setting) unless --no-write.
"""

from __future__ import annotations

import sys
from pathlib import Path

import _common  # noqa: E402

_common.pin_one_thread()

import argparse  # noqa: E402
import os  # noqa: E402
import pickle  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(fn):
    """(result, CPU seconds of this process, wall seconds)."""
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - c0, time.perf_counter() - w0


# What a forked worker runs in worker_costs(): the interpreter and loader it inherits.
FORKED: dict = {}


def _timed_sample(job, acc, sample):
    """One sample as a worker folds it (run, min/max, fine histograms): its CPU seconds."""
    from tpudsl.lowering.calibration import sample_stats

    c0 = time.process_time()
    sample_stats(FORKED["interp"], FORKED["loader"], [sample], job, FORKED.setdefault("stats", {}))
    return [*(acc or []), time.process_time() - c0]


def worker_costs(mlir, mod, loader, samples, fine) -> dict[str, float]:
    """Where a worker's time could go, CPU seconds: module parse and interpreter init (what a
    spawned worker would pay; a forked one inherits them), the first samples of a forked worker
    against its later ones, its statistics pickled and unpickled (what it sends back once)."""
    from tpudsl.ir.module import load_module
    from tpudsl.lowering.calibration import _interpreter, sample_stats
    from tpudsl.lowering.calibration_math import fine_bins
    from tpudsl.lowering.calibration_pool import local_fold

    costs = {"parse": timed(lambda: load_module(mlir))[1]}
    interp, costs["init"], _ = timed(lambda: _interpreter(mod))
    FORKED.update(interp=interp, loader=loader)
    (per_sample,) = local_fold(1, _timed_sample, fine_bins(2048), samples[:6], None)
    costs["first"], costs["later"] = per_sample[0], float(np.mean(per_sample[2:]))
    stats = sample_stats(interp, loader, samples[:8], fine_bins(2048))
    blob, costs["pickle"], _ = timed(lambda: pickle.dumps(stats))
    costs["unpickle"] = timed(lambda: pickle.loads(blob))[1]
    costs["mib"] = len(blob) / 2**20
    return costs


def resnet18_samples(work: Path, size: int, count: int):
    """The canonicalized ResNet-18-shaped model written to work/r18.mlir and `count` random .npz
    samples beside it: (onnx model, mlir path, sample paths); bench/calibration_memory.py uses it too."""
    from onnx_node.harness import apply_canonicalize, convert_onnx
    from tests.models import resnet18
    from tpudsl.ir.module import save_module

    model = resnet18(input_size=size)
    in_name = model.graph.input[0].name
    mlir = str(work / "r18.mlir")
    save_module(apply_canonicalize(convert_onnx(model, "resnet18")), mlir)
    rng = np.random.default_rng(0)
    samples = []
    for i in range(count):
        samples.append(str(work / f"s{i:03d}.npz"))
        np.savez(samples[-1], **{in_name: rng.standard_normal((1, 3, size, size)).astype(np.float32)})
    return model, mlir, samples


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--samples", type=int, default=24)
    ap.add_argument("--rounds", type=int, default=3, help="alternating 1- and 2-worker runs for the speed-up")
    ap.add_argument("--busy", action="store_true", help="keep one core busy with another process meanwhile")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    import onnxruntime as ort

    from tpudsl.cli.calibration_run import sample_loader
    from tpudsl.interp import ModuleInterpreter
    from tpudsl.ir.module import load_module
    from tpudsl.lowering.calibration import calibrate
    from tpudsl.lowering.calibration_math import FineHistogram, fine_bins

    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.busy else None
    load0 = os.getloadavg()
    tmp = tempfile.TemporaryDirectory(prefix="bench_calibration_")
    try:
        work = Path(tmp.name)
        model, mlir, samples = resnet18_samples(work, args.size, args.samples)
        in_name = model.graph.input[0].name
        mod = load_module(mlir)
        loader = sample_loader(mod)
        n = len(samples)

        # onnxruntime alone on the same samples (arrays in memory)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        xs = [loader(s)[in_name] for s in samples]
        sess.run(None, {in_name: xs[0]})
        _, ort_cpu, ort_wall = timed(lambda: [sess.run(None, {in_name: x}) for x in xs])

        # calibration, one process
        result, cal_cpu, cal_wall = timed(lambda: calibrate(mlir, samples, loader, mod=mod))
        _, kld_cpu, _ = timed(lambda: result.table("kld"))

        # its parts, one sample at a time (all of a ResNet-18's tensors are 13.7 MiB per sample)
        interp = ModuleInterpreter(mod.module, mod.weights)
        interp.init()
        fine = {k: FineHistogram(fine_bins(2048)) for k in result.ranges}
        read_cpu = run_cpu = minmax_cpu = hist_cpu = 0.0
        for s in samples:
            feeds, cpu, _ = timed(lambda: loader(s))
            read_cpu += cpu
            acts, cpu, _ = timed(lambda: interp.inference(feeds, keep_all=True))
            run_cpu += cpu
            acts = {k: np.asarray(v, np.float32) for k, v in acts.items() if k in result.ranges}
            sample_range, cpu, _ = timed(lambda: {k: (float(v.min()), float(v.max())) for k, v in acts.items()})
            minmax_cpu += cpu
            hist_cpu += timed(lambda: [fine[k].add(v, max(-sample_range[k][0], sample_range[k][1]))
                                       for k, v in acts.items()])[1]
        del acts
        _, rebin_cpu, _ = timed(lambda: [fine[k].coarse(max(-lo, hi), 2048) for k, (lo, hi) in result.ranges.items()])
        sent = len(pickle.dumps(fine))  # about what each worker sends back once
        costs = worker_costs(mlir, mod, loader, samples, fine)

        # --workers 2 against 1 (wall), and the CPU both spent
        # --workers 2 against 1, alternating, `rounds` times each: the least wall time of each (other
        # jobs only ever add time); the CPU of the 2-worker run with the least wall.
        walls1, runs2 = [cal_wall], []
        for r in range(args.rounds):
            if r:
                walls1.append(timed(lambda: calibrate(mlir, samples, loader, mod=mod))[2])
            c0 = children_cpu()
            _, cpu, wall = timed(lambda: calibrate(mlir, samples, loader, workers=2, mod=mod))
            runs2.append((wall, cpu, children_cpu() - c0))
        one_wall = min(walls1)
        par_wall, par_cpu, par_children = min(runs2)
    finally:
        tmp.cleanup()
        if busy is not None:
            busy.kill()
            busy.wait()
    load1 = os.getloadavg()

    ms = lambda cpu: f"{cpu / n * 1e3:.1f} ms"
    ratio = (n / cal_cpu) / (n / ort_cpu)
    speedup = one_wall / par_wall
    parts = run_cpu + read_cpu + minmax_cpu + hist_cpu
    setting = "--busy: another process keeps one core busy" if args.busy else "no load of ours; the machine was not quiet"
    key = "calibration_busy" if args.busy else "calibration"
    text = "\n".join([
        f"## calibration: run_calibration vs onnxruntime, and --workers 2 ({setting})",
        "",
        f"Command: `{'' if 'OPENBLAS_CORETYPE' in os.environ else 'env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE '}"
        f".venv/bin/python bench/calibration.py --size {args.size} --samples {n} --rounds {args.rounds}"
        f"{' --busy' if args.busy else ''}` "
        f"({time.strftime('%Y-%m-%d %H:%M')}; `uptime` load average {load0[0]:.2f} before, {load1[0]:.2f} after, on "
        f"{os.cpu_count()} cores shared with other engineers' jobs; one BLAS / ORT thread per process; numpy's BLAS "
        f"kernels: {_common.blas_kernels()}).",
        "",
        f"- model: tests/models resnet18 (canonicalized), input 1x3x{args.size}x{args.size}, {n} .npz samples, kld, 2048 bins",
        f"- CPU time per sample: onnxruntime {ms(ort_cpu)}; calibration {ms(cal_cpu)} "
        f"(wall {ort_wall / n * 1e3:.1f} and {cal_wall / n * 1e3:.1f} ms)",
        f"- **calibration / onnxruntime throughput = {ratio:.2f}** (CPU time; target >= 0.4: "
        f"{'meets' if ratio >= 0.4 else 'misses'}); wall-time ratio {ort_wall / cal_wall:.2f}",
        f"- where calibration's CPU goes, per sample: interpreter {ms(run_cpu)} (once, all tensors kept); "
        f"npz reading {ms(read_cpu)}; min/max {ms(minmax_cpu)}; "
        f"fine histograms ({fine_bins(2048)} bins) {ms(hist_cpu)}; "
        f"sum {ms(parts)} (measured separately, after the calibration run: {ms(cal_cpu)}), interpreter "
        f"{run_cpu / parts:.0%} of it; once per table: rebinning all {len(result.ranges)} tensors "
        f"{rebin_cpu * 1e3:.1f} ms, "
        f"KLD search {kld_cpu * 1e3:.1f} ms",
        f"- **--workers 2 speed-up {speedup:.2f}x wall** (target >= 1.6 on 2 cores: {'meets' if speedup >= 1.6 else 'misses'}): "
        f"{one_wall:.2f} s -> {par_wall:.2f} s (least of {args.rounds} alternating runs each; all: "
        f"{', '.join(f'{w:.2f}' for w in walls1)} and {', '.join(f'{r[0]:.2f}' for r in runs2)} s); "
        f"CPU of the 2-worker run {par_cpu + par_children:.2f} s "
        f"(parent {par_cpu:.2f} + workers {par_children:.2f}) against {cal_cpu:.2f} s in one process; "
        f"on 2 free cores that is a speed-up of {cal_cpu / (par_cpu + par_children / 2):.2f}x (CPU time, workers evenly loaded; "
        f"forked workers inherit the parent's initialised interpreter; each sends its statistics back once, "
        f"{sent / 2**20:.1f} MiB pickled for all {n} samples' histograms)",
        f"- where a worker's time could go (CPU): module parse {costs['parse'] * 1e3:.0f} ms and interpreter init "
        f"{costs['init'] * 1e3:.0f} ms (a spawned worker's; forked workers inherit both: 0); fork and imports 0 (fork); "
        f"a forked worker's first sample {costs['first'] * 1e3:.0f} ms against {costs['later'] * 1e3:.0f} ms for its "
        f"3rd-6th (copy-on-write page faults); its statistics ({costs['mib']:.1f} MiB after 8 samples) pickled "
        f"{costs['pickle'] * 1e3:.1f} ms, unpickled {costs['unpickle'] * 1e3:.1f} ms; BLAS: one thread per process",
    ])
    _common.publish(key, text, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())

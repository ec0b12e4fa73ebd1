"""The cmodel on a ResNet-18-shaped model in F32 or INT8: wall time against the Tpu interpreter on the
same input (both in this process, numpy pinned to one thread), the cost model's cycles (serial, and with
the engines overlapped by schedule.py), the instruction count and the .bmodel's size; outputs checked
to agree (F32: 1e-5 relative; INT8: bit-exact).
INT8 calibrates (minmax) on two random samples first, and compiles as model_deploy does
(--weight-reorder merges the conv coefficients); sections `cmodel` and `cmodel_int8`. With
--asymmetric (INT8 with zero points, uint8 tensors: the records 53-59), section `cmodel_int8_asym`,
which also compiles the symmetric model for its cycles.

    .venv/bin/python bench/cmodel.py [--quantize F32|INT8] [--asymmetric] [--size 224] [--chip bm1684x] [--runs 3]
        [--no-write]
"""

from __future__ import annotations

from pathlib import Path

import _common  # noqa: E402

_common.pin_one_thread()

import argparse  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402

import numpy as np  # noqa: E402

from tests.backend_support import compile_for, compile_int8, int8_module, interpret, lowered  # noqa: E402
from tests.models import resnet18  # noqa: E402
from tpudsl.backend import cost, isa  # noqa: E402
from tpudsl.backend.chips import chip_named  # noqa: E402
from tpudsl.backend.cmodel import run_bmodel  # noqa: E402
from tpudsl.backend.schedule import schedule  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--chip", default="bm1684x")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quantize", choices=["F32", "INT8"], default="F32")
    ap.add_argument("--asymmetric", action="store_true")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    asym = args.quantize == "INT8" and args.asymmetric
    sym_cycles = None
    model, shape = resnet18(input_size=args.size, num_classes=1000), (1, 3, args.size, args.size)
    with tempfile.TemporaryDirectory() as d:
        if args.quantize == "INT8":  # two copies: the interpreter does not run merged coefficients
            top, compiled, compile_ = (int8_module(model, shape, Path(d), args.chip, asymmetric=asym),
                                       int8_module(model, shape, Path(d), args.chip, asymmetric=asym), compile_int8)
            if asym:  # the symmetric compilation's cycles, to compare
                sym = compile_int8(int8_module(model, shape, Path(d), args.chip), os.path.join(d, "sym.bmodel"))
                sym_cycles = (sym.header["estimated_cycles"], sym.header["overlapped_cycles"], sym.header["gdma_count"],
                              sym.header["bdc_count"], len(sym.commands))
        else:
            top = compiled = lowered(model, "F32", args.chip)
            compile_ = lambda t, p: compile_for(t, args.chip, p)  # noqa: E731
    feed = {"input": np.random.default_rng(0).random(shape, dtype=np.float32)}
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "r18.bmodel")
        t0 = time.perf_counter()
        interp_out = None
        bm = None
        interp_times, cmodel_times = [], []
        for _ in range(args.runs):  # alternate, so load from other jobs hits both
            t = time.perf_counter()
            interp_out = interpret(top, feed)
            interp_times.append(time.perf_counter() - t)
            if bm is None:
                t0 = time.perf_counter()
                bm = compile_(compiled, path)
                compile_s = time.perf_counter() - t0
                size = os.path.getsize(path)
            t = time.perf_counter()
            out, cycles = run_bmodel(bm, feed)
            cmodel_times.append(time.perf_counter() - t)
    (name, want), = interp_out.items()
    err = float(np.abs(out[name] - want).max() / np.abs(want).max())
    agree = ("bit-exact" if np.array_equal(out[name], want) else "NOT bit-exact") if args.quantize == "INT8" else \
        f"max relative error {err:.2e}"
    h = bm.header
    total = sum(cycles.values())
    key = "cmodel" if args.quantize == "F32" else "cmodel_int8_asym" if asym else "cmodel_int8"
    busy, records = Counter(), isa.decode(bm.commands)
    for r in records:
        busy[r.ENGINE] += cost.cycles(r, chip_named(args.chip))
    t = time.perf_counter()
    for _ in range(10):
        schedule(records, chip_named(args.chip))
    sched_s = (time.perf_counter() - t) / 10
    chip_mhz = {"bm1684x": 1000, "bm1688": 900, "tiny": 100}[args.chip]
    ci, cc = statistics.median(interp_times), statistics.median(cmodel_times)
    mode = f"{args.quantize}{' asymmetric' if asym else ''}"
    text = "\n".join([
        f"## {key}: ResNet-18-shaped {mode} on the cmodel vs the Tpu interpreter",
        "",
        f"Command: `.venv/bin/python bench/cmodel.py --quantize {args.quantize}{' --asymmetric' if asym else ''} "
        f"--size {args.size} --chip {args.chip} --runs {args.runs}`",
        f"({time.strftime('%Y-%m-%d %H:%M')}, one numpy thread, machine shared with other jobs, "
        f"load average {os.getloadavg()[0]:.1f}).",
        "",
        f"- model: tests/models resnet18 width 64, input 1x3x{args.size}x{args.size}, 1000 classes",
        f"- Tpu interpreter median {ci * 1e3:.0f} ms, cmodel median {cc * 1e3:.0f} ms over {args.runs} runs: "
        f"**ratio cmodel/interpreter = {cc / ci:.2f}**",
        f"- instructions: {h['gdma_count']} GDMA + {h['bdc_count']} BDC; estimated {total} cycles "
        f"({total / chip_mhz / 1e3:.2f} ms at {chip_mhz} MHz) one after another",
        f"- with GDMA and BDC overlapped (schedule.py, the header's overlapped_cycles): {h['overlapped_cycles']} "
        f"cycles, **overlapped/serial = {h['overlapped_cycles'] / total:.3f}**; the engines are busy "
        f"{busy['gdma']} (GDMA) and {busy['bdc']} (BDC) cycles, so no order of these records beats "
        f"{max(busy.values())} ({max(busy.values()) / total:.3f} of serial); schedule() takes {sched_s * 1e3:.1f} ms "
        f"({sched_s / cc:.4f} of a cmodel run)",
        f"- .bmodel: {size} bytes ({len(bm.commands)} of commands); coefficients {h['coeff_mem_bytes']} bytes, activations "
        f"{h['activation_mem_bytes']} bytes (reused by liveness)",
        f"- compile ({'weight-reorder, ' if args.quantize == 'INT8' else ''}address-assign, layer-group, codegen) "
        f"{compile_s:.2f} s; output {agree}",
        *([] if sym_cycles is None else [
            f"- symmetric INT8, the same model and calibration: {sym_cycles[0]} cycles serial, {sym_cycles[1]} "
            f"overlapped, {sym_cycles[2]} GDMA + {sym_cycles[3]} BDC, {sym_cycles[4]} bytes of commands: "
            f"**asymmetric/symmetric = {total / sym_cycles[0]:.3f} serial, {h['overlapped_cycles'] / sym_cycles[1]:.3f} "
            f"overlapped** (the cost model charges a record by its elements, zero points or not; the zero-point "
            f"fields cost {len(bm.commands) - sym_cycles[4]} bytes of commands)"]),
    ])
    _common.publish(key, text, write=not args.no_write)


if __name__ == "__main__":
    main()

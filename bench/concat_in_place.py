"""Concats merged in place: GDMA bytes and overlapped cycles with and without (docs/backend.md,
"Concats merged in place").

    .venv/bin/python bench/concat_in_place.py [--models densenet,yolov5s] [--mode F16] [--no-write]

Each zoo model (bench/zoo_deploy.py's sizes) goes through model_transform and model_deploy on
bm1684x twice in this process, with the default (the Concats TPU-MLIR merges are merged) and with
--no_concat_in_place; both bmodel checks must pass. The row gives the Concats merged of all, the
GDMA bytes the command stream moves (layer_group.traffic.gdma_bytes) and the cost model's
overlapped cycles, each pair and its ratio. Writes bench/RESULTS.md ("concat in place").
"""

from __future__ import annotations

import sys
from pathlib import Path

import _common  # noqa: E402

_common.pin_one_thread()

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import os  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import onnx  # noqa: E402
from zoo_deploy import transform, zoo  # noqa: E402


def measure(name: str, model: onnx.ModelProto, d: Path, mode: str) -> str:
    from tpudsl.backend import isa
    from tpudsl.backend.bmodel import read_bmodel
    from tpudsl.backend.layer_group.traffic import gdma_bytes
    from tpudsl.backend.slicing import attrs_of
    from tpudsl.cli import model_deploy
    from tpudsl.ir.module import load_module

    err = io.StringIO()
    figures = []
    with contextlib.redirect_stderr(err):
        mlir = transform(name, model, d)
        for flags in ([], ["--no_concat_in_place"]):
            out = d / ("off" if flags else "on")
            out.mkdir()
            model_deploy.run(["--mlir", mlir, "--quantize", mode, "--processor", "bm1684x", *flags,
                              "--model", str(out / "m.bmodel"), "--test_input", str(d / f"{name}_in_f32.npz")])
            bm = read_bmodel(out / "m.bmodel")
            final = load_module(next(out.glob("*_final.mlir")))
            concats = [op for op in final.main_func().walk() if op.name == "tpu.Concat"]
            merged = sum(1 for op in concats if attrs_of(op)["only_merge"])
            figures.append((merged, len(concats), gdma_bytes(isa.decode(bm.commands)), bm.header["overlapped_cycles"]))
    if err.getvalue().count("bmodel check passed") != 2:
        raise SystemExit(f"{name}: a bmodel check did not pass:\n{err.getvalue()[-2000:]}")
    (merged, total, b_on, c_on), (_, _, b_off, c_off) = figures
    return (f"| {name} | {merged} of {total} | {b_off} -> {b_on} ({b_on / b_off:.3f}) | "
            f"{c_off} -> {c_on} ({c_on / c_off:.3f}) |")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="densenet,yolov5s")
    p.add_argument("--mode", default="F16")
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args()
    models = zoo()
    rows = []
    cpu = time.process_time()
    for name in args.models.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            rows.append(measure(name, models[name](), Path(tmp), args.mode))
    load = os.getloadavg()[0]
    text = "\n".join([
        f"`bench/concat_in_place.py --models {args.models} --mode {args.mode}` ({time.strftime('%Y-%m-%d %H:%M')}, "
        f"load average {load:.1f}, {time.process_time() - cpu:.0f} s CPU): model_deploy on bm1684x, zoo sizes, "
        "--no_concat_in_place -> the default (bmodel checks passed both ways)",
        "", "| model | Concats merged | GDMA bytes | overlapped cycles |", "|---|---|---|---|", *rows])
    _common.publish("concat in place", text, write=not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())

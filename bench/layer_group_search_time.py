"""model_deploy's CPU time and its --layer-group share, per model and mode, and the .bmodels it writes,
so that two checkouts can be compared: a change to the group search that must not move any result
writes byte-identical files (`cmp`), and the times say what it saved.

    PYTHONPATH=CHECKOUT .venv/bin/python bench/layer_group_search_time.py --prep P --out DIR [--runs 3]

`--prep P` keeps each model's model_transform output and INT8 calibration table (made on the first
call, reused after: both checkouts deploy the same .mlir). Each deploy runs `--runs` times in this
process; the best CPU time is printed (the machine is shared: the best is the least disturbed).
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
import time  # noqa: E402



def models() -> dict:
    """name: (ONNX model builder, feed(model, seed)): the sizes the deploying tests use."""
    from tests import models as m
    from tests.models import random_inputs, yolo
    from tests.models.lm import llama_block, llama_inputs

    return {
        "resnet18": (lambda: m.resnet18(input_size=64, num_classes=10, width=16), random_inputs),
        "mobilenetv2": (lambda: m.mobilenetv2(input_size=64, num_classes=10, width_mult=0.35), random_inputs),
        "densenet": (lambda: m.densenet(input_size=32, growth=8, blocks=(2, 2), init_channels=8, num_classes=10),
                     random_inputs),
        "yolov5s": (lambda: yolo.yolov5s(input_size=64), random_inputs),
        "llama_block": (llama_block, lambda model, seed=0: llama_inputs(model, 12, seed)),
    }


def prepare(name: str, build, feed, d: Path) -> None:
    """model_transform's .mlir and a calibration table of 8 samples in `d` (skipped when there)."""
    if (d / "cali_table").exists():
        return
    d.mkdir(parents=True, exist_ok=True)
    _common.transform(name, build(), feed, d, calibrate=True)


def timed_layer_group() -> list[float]:
    """LayerGroupPass.apply wrapped so that each call's CPU time is appended to the returned list."""
    from tpudsl.backend.layer_group import LayerGroupPass

    spent: list[float] = []
    apply = LayerGroupPass.apply

    def timed(self, ctx, op):
        t = time.process_time()
        apply(self, ctx, op)
        spent.append(time.process_time() - t)

    LayerGroupPass.apply = timed
    return spent


def deploy(name: str, mode: str, d: Path, out: Path) -> None:
    from tpudsl.cli import model_deploy

    table = ["--calibration_table", str(d / "cali_table")] if mode == "INT8" else []
    with contextlib.redirect_stderr(io.StringIO()):
        model_deploy.run(["--mlir", str(d / f"{name}.mlir"), "--quantize", mode, "--processor", "bm1684x", *table,
                          "--model", str(out / f"{name}_{mode}.bmodel")])


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--prep", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--models", default="")
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    zoo = models()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    spent = timed_layer_group()
    print(f"load average at start {os.getloadavg()[0]:.1f}")
    for name in args.models.split(",") if args.models else zoo:
        build, feed = zoo[name]
        with contextlib.redirect_stderr(io.StringIO()):
            prepare(name, build, feed, Path(args.prep) / name)
        for mode in ("F32", "INT8"):
            total, group = [], []
            for _ in range(args.runs):
                spent.clear()
                t = time.process_time()
                deploy(name, mode, Path(args.prep) / name, out)
                total.append(time.process_time() - t)
                group.append(sum(spent))
            print(f"{name} {mode}: model_deploy {min(total):.2f} s CPU, --layer-group {min(group):.2f} s "
                  f"(best of {args.runs})", flush=True)
    print(f"load average at end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""bm1688 with one core against two (`--num_core 2`, docs/backend.md "Several cores"): the cost
model's cycles of the ResNet-18-shaped model of tests/models, F32 and INT8 (calibrated minmax on two
random samples, compiled as model_deploy does), each compiled with module.cores 1 and 2 in this
process and run on the cmodel on the same input (the two runs checked to agree: F32 1e-5 relative,
INT8 bit-exact).

    .venv/bin/python bench/multicore.py [--size 224] [--modes F32,INT8] [--no-write]
"""

from __future__ import annotations

from pathlib import Path

import _common  # noqa: E402

_common.pin_one_thread()

import argparse  # noqa: E402
import os  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from xdsl.dialects.builtin import IntegerAttr, i64  # noqa: E402

from tests.backend_support import int8_module, lowered  # noqa: E402
from tests.models import resnet18  # noqa: E402
from tpudsl.backend.bmodel import read_bmodel  # noqa: E402
from tpudsl.backend.cmodel import run_bmodel  # noqa: E402
from tpudsl.dialects import make_context  # noqa: E402
from tpudsl.passes import pass_class  # noqa: E402

CHIP = "bm1688"


def _compile(top, cores: int, path: str):
    """The .bmodel of the addressed module compiled for `cores` cores (layer-group decides again)."""
    top.module.attributes["module.cores"] = IntegerAttr(cores, i64)
    ctx = make_context()
    pass_class("layer-group")().apply(ctx, top.module)
    pass_class("codegen")(model_file=path).apply(ctx, top.module)
    return read_bmodel(path)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--modes", default="F32,INT8")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    load_before = os.getloadavg()
    rows = []
    shape = (1, 3, args.size, args.size)
    for mode in args.modes.split(","):
        model = resnet18(input_size=args.size, num_classes=1000)
        with tempfile.TemporaryDirectory() as d:
            top = lowered(model, mode, CHIP) if mode == "F32" else int8_module(model, shape, Path(d), CHIP)
        for step in ("weight-reorder", "address-assign"):  # as model_deploy (merges INT8 conv coefficients)
            pass_class(step)().apply(make_context(), top.module)
        feed = {"input": np.random.default_rng(0).random(shape, dtype=np.float32)}
        with tempfile.TemporaryDirectory() as d:
            one, two = (_compile(top, k, os.path.join(d, f"{k}.bmodel")) for k in (1, 2))
            (name, want), = run_bmodel(one, feed)[0].items()
            got = run_bmodel(two, feed)[0][name]
        err = float(np.abs(got.astype(np.float64) - want).max() / np.abs(want).max())
        assert err <= (1e-5 if mode == "F32" else 0), f"ResNet-18 {mode}: 2 cores differ from 1 by {err}"
        h1, h2 = one.header, two.header
        o1, o2 = h1["overlapped_cycles"], h2["overlapped_cycles"]
        rows.append(f"| ResNet-18 {mode} | {h1['estimated_cycles']} / {h2['estimated_cycles']} | {o1} / {o2} | "
                    f"**{o1 / o2:.2f}x** | {', '.join(map(str, h2['core_cycles']))} | "
                    f"{len(h1.get('layer_groups', []))} / {len(h2.get('layer_groups', []))} | {err:.1e} |")
    text = "\n".join([
        "## multicore: bm1688 with one core and with two (--num_core 2)",
        "",
        f"Command: `.venv/bin/python bench/multicore.py --size {args.size}"
        f"{'' if args.modes == 'F32,INT8' else ' --modes ' + args.modes}`",
        f"({time.strftime('%Y-%m-%d %H:%M')}, one numpy thread, `uptime` load average {load_before[0]:.2f} before, "
        f"{os.getloadavg()[0]:.2f} after). Input 1x3x{args.size}x{args.size}, 1000 classes, tests/models, "
        "--layer-group opt=2. Cycles: the cost model's, each phase (an op or a layer group, between barriers) "
        "as long as its slowest core, serial and with GDMA and BDC overlapped (backend/cores.py); busy: each "
        "core's overlapped cycles without its waits. Two cores give each op and group at least two slices "
        "where it has two rows, each core loading the weights it needs (the next group's first ones "
        "during the group before). INT8: calibrated (minmax) on two random samples.",
        "",
        "| model | serial cycles 1 / 2 cores | overlapped cycles 1 / 2 cores | speed-up | busy per core (2 cores) "
        "| groups of several ops 1 / 2 cores | max rel. diff of the outputs |",
        "|---|---|---|---|---|---|---|",
        *rows,
    ])
    _common.publish("multicore", text, write=not args.no_write)


if __name__ == "__main__":
    main()

"""bm1688 with one core against two (`--num_core 2`, docs/backend.md "Several cores"): the cost
model's cycles of the ResNet-18-shaped model of tests/models, F32 and INT8 (calibrated minmax on two
random samples, compiled as model_deploy does), each compiled with module.cores 1 and 2 in this
process and run on the cmodel on the same input (the two runs checked to agree: F32 1e-5 relative,
INT8 bit-exact).

`--model llama`: tests/models/lm.py's LLaMA decode block (block_cache, one token) W4BF16 with
LLM-TPU's --q_group_size 64, at two sizes, on one core, on two without --core-parallel and on two
with it (each A16MatMul split by columns, its Concat merged in place); every run's outputs equal to
the Tpu interpreter's bit for bit.

    .venv/bin/python bench/multicore.py [--size 224] [--modes F32,INT8] [--model resnet18|llama] [--no-write]
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
from tpudsl.ir.module import TopModule  # noqa: E402
from tpudsl.passes import pass_class  # noqa: E402

CHIP = "bm1688"


def _compile(top, cores: int, path: str):
    """The .bmodel of the addressed module compiled for `cores` cores (layer-group decides again)."""
    top.module.attributes["module.cores"] = IntegerAttr(cores, i64)
    ctx = make_context()
    pass_class("layer-group")().apply(ctx, top.module)
    pass_class("codegen")(model_file=path).apply(ctx, top.module)
    return read_bmodel(path)


LLM_SIZES = ({"hidden": 64, "intermediate": 128}, {"hidden": 512, "intermediate": 1024})  # heads 4, kv 2, seq 16


def _llm_lowered(model, feed):
    """The decode block lowered W4BF16 (q_group_size 64) for bm1688, and the Tpu interpreter's outputs."""
    from tpudsl.frontend.onnx_import import convert_onnx
    from tpudsl.interp import run_module

    top, ctx = convert_onnx(model, "block_cache"), make_context()
    for step in ("shape-infer", "canonicalize", "shape-infer"):
        pass_class(step)().apply(ctx, top.module)
    pass_class("processor-assign")(chip=CHIP, mode="W4BF16").apply(ctx, top.module)
    pass_class("convert-top-to-tpu")(q_group_size=64).apply(ctx, top.module)
    return top, run_module(top.module, top.weights, feed)


def _llm_cycles(lowered, want, feed, cores: int, split: bool, path: str):
    """A copy of the lowered block (core-parallel changes module and weights) compiled for `cores`
    cores as model_deploy does (with or without --core-parallel), its outputs checked bit-exact: the header."""
    top = TopModule(lowered.module.clone(), {k: v.copy() for k, v in lowered.weights.items()}, lowered.path)
    top.module.attributes["module.cores"] = IntegerAttr(cores, i64)  # as processor-assign num_core (_compile)
    ctx = make_context()
    for step in ("weight-reorder", *(["core-parallel"] if split else []), "address-assign", "layer-group"):
        pass_class(step)().apply(ctx, top.module)
    pass_class("codegen")(model_file=path).apply(ctx, top.module)
    bm = read_bmodel(path)
    got = run_bmodel(bm, feed)[0]
    assert all(np.array_equal(got[k], want[k]) for k in want), f"{cores} cores, split {split}: not bit-exact"
    return bm.header


def _llm(args, load_before) -> None:
    from tests.models.lm import llama_block, llama_inputs

    rows = []
    for size in LLM_SIZES:
        model = llama_block(cache=True, rsqrt="div", repeat="tile", **size)
        feed = llama_inputs(model, 11, seed=1)
        top, want = _llm_lowered(model, feed)
        with tempfile.TemporaryDirectory() as d:
            one, plain, split = (_llm_cycles(top, want, feed, cores, cut, os.path.join(d, f"{cores}{cut}.bmodel"))
                                 for cores, cut in ((1, False), (2, False), (2, True)))
        o1, o2, o3 = (h["overlapped_cycles"] for h in (one, plain, split))
        rows.append(f"| hidden {size['hidden']}, MLP {size['intermediate']} | {o1} | {o2} ({o1 / o2:.2f}x) | "
                    f"{o3} ({o1 / o3:.2f}x) | {', '.join(map(str, split['core_cycles']))} |")
    text = "\n".join([
        "## multicore_llm: a LLaMA decode block W4BF16 on bm1688, one core and two (--core-parallel)",
        "",
        "Command: `.venv/bin/python bench/multicore.py --model llama`",
        f"({time.strftime('%Y-%m-%d %H:%M')}, one numpy thread, `uptime` load average {load_before[0]:.2f} before, "
        f"{os.getloadavg()[0]:.2f} after). tests/models/lm.py llama_block(cache=True): one token, 4 heads, 2 kv "
        "heads, 16 cached positions, W4BF16 --q_group_size 64 (LLM-TPU's compile.sh), seven A16MatMuls; compiled "
        "as model_deploy does (--layer-group opt=2). Cycles: the cost model's overlapped ones, each phase as long "
        "as its slowest core. Two cores without --core-parallel: each op's slices dealt to the cores (an "
        "A16MatMul's one row cut along C when that is faster); with it: each A16MatMul split into per-core "
        "column parts placed on the cores, independent parts in one phase, their Concat merged in place. "
        "Every run's outputs equal the Tpu interpreter's bit for bit.",
        "",
        "| block | 1 core | 2 cores | 2 cores, --core-parallel | busy per core (--core-parallel) |",
        "|---|---|---|---|---|",
        *rows,
    ])
    _common.publish("multicore_llm", text, write=not args.no_write)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--modes", default="F32,INT8")
    ap.add_argument("--model", choices=("resnet18", "llama"), default="resnet18")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    load_before = os.getloadavg()
    if args.model == "llama":
        _llm(args, load_before)
        return
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

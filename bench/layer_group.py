"""Layer groups of several ops (--layer-group="opt=2") against groups of one (opt=1) on the
ResNet-18-shaped and MobileNetV2-shaped models of tests/models, F32 and INT8 (calibrated minmax on
two random samples, compiled as model_deploy does): the cost model's cycles and the GDMA bytes of
the command stream, the group search's time, and the cmodel's wall time, both compilations in this
process on the same input (outputs checked to agree: F32 1e-5 relative, INT8 bit-exact).

    .venv/bin/python bench/layer_group.py [--size 224] [--chip bm1684x] [--runs 3] [--no-write]
        [--models ResNet-18,MobileNetV2] [--modes F32,INT8]

It prints, per model, the GDMA bytes any grouping must move (layer_group/traffic.py's lower_bound:
every coefficient, the input elements the outputs need and every output once, read from the
module) and the share of the removable bytes (opt=1 minus the bound) that opt=2 removes.
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

import numpy as np  # noqa: E402

from tests.backend_support import lowered  # noqa: E402
from tests.backend_support import int8_module  # noqa: E402
from tests.models import mobilenetv2, resnet18  # noqa: E402
from tpudsl.backend import isa  # noqa: E402
from tpudsl.backend.bmodel import read_bmodel  # noqa: E402
from tpudsl.backend.cmodel import run_bmodel  # noqa: E402
from tpudsl.backend.layer_group.region import members as group_members  # noqa: E402
from tpudsl.backend.layer_group.traffic import gdma_bytes, lower_bound  # noqa: E402
from tpudsl.backend.chips import chip_named  # noqa: E402
from tpudsl.backend.cmodel.engine import op_names  # noqa: E402
from tpudsl.backend.cost import cycles  # noqa: E402
from tpudsl.backend.layer_group.emit import group_records  # noqa: E402
from tpudsl.backend.layer_group.plan import joins_groups, plan_group  # noqa: E402
from tpudsl.backend.slicing import KINDS  # noqa: E402
from tpudsl.dialects.opdef import loc_name  # noqa: E402
from tpudsl.dialects import make_context  # noqa: E402
from tpudsl.passes import pass_class  # noqa: E402

MODELS = {"ResNet-18": lambda size: resnet18(input_size=size, num_classes=1000),
          "MobileNetV2": lambda size: mobilenetv2(input_size=size, num_classes=1000)}


def _compile(top, opt: int, path: str, prefetch: bool = True) -> tuple[float, object]:
    """(CPU seconds of --layer-group, the .bmodel) of an addressed copy of the module (CPU time, not
    wall: the machine is shared, and the pass runs on one thread)."""
    ctx = make_context()
    t = time.process_time()
    pass_class("layer-group")(opt=opt, prefetch=prefetch).apply(ctx, top.module)
    seconds = time.process_time() - t
    pass_class("codegen")(model_file=path, embed_debug_info=True).apply(ctx, top.module)
    return seconds, read_bmodel(path)


def _gdma_bytes(bm) -> int:
    return gdma_bytes(isa.decode(bm.commands))


def _bdc_floor(top, one, chip) -> int:
    """BDC cycles of every op computed once and unsliced (an op that never joins groups: its records
    in the opt=1 stream `one`, the same in every grouping). No grouping's overlapped cycles go
    below it: a BDC record costs an issue cost plus work in proportion to its output rows, so slices
    add issue costs and a group's halo rows add work. Read on the module without groups."""
    records = isa.decode(one.commands)
    alone: dict[str, int] = {}
    for r, op_name in zip(records, op_names(one.debug, len(records)), strict=True):
        if r.ENGINE == "bdc":
            alone[op_name] = alone.get(op_name, 0) + cycles(r, chip)
    total = 0
    for op in top.module.walk():
        if op.name in KINDS and joins_groups(op):
            plan = plan_group([op], chip, 1, 1, check_memory=False)
            total += sum(cycles(r, chip) for _, r in group_records(plan, lambda t: 0) if r.ENGINE == "bdc")
        elif op.name in KINDS:
            total += alone.get(loc_name(op), 0)
    return total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--chip", default="bm1684x")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated, of " + ", ".join(MODELS))
    ap.add_argument("--modes", default="F32,INT8")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    load_before = os.getloadavg()
    rows = []
    for (name, build), mode in ((m, q) for q in args.modes.split(",") for m in MODELS.items()
                                if m[0] in args.models.split(",")):
        shape = (1, 3, args.size, args.size)
        with tempfile.TemporaryDirectory() as d:
            top = lowered(build(args.size), mode, args.chip) if mode == "F32" else \
                int8_module(build(args.size), shape, Path(d), args.chip)
        for step in ("weight-reorder", "address-assign"):  # as model_deploy (merges INT8 conv coefficients)
            pass_class(step)().apply(make_context(), top.module)
        bound = lower_bound(top.module)  # before --layer-group: every coefficient, input and output once
        feed = {"input": np.random.default_rng(0).random((1, 3, args.size, args.size), dtype=np.float32)}
        with tempfile.TemporaryDirectory() as d:
            one_s, one = _compile(top, 1, os.path.join(d, "one.bmodel"))
            floor = _bdc_floor(top, one, chip_named(args.chip))
            _, no_prefetch = _compile(top, 2, os.path.join(d, "no_prefetch.bmodel"), prefetch=False)
            search_s, grouped = _compile(top, 2, os.path.join(d, "groups.bmodel"))
            groups = [op for op in top.module.walk() if op.name == "tpu.Group"]
            members = sum(len(group_members(g)) for g in groups)
            prefetched = sum(1 for g in groups if g.attributes.get("other_up_overlap_op"))
            times = {"one": [], "groups": []}
            outs = {}
            for _ in range(args.runs):  # alternate, so load from other jobs hits both
                for key, bm in (("one", one), ("groups", grouped)):
                    t = time.perf_counter()
                    outs[key], _ = run_bmodel(bm, feed)
                    times[key].append(time.perf_counter() - t)
        (out, want), = outs["one"].items()
        err = float(np.abs(outs["groups"][out].astype(np.float64) - want).max() / np.abs(want).max())
        assert err <= (1e-5 if mode == "F32" else 0), f"{name} {mode}: groups differ from groups of one by {err}"
        c1, c2 = one.header["estimated_cycles"], grouped.header["estimated_cycles"]
        o1, o2 = one.header["overlapped_cycles"], grouped.header["overlapped_cycles"]
        o3 = no_prefetch.header["overlapped_cycles"]
        b1, b2 = _gdma_bytes(one), _gdma_bytes(grouped)
        assert bound <= b2, f"{name} {mode}: opt=2 moves {b2} GDMA bytes, below the bound {bound}"
        share = (b1 - b2) / (b1 - bound)  # of the removable bytes, the share opt=2 removes
        w1, w2 = statistics.median(times["one"]), statistics.median(times["groups"])
        fewer = lambda a, b: f"**{100 * (1 - b / a):.1f}%**"  # noqa: E731
        assert floor <= o2, f"{name} {mode}: opt=2 takes {o2} overlapped cycles, below the BDC floor {floor}"
        rows.append(f"| {name} {mode} | {c1} / {c2} | {fewer(c1, c2)} | {o1} / {o3} / {o2} | {fewer(o1, o3)} / "
                    f"{fewer(o1, o2)} | {floor} ({fewer(o1, floor)}) | {b1} / {b2} | {fewer(b1, b2)} | {bound} ({fewer(b1, bound)}) | {100 * share:.1f}% "
                    f"| {len(groups)} group{'s' if len(groups) != 1 else ''}, {members} ops, {prefetched} prefetched "
                    f"| {search_s:.2f} s (opt=1: {one_s:.2f} s) | {w1 * 1e3:.0f} / {w2 * 1e3:.0f} ms | {err:.1e} |")
    text = "\n".join([
        "## layer_group: groups of several ops (opt=2) vs groups of one (opt=1)",
        "",
        f"Command: `.venv/bin/python bench/layer_group.py --size {args.size} --chip {args.chip} --runs {args.runs}"
        f"{'' if args.models == ','.join(MODELS) else ' --models ' + args.models}"
        f"{'' if args.modes == 'F32,INT8' else ' --modes ' + args.modes}`",
        f"({time.strftime('%Y-%m-%d %H:%M')}, one numpy thread, machine shared with other jobs, `uptime` load "
        f"average {load_before[0]:.2f} before, {os.getloadavg()[0]:.2f} after, on 2 cores). Input "
        f"1x3x{args.size}x{args.size}, 1000 classes, tests/models. Cycles: the cost model's, serial (cost.py) and "
        f"with GDMA and BDC overlapped (schedule.py; the search minimizes these). GDMA bytes: every load, store and copy of the command stream (layer_group/traffic.py); bound: what any grouping moves at least, every coefficient, the input elements the outputs need and every output once (`lower_bound`, read from the module); share: (opt=1 - opt=2) / (opt=1 - bound); BDC floor: the BDC cycles of every op computed once unsliced, below which no grouping's overlapped cycles go. INT8: calibrated (minmax) on "
        f"two random samples, --weight-reorder first (merged conv coefficients), as model_deploy compiles.",
        "",
        "| model | serial cycles opt=1 / opt=2 | fewer | overlapped cycles opt=1 / opt=2 without / with weight "
        "prefetch | fewer (without / with) | BDC floor (fewer than opt=1) | GDMA bytes opt=1 / "
        "opt=2 | fewer than opt=1 | bound (fewer than opt=1) | share of the removable bytes removed | grouped | --layer-group CPU time | cmodel wall "
        "opt=1 / opt=2 (median) | max rel. diff |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        *rows,
    ])
    _common.publish("layer_group", text, write=not args.no_write)


if __name__ == "__main__":
    main()

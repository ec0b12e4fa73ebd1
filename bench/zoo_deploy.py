"""Which zoo models deploy to a .bmodel end to end and pass the third check (issue 11).

    .venv/bin/python bench/zoo_deploy.py [--models a,b] [--mode F32] [--no-write]

Each model of tests/models (small inputs and widths, so that the whole zoo takes about a minute)
goes through model_transform (with --test_input) and model_deploy --quantize MODE --processor
bm1684x in this process, as a user would run them (INT8: run_calibration first, on 8 random
samples). The row says "bmodel check passed" when the
cmodel's outputs matched the Tpu interpreter's (the third check), else the op model_deploy stopped
at, or the error. Writes the table to bench/RESULTS.md ("zoo deploy MODE"); with --models only
those rows are replaced (the others, and the line of the run they come from, are kept), so that
models added to the zoo are measured without re-running the rest.
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
import re  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import onnx  # noqa: E402


def zoo() -> dict:
    from tests import models as m
    from tests.models import yolo
    from tests.models.crnn import crnn
    from tests.models.lraspp import lraspp_mobilenetv3
    from tests.models.mobilevit import mobilevit_xxs
    from tests.models.regnet import regnet_y
    from tests.models.squeezenet import squeezenet1_1
    from tests.models.swin import swin_stage
    from tests.models.unet import unet

    return {
        "resnet18": lambda: m.resnet18(input_size=32, width=8, num_classes=10),
        "mobilenetv2": lambda: m.mobilenetv2(input_size=32, width_mult=0.25, num_classes=10),
        "efficientnet_silu": lambda: m.efficientnet(input_size=32, max_repeats=1, width=0.25, num_classes=10),
        "efficientnet_hardswish": lambda: m.efficientnet(input_size=32, max_repeats=1, width=0.25, num_classes=10,
                                                         act="hardswish"),
        "convnext": lambda: m.convnext(input_size=32, dims=(8, 16, 24, 32), depths=(1, 1, 1, 1), num_classes=10),
        "shufflenet": lambda: m.shufflenet(input_size=32, stage_channels=(8, 16, 32), repeats=(1, 1, 1),
                                           last_channels=32, num_classes=10),
        "vit": lambda: m.vit(input_size=32, patch=8, d_model=16, depth=2, num_heads=2, num_classes=10),
        "densenet": lambda: m.densenet(input_size=32, growth=8, blocks=(2, 2), init_channels=8, num_classes=10),
        "transformer": lambda: m.transformer_block(seq_len=8, d_model=16, num_heads=2, d_ff=32),
        "east_decoder": lambda: m.east_decoder(channels=(32, 32, 16, 8), merge_channels=(8, 8, 8), base_size=4),
        "stylegan2_block": lambda: m.stylegan2_block(),
        "yolov5s": lambda: yolo.yolov5s(input_size=64),
        "yolov8n": lambda: yolo.yolov8n(input_size=64),
        "swin_stage": lambda: swin_stage(input_size=32),
        "unet": lambda: unet(input_size=32),
        "crnn": lambda: crnn(width=64),
        "lraspp_mobilenetv3": lambda: lraspp_mobilenetv3(input_size=64),
        "mobilevit_xxs": lambda: mobilevit_xxs(input_size=32),
        "regnet_y": lambda: regnet_y(input_size=32),
        "squeezenet1_1": lambda: squeezenet1_1(input_size=40),
    }


def transform(name: str, model: onnx.ModelProto, d: Path) -> str:
    """The model through model_transform in `d` on random inputs (`_common.transform`: its Top
    check against onnxruntime); the .mlir's path (bench/concat_in_place.py's step)."""
    from tests.models import random_inputs

    return _common.transform(name, model, random_inputs, d)[0]


def deploy(name: str, model: onnx.ModelProto, d: Path, mode: str) -> str:
    from tests.models import random_inputs
    from tpudsl.cli import model_deploy

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            mlir, table = _common.transform(name, model, random_inputs, d, calibrate=mode == "INT8")
            model_deploy.run(["--mlir", mlir, "--quantize", mode, "--processor", "bm1684x", *table,
                              "--model", str(d / f"{name}.bmodel"), "--test_input", str(d / f"{name}_in_f32.npz")])
    except Exception as e:  # noqa: BLE001  (the row reports it)
        return "error: " + str(e).splitlines()[0].removeprefix("error: ")[:160]
    text = err.getvalue()
    stopped = re.search(r"no instructions for (.*?) yet", text)
    if stopped:
        return f"stopped at {stopped.group(1)}"
    passed = re.search(r"bmodel check passed[^\n]*", text)
    return passed.group(0) if passed else f"no third check: {text.strip().splitlines()[-1][:160]}"


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--models", default="")
    p.add_argument("--mode", default="F32")
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args()
    models = zoo()
    names = args.models.split(",") if args.models else list(models)
    rows = {}
    cpu = time.process_time()
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            result = deploy(name, models[name](), Path(tmp), args.mode)
        rows[name] = f"| {name} | {result} |"
        print(rows[name], flush=True)
    load = os.getloadavg()[0]
    selected = f" --models {args.models}" if args.models else ""
    line = (f"`bench/zoo_deploy.py --mode {args.mode}{selected}` ({time.strftime('%Y-%m-%d %H:%M')}, load average "
            f"{load:.1f}, {time.process_time() - cpu:.0f} s CPU): model_deploy on bm1684x, small sizes")
    key = f"zoo deploy {args.mode}"
    old = _common.read_section(key) if args.models else None
    lines, table = merged_rows(old, line, rows, list(models))
    if not args.no_write:
        _common.write_section(key, "\n".join([*lines, "", "| model | result |", "|---|---|", *table]))
    return 0


def merged_rows(old: str | None, line: str, new: dict[str, str], order: list[str]) -> tuple[list[str], list[str]]:
    """The section's run lines and rows: `new`'s rows (by model) over the `old` section's, in the zoo's
    order; the old run lines stay above this run's `line` when any of their rows are kept."""
    if old is None:
        return [line], list(new.values())
    head, _, table = old.partition("\n\n")
    kept = {m.group(1): row for row in table.splitlines() if (m := re.match(r"\| (\S+) \|", row))
            and m.group(1) != "model" and m.group(1) not in new}
    rows = {**kept, **new}
    return ([*head.splitlines(), line] if kept else [line]), [rows[n] for n in order if n in rows]


if __name__ == "__main__":
    sys.exit(main())

"""INT8 accuracy and coverage: output cosine with Top and the share of ops lowered in INT8.

For ResNet-18-, MobileNetV2-, transformer-block- and ViT-shaped models (tests/models, small sizes):
calibrate on 32 random samples (KLD), lower symmetric INT8, symmetric with matmul_perchannel and
asymmetric INT8, and report the mean output cosine with the Top interpreter over 8 other inputs,
and the share of Tpu ops (Casts and RequantInts not counted) whose result is quantized.

`--baseline DIR` runs the same measurement on the tpudsl checkout in DIR (e.g. main before a
change) in a subprocess, for the before/after table; modes that checkout rejects are "n/a".

    .venv/bin/python bench/int8_accuracy.py --baseline /path/to/main [--no-write]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import ROOT, pin_one_thread, publish

MODES = {"sym": {}, "sym+perchannel": {"matmul_perchannel": True}, "asym": {"asymmetric": True}}


def _models():
    from tests.models import mobilenetv2, resnet18, transformer_block, vit

    return {"resnet18": (resnet18(input_size=32, num_classes=10, width=8), "input", (1, 3, 32, 32)),
            "mobilenetv2": (mobilenetv2(input_size=32, num_classes=10, width_mult=0.25), "input", (1, 3, 32, 32)),
            "transformer": (transformer_block(seq_len=16, d_model=64, num_heads=4, d_ff=128), "x", (1, 16, 64)),
            "vit": (vit(input_size=32, patch=8, d_model=32, depth=2, num_heads=2, num_classes=10), "input",
                    (1, 3, 32, 32))}


def measure() -> dict:
    import numpy as np

    from tests.test_tpu_float import top_module
    from tpudsl.ir.module import save_module
    from tpudsl.lowering.calibration import calibrate
    from tpudsl.lowering.calibration_table import table_text

    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for name, (model, input_name, shape) in _models().items():
            save_module(top_module(model), d / "m.mlir")
            rng = np.random.default_rng(0)
            feeds = {str(i): {input_name: rng.random(shape, dtype=np.float32)} for i in range(32)}
            result = calibrate(str(d / "m.mlir"), list(feeds), feeds.__getitem__)
            (d / "table").write_text(table_text(result.table("kld"), 2048, 32))
            top = top_module(model)
            for mode, options in MODES.items():
                try:
                    out[f"{name}/{mode}"] = _one(d, top, input_name, shape, mode, options)
                except Exception as e:  # a mode this checkout does not have, or a run that fails there
                    out[f"{name}/{mode}"] = {"error": str(e).splitlines()[0]}
    return out


def _one(d: Path, top, input_name: str, shape: tuple, mode: str, options: dict) -> dict:
    import numpy as np

    from tests.test_tpu_float import cosine, run
    from tpudsl.dialects import make_context
    from tpudsl.ir.module import load_module
    from tpudsl.passes import pass_class

    tpu = load_module(d / "m.mlir")
    ctx = make_context()
    pass_class("import-calibration-table")(file=str(d / "table"), asymmetric=mode == "asym").apply(ctx, tpu.module)
    pass_class("processor-assign")(chip="bm1684x", mode="INT8").apply(ctx, tpu.module)
    pass_class("convert-top-to-tpu")(**options).apply(ctx, tpu.module)
    ops = [op for op in tpu.main_func().walk()
           if op.name.startswith("tpu.") and op.name not in ("tpu.Cast", "tpu.RequantInt")]
    quantized = [op for op in ops if "quant.uniform" in str(op.results[0].type)]
    rng = np.random.default_rng(99)
    cosines = []
    for _ in range(8):
        feed = {input_name: rng.random(shape, dtype=np.float32)}
        cosines.append(cosine(run(tpu, feed)["output"], run(top, feed)["output"]))
    return {"cos": float(np.mean(cosines)), "int8": len(quantized), "ops": len(ops),
            "fallback": sorted({op.name for op in ops if op not in quantized})}


def _cell(r: dict | None) -> str:
    if r is None or "error" in r:
        return "n/a"
    return f"{r['cos']:.6f}, {r['int8']}/{r['ops']} INT8"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--baseline", default=None, help="a tpudsl checkout to measure as 'before'")
    p.add_argument("--json", action="store_true", help="print the measurement as JSON only (used for --baseline)")
    p.add_argument("--no-write", action="store_true", help="print, do not update bench/RESULTS.md")
    args = p.parse_args()
    pin_one_thread()
    if args.json:
        print(json.dumps(measure()))
        return
    before = {}
    if args.baseline:
        env = {**os.environ, "PYTHONPATH": f"{args.baseline}:{ROOT / 'tests'}:{ROOT}"}
        code = (f"import sys; sys.path[:0] = [{str(args.baseline)!r}, {str(ROOT)!r}, {str(ROOT / 'bench')!r}]; "
                "import json, int8_accuracy as b; print(json.dumps(b.measure()))")
        before = json.loads(subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True,
                                           text=True).stdout.strip().splitlines()[-1])
    after = measure()
    load = os.getloadavg()[0]
    import time

    lines = ["## int8_accuracy: INT8 output cosine with Top and share of ops in INT8", "",
             f"Command: `.venv/bin/python bench/int8_accuracy.py --baseline <main checkout>` "
             f"({time.strftime('%Y-%m-%d %H:%M')}; load average {load:.1f} on 2 cores).", "",
             "Calibration: 32 random samples, KLD; mean output cosine over 8 other inputs; ops: Tpu ops but "
             "Casts and RequantInts. Before: the checkout given to --baseline; n/a: the mode does not exist "
             "there or its run fails (main's tpu.Gather failed on every input, fixed here).", "",
             "| model / mode | before | after | F32 fallback ops after |", "|---|---|---|---|"]
    for key, r in after.items():
        lines.append(f"| {key} | {_cell(before.get(key)) if before else '-'} | {_cell(r)} | "
                     f"{', '.join(r.get('fallback', [])) or '-'} |")
    text = "\n".join(lines)
    publish("int8_accuracy", text, write=not args.no_write)


if __name__ == "__main__":
    main()

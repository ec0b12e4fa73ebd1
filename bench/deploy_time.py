"""INT8 deployment of the ResNet-18-shaped model, seconds per stage.

    .venv/bin/python bench/deploy_time.py [--size 224] [--samples 32] [--no-write]

Writes tests/models resnet18 (width 64, 1000 classes) as .onnx, then runs the three commands
in-process, as a user would in a row: model_transform (with --test_input), run_calibration on
--samples random .npz samples (KLD, one process; then again with --workers 2, whose CPU column is
the parent's only), model_deploy --quantize INT8 (imports the table,
lowers, writes NAME_bm1684x_int8_sym_tpu.mlir, runs the Tpu interpreter and compares with Top, then
the backend: weight-reorder, address-assign, layer-group, codegen to r.bmodel, and the cmodel run
compared bit for bit with the Tpu interpreter).
Reports wall and CPU seconds per stage and the machine's load average.
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
import onnx  # noqa: E402


def timed(stage: str, call, rows: list[tuple[str, float, float]]) -> None:
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        call()
    except SystemExit as e:  # the commands' run() returns; main-style wrappers exit
        if e.code not in (0, None):
            raise
    rows.append((stage, time.perf_counter() - wall, time.process_time() - cpu))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=224)
    ap.add_argument("--samples", type=int, default=32)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    from tests.models import resnet18
    from tpudsl.cli import model_deploy, model_transform, run_calibration

    work = Path(tempfile.mkdtemp(prefix="deploy_time_"))
    onnx.save(resnet18(input_size=args.size), work / "r.onnx")
    rng = np.random.default_rng(0)
    shape = (1, 3, args.size, args.size)
    np.savez(work / "in.npz", input=rng.random(shape, dtype=np.float32))
    (work / "data").mkdir()
    for i in range(args.samples):
        np.savez(work / "data" / f"s{i:03d}.npz", input=rng.random(shape, dtype=np.float32))

    rows: list[tuple[str, float, float]] = []
    timed("model_transform", lambda: model_transform.run(
        ["--model_name", "r", "--model_def", str(work / "r.onnx"), "--mlir", str(work / "r.mlir"),
         "--test_input", str(work / "in.npz")]), rows)
    timed(f"run_calibration ({args.samples} samples, kld)", lambda: run_calibration.main(
        [str(work / "r.mlir"), "--dataset", str(work / "data"), "--input_num", str(args.samples), "--quiet",
         "-o", str(work / "r_cali_table")]), rows)
    timed("(the same with --workers 2; the table is identical, not used below)", lambda: run_calibration.main(
        [str(work / "r.mlir"), "--dataset", str(work / "data"), "--input_num", str(args.samples), "--quiet",
         "--workers", "2", "-o", str(work / "r_cali_table_2")]), rows)
    timed("model_deploy --quantize INT8", lambda: model_deploy.run(
        ["--mlir", str(work / "r.mlir"), "--quantize", "INT8", "--processor", "bm1684x",
         "--calibration_table", str(work / "r_cali_table"), "--model", str(work / "r.bmodel"),
         "--test_input", str(work / "r_in_f32.npz")]), rows)

    load = os.getloadavg()[0]
    stamp = time.strftime("%Y-%m-%d %H:%M")
    lines = [
        "## deploy_time: INT8 deployment of the ResNet-18-shaped model",
        "",
        f"Command: `.venv/bin/python bench/deploy_time.py --size {args.size} --samples {args.samples}` "
        f"({stamp}; one BLAS thread; machine shared with other jobs, load average {load:.1f}).",
        "",
        "| stage | wall s | CPU s |",
        "|---|---|---|",
        *(f"| {stage} | {wall:.2f} | {cpu:.2f} |" for stage, wall, cpu in rows),
        f"| total (one calibration) | {sum(r[1] for r in rows if not r[0].startswith('(')):.2f} | "
        f"{sum(r[2] for r in rows if not r[0].startswith('(')):.2f} |",
    ]
    text = "\n".join(lines)
    _common.publish("deploy_time", text, write=not args.no_write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

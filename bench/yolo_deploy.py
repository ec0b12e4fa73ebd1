"""The sophon-demo flow on ultralytics-shaped YOLOv5s and YOLOv8n (tests/models/yolo.py).

    .venv/bin/python bench/yolo_deploy.py [--models v5,v5_raw,v8,v8_post] [--modes ...] [--no-write]

Each model goes through model_transform (--mean 0,0,0 --scale 1/255 --pixel_format rgb, checked
against onnxruntime), run_calibration on 8 random images, run_qtable (INT8 with its F16/BF16 layers),
and model_deploy INT8 (sym, asym, sym with the qtable), F16 and BF16 with --fuse_preprocess
--customization_format BGR_PACKED --quant_input, as sophon-demo's scripts deploy them. The raw
image is fed to the .bmodel (model_runner) and each output is compared with model_transform's Top
output of the preprocessed image: the cosine, and whether model_deploy's own checks passed (the Tpu
check of every tensor with --compare_all, then the cmodel's third check). The images are random
bytes, not photographs: calibration on them is what a user with unrepresentative samples gets.
Writes the table to bench/RESULTS.md ("yolo deploy").
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

import numpy as np  # noqa: E402
import onnx  # noqa: E402

SCALE = np.float32(0.0039216)
SIZE = 128
MODES = {
    "INT8 sym": ["--quantize", "INT8"],
    "INT8 asym": ["--quantize", "INT8", "--asymmetric"],
    "INT8 qtable": ["--quantize", "INT8", "qtable"],
    "F16": ["--quantize", "F16"],
    "BF16": ["--quantize", "BF16"],
}


def variants() -> dict:
    from tests.models.yolo import yolov5s, yolov8n

    return {
        "v5": (lambda: yolov5s(input_size=SIZE, opset=12), []),
        "v5_raw": (lambda: yolov5s(input_size=SIZE, opset=17),
                   ["--output_names", "head.m0,head.m1,head.m2", "--add_postprocess", "yolov5"]),
        "v8": (lambda: yolov8n(input_size=SIZE, opset=17), []),
        "v8_post": (lambda: yolov8n(input_size=SIZE, opset=17), ["--add_postprocess", "yolov8"]),
    }


def images(seed: int, n: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (n, SIZE, SIZE, 3), dtype=np.uint8)  # RGB, NHWC


def preprocessed(rgb: np.ndarray) -> np.ndarray:
    return (rgb.transpose(0, 3, 1, 2).astype(np.float32) * SCALE).astype(np.float32)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-30))


def boxes(detections: np.ndarray) -> int:
    """The kept boxes of a yolo_post output: rows with a score (the rest are zeros)."""
    return int((detections.reshape(-1, 7)[:, 2] > 0).sum())


def quiet(fn, *args):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
        try:
            fn(*args)
        except Exception as e:  # noqa: BLE001  (the row reports it)
            return err.getvalue(), str(e).splitlines()[0][:160]
    return err.getvalue(), None


def run_model(name: str, d: Path, modes: list[str]) -> list[str]:
    from tpudsl.cli import model_deploy, model_runner, model_transform, run_calibration, run_qtable

    build, flags = variants()[name]
    onnx.save(build(), d / "m.onnx")
    img = images(0, 1)
    np.savez(d / "in.npz", images=preprocessed(img))
    np.savez(d / "raw.npz", images_raw=np.ascontiguousarray(img[..., ::-1]))  # BGR_PACKED: NHWC, BGR
    log, error = quiet(model_transform.run, [
        "--model_name", name, "--model_def", str(d / "m.onnx"), "--mlir", str(d / "m.mlir"), "--mean", "0,0,0",
        "--scale", ",".join([str(SCALE)] * 3), "--pixel_format", "rgb", "--test_input", str(d / "in.npz"),
        "--test_result", str(d / "top.npz"), *flags])
    if error or "npz compare PASSED" not in log:
        return [f"| {name} | transform | {error or 'Top vs onnxruntime failed'} | | |"]
    rows = [f"| {name} | transform | Top vs onnxruntime passed | | |"]
    (d / "cali").mkdir()
    for i, sample in enumerate(images(1, 8)):
        np.savez(d / "cali" / f"{i}.npz", images=preprocessed(sample[None]))
    table = str(d / "cali_table")
    _, error = quiet(run_calibration._main, [str(d / "m.mlir"), "--dataset", str(d / "cali"), "--input_num", "8",
                                             "--quiet", "-o", table])
    if error:
        return [*rows, f"| {name} | calibration | {error} | | |"]
    if "INT8 qtable" in modes:
        _, error = quiet(run_qtable._main, [str(d / "m.mlir"), "--dataset", str(d / "cali"), "--input_num", "4",
                                            "--calibration_table", table, "--processor", "bm1684x", "--quiet",
                                            "--loss_table", str(d / "loss.txt"), "-o", str(d / "qtable")])
        if error:
            rows.append(f"| {name} | run_qtable | {error} | | |")
            print(rows[-1], flush=True)
            modes = [m for m in modes if m != "INT8 qtable"]
    reference = dict(np.load(d / "top.npz"))
    for mode in modes:
        args = [a for a in MODES[mode] if a != "qtable"]
        if "INT8" in mode:
            args += ["--calibration_table", table]
        if "qtable" in MODES[mode]:
            args += ["--quantize_table", str(d / "qtable")]
        bmodel = str(d / f"{mode.replace(' ', '_')}.bmodel")
        log, error = quiet(model_deploy.run, [
            "--mlir", str(d / "m.mlir"), *args, "--processor", "bm1684x", "--model", bmodel, "--fuse_preprocess",
            "--customization_format", "BGR_PACKED", "--quant_input", "--test_input", str(d / "raw.npz"),
            "--test_reference", str(d / "top.npz"), "--compare_all", "--tolerance", "0.9,0.5"])
        failed = re.search(r"^(\d+) failed", log, re.M)  # the Tpu check's count (--compare_all: every tensor)
        tpu = "passed" if error is None else error
        if error is None and "bmodel check passed" not in log:
            tpu = "no third check"
        out = d / "bm.npz"
        if error is None:
            _, error = quiet(model_runner.run, ["--input", str(d / "raw.npz"), "--model", bmodel, "--output", str(out)])
        cos = []
        if error is None:
            got = dict(np.load(out))
            for key, value in got.items():
                if key == "yolo_post":
                    cos.append(f"yolo_post {boxes(value)} boxes (Top: {boxes(reference[key])})")
                elif key in reference:
                    cos.append(f"{key} {cosine(value, reference[key]):.5f}")
        rows.append(f"| {name} | {mode} | {tpu} | {', '.join(cos)} | {failed.group(1) if failed else '?'} |")
        print(rows[-1], flush=True)
    return rows


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--models", default=",".join(variants()))
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args()
    rows = []
    cpu = time.process_time()
    for name in args.models.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            rows += run_model(name, Path(tmp), args.modes.split(","))
    load = os.getloadavg()[0]
    text = "\n".join([
        f"`bench/yolo_deploy.py` ({time.strftime('%Y-%m-%d %H:%M')}, load average {load:.1f}, "
        f"{time.process_time() - cpu:.0f} s CPU): {SIZE}x{SIZE}, bm1684x, --fuse_preprocess --customization_format "
        "BGR_PACKED --quant_input, 8 random calibration images; cosine of each .bmodel output against Top",
        "", "| model | step | model_deploy's checks | cosine vs Top | tensors the Tpu check failed |",
        "|---|---|---|---|---|", *rows])
    _common.publish("yolo deploy", text, not args.no_write)
    return 0


if __name__ == "__main__":
    sys.exit(main())

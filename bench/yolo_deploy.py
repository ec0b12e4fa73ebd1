"""The sophon-demo flow on ultralytics-shaped YOLOv5s and YOLOv8n (tests/models/yolo.py).

    .venv/bin/python bench/yolo_deploy.py [--models v5,v5_raw,v8,v8_post] [--modes ...] [--no-write]

Each model goes through model_transform (--mean 0,0,0 --scale 1/255 --pixel_format rgb, checked
against onnxruntime), run_calibration on 8 random images, run_qtable (INT8 with its F16/BF16 layers),
and model_deploy INT8 (sym, asym, sym with the qtable, and for YOLOv8 sym with a hand qtable of its
class Sigmoid and output Concat in F16, as sophon-demo ships, beside run_qtable's), F16 and BF16 with --fuse_preprocess
--customization_format BGR_PACKED --quant_input, as sophon-demo's scripts deploy them. The raw
image is fed to the .bmodel (model_runner) and each output is compared with model_transform's Top
output of the preprocessed image: the cosine, and whether model_deploy's own checks passed (the Tpu
check of every tensor with --compare_all, then the cmodel's third check). With --add_postprocess
the check leaves yolo_post out (--excepts: its rows jump where a score crosses the threshold,
docs/frontend.md "YOLO exports"); the heads' cosines (the .bmodel's dump) and the kept boxes are
reported. The images are random
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
import dataclasses  # noqa: E402
import io  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402

SIZE = 128
# mode -> (model_deploy's arguments, the qtable file in the work directory it takes, if any):
# "qtable" is run_qtable's output, "hand_qtable" the layers sophon-demo's hand-written qtable keeps F16.
MODES = {
    "INT8 sym": (["--quantize", "INT8"], None),
    "INT8 asym": (["--quantize", "INT8", "--asymmetric"], None),
    "INT8 qtable": (["--quantize", "INT8"], "qtable"),
    "INT8 hand qtable": (["--quantize", "INT8"], "hand_qtable"),
    "F16": (["--quantize", "F16"], None),
    "BF16": (["--quantize", "BF16"], None),
}


@dataclasses.dataclass(frozen=True)
class Variant:
    build: Callable[[], onnx.ModelProto]
    flags: list[str]
    heads: tuple[str, ...] = ()  # --add_postprocess's inputs: their cosines are reported, yolo_post's rows counted
    hand_qtable: tuple[str, ...] = ()  # the layers sophon-demo's hand-written qtable keeps F16


def variants() -> dict[str, Variant]:
    from tests.models.yolo import yolov5s, yolov8n

    heads = ("head.m0", "head.m1", "head.m2")
    v8_tail = ("model.22.cls_sigmoid", "output0")  # the class scores and the output Concat
    return {
        "v5": Variant(lambda: yolov5s(input_size=SIZE, opset=12), []),
        "v5_raw": Variant(lambda: yolov5s(input_size=SIZE, opset=17),
                          ["--output_names", ",".join(heads), "--add_postprocess", "yolov5"], heads),
        "v8": Variant(lambda: yolov8n(input_size=SIZE, opset=17), [], hand_qtable=v8_tail),
        "v8_post": Variant(lambda: yolov8n(input_size=SIZE, opset=17), ["--add_postprocess", "yolov8"], ("output0",),
                           v8_tail),
    }


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
    from tests.models.yolo import SCALE, images, preprocessed
    from tpudsl.cli import model_deploy, model_runner, model_transform, run_calibration, run_qtable
    from tpudsl.cli.compare import cosine_similarity
    from tpudsl.ir.module import load_module
    from tpudsl.lowering.top_to_tpu_int8 import int8_params

    v = variants()[name]
    onnx.save(v.build(), d / "m.onnx")
    img = images(0, SIZE)
    np.savez(d / "in.npz", images=preprocessed(img))
    np.savez(d / "raw.npz", images_raw=np.ascontiguousarray(img[..., ::-1]))  # BGR_PACKED: NHWC, BGR
    log, error = quiet(model_transform.run, [
        "--model_name", name, "--model_def", str(d / "m.onnx"), "--mlir", str(d / "m.mlir"), "--mean", "0,0,0",
        "--scale", ",".join([str(SCALE)] * 3), "--pixel_format", "rgb", "--test_input", str(d / "in.npz"),
        "--test_result", str(d / "top.npz"), *v.flags])
    if error or "npz compare PASSED" not in log:
        return [f"| {name} | transform | {error or 'Top vs onnxruntime failed'} | | |"]
    rows = [f"| {name} | transform | Top vs onnxruntime passed | | |"]
    (d / "cali").mkdir()
    for i, sample in enumerate(images(1, SIZE, 8)):
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
    (d / "hand_qtable").write_text("".join(f"{layer} F16\n" for layer in v.hand_qtable))
    reference = dict(np.load(d / "top.npz"))
    for mode in [m for m in modes if v.hand_qtable or m != "INT8 hand qtable"]:
        flags, qtable = MODES[mode]
        args = list(flags)
        if "INT8" in mode:
            args += ["--calibration_table", table]
        if qtable:
            args += ["--quantize_table", str(d / qtable)]
        if v.heads:  # the heads are judged; yolo_post's rows are counted below
            args += ["--excepts", "yolo_post"]
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
            dump = ["--dump_all_tensors"] if v.heads else []
            _, error = quiet(model_runner.run, ["--input", str(d / "raw.npz"), "--model", bmodel, "--output", str(out),
                                                *dump])
        cos = []
        if error is None:
            got = dict(np.load(out))
            if v.heads and "INT8" in mode:  # the dump holds an int8 tensor's stored values: dequantized here
                form = "asym" if "asym" in mode else "sym"
                lowered = load_module(next(d.glob(f"{name}_bm1684x_int8_{form}_tpu.mlir")))
                got = model_runner.dequantized(got, int8_params(lowered))
            for key in (*v.heads, *(k for k in got if k not in v.heads)):
                if key == "yolo_post":
                    cos.append(f"yolo_post {boxes(got[key])} boxes (Top: {boxes(reference[key])})")
                elif key in reference and (key in v.heads or not v.heads):
                    cos.append(f"{key} {cosine_similarity(got[key], reference[key]):.5f}")
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

"""INT8 accuracy and coverage: output cosine with Top and the share of ops lowered in INT8.

For ResNet-18-, MobileNetV2-, DenseNet-, transformer-block- and ViT-shaped models (tests/models, small
sizes): calibrate on 32 random samples (KLD), lower symmetric INT8, symmetric with matmul_perchannel
and asymmetric INT8, and report the mean output cosine with the Top interpreter over 8 other inputs,
and the share of Tpu ops (Casts and RequantInts not counted) whose result is quantized.

`qdq_conv_bn`: Conv -> BatchNorm -> ReLU twice, GAP, Gemm, quantized by onnxruntime's
quantize_static (QDQ, MinMax on the same 32 samples, per-channel weights) without quant_pre_process,
so each BatchNorm reads its Conv's Q/DQ pair and stays unfolded; int8 activations lowered as
model_deploy lowers a QDQ model (sym: matmul_perchannel), uint8 ones with asymmetric=true (asym).

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
    from tests.models import densenet, mobilenetv2, resnet18, transformer_block, vit

    return {"resnet18": (resnet18(input_size=32, num_classes=10, width=8), "input", (1, 3, 32, 32)),
            "mobilenetv2": (mobilenetv2(input_size=32, num_classes=10, width_mult=0.25), "input", (1, 3, 32, 32)),
            "densenet": (densenet(input_size=32, num_classes=10, growth=8, blocks=(2, 2), init_channels=16), "input",
                         (1, 3, 32, 32)),
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
                out[f"{name}/{mode}"] = _guarded(_one, d, top, input_name, shape, mode, options)
        for mode, activation in (("sym", "int8"), ("asym", "uint8")):
            out[f"qdq_conv_bn/{mode}"] = _guarded(_qdq, d, activation)
    return out


def _guarded(measure_one, *args) -> dict:
    try:
        return measure_one(*args)
    except Exception as e:  # a mode this checkout does not have, or a run that fails there
        return {"error": str(e).splitlines()[0]}


def _one(d: Path, top, input_name: str, shape: tuple, mode: str, options: dict) -> dict:
    from tpudsl.dialects import make_context
    from tpudsl.ir.module import load_module
    from tpudsl.passes import pass_class

    tpu = load_module(d / "m.mlir")
    pass_class("import-calibration-table")(file=str(d / "table"), asymmetric=mode == "asym").apply(make_context(),
                                                                                                    tpu.module)
    return _lowered_score(tpu, top, input_name, shape, options)


def _qdq_conv_bn():
    from tests.models.builder import GraphBuilder

    g = GraphBuilder("qdq_conv_bn", 0)
    x = g.relu(g.conv_bn(g.input("input", (1, 3, 32, 32)), "c1", 3, 16, 3), "r1")
    x = g.relu(g.conv_bn(x, "c2", 16, 16, 3, stride=2), "r2")
    g.output(g.gemm(g.node("Flatten", [g.node("GlobalAveragePool", [x], "gap")], "flat", axis=1), "output", 16, 10))
    return g.model()


def _qdq(d: Path, activation: str) -> dict:
    """The QDQ model through model_transform (its Q/DQ ranges: TOP_CALIBRATED), lowered as model_deploy
    lowers it."""
    import numpy as np
    import onnx
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static

    from tpudsl.cli import model_transform
    from tpudsl.ir.module import load_module

    class Reader:
        def __init__(self):
            rng = np.random.default_rng(0)
            self.feeds = iter([{"input": rng.random((1, 3, 32, 32), dtype=np.float32)} for _ in range(32)])

        def get_next(self):
            return next(self.feeds, None)

    onnx.save(_qdq_conv_bn(), d / "f.onnx")
    symmetric = activation == "int8"
    quantize_static(str(d / "f.onnx"), str(d / "q.onnx"), Reader(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QInt8 if symmetric else QuantType.QUInt8, weight_type=QuantType.QInt8,
                    per_channel=True, calibrate_method=CalibrationMethod.MinMax,
                    extra_options={"ActivationSymmetric": symmetric, "WeightSymmetric": True})
    model_transform.run(["--model_name", "q", "--model_def", str(d / "q.onnx"), "--mlir", str(d / "q.mlir")])
    options = {"matmul_perchannel": True} if symmetric else {"asymmetric": True, "matmul_perchannel": True}
    return _lowered_score(load_module(d / "q.mlir"), load_module(d / "q.mlir"), "input", (1, 3, 32, 32), options)


def _lowered_score(tpu, top, input_name: str, shape: tuple, options: dict) -> dict:
    """`tpu` (calibrated) lowered to INT8 with `options`, scored against `top`."""
    import numpy as np

    from tests.test_tpu_float import cosine, run
    from tpudsl.dialects import make_context
    from tpudsl.passes import pass_class

    ctx = make_context()
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
    if not r or "error" in r:
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
             "Casts and RequantInts. Before: the checkout given to --baseline; n/a: the model or mode does not "
             "exist there or its run fails.", "",
             "| model / mode | before | after | F32 fallback ops before | after |", "|---|---|---|---|---|"]
    for key, r in after.items():
        old = before.get(key) or {}
        lines.append(f"| {key} | {_cell(old) if before else '-'} | {_cell(r)} | "
                     f"{', '.join(old.get('fallback', [])) or '-'} | {', '.join(r.get('fallback', [])) or '-'} |")
    text = "\n".join(lines)
    publish("int8_accuracy", text, write=not args.no_write)


if __name__ == "__main__":
    main()

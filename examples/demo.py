"""`make demo`: the main jobs of tpudsl on bundled examples, run through the real commands.

1. tpuc-opt: a TPU-MLIR-style Top file (`#loc` aliases at the end, unranked results) is shape-inferred,
   and printing is shown to be a fixed point (print(parse(print(x))) == print(x)).
2. model_transform: a ResNet-18-shaped ONNX model (built here with onnx.helper) becomes Top .mlir + weights,
   checked against onnxruntime on a random input (--test_input).
3. model_runner runs the .mlir; the Top-vs-onnxruntime comparison table is printed.
4. model_deploy, the other two levels of TPU-MLIR's check: F32 lowered to Tpu (checked against Top), then
   through the backend to a .bmodel that runs on the cmodel (checked against the Tpu interpreter);
   model_tool describes the .bmodel. Then run_calibration on 8 samples and model_deploy INT8 (checked
   against Top, then to an INT8 .bmodel whose cmodel run equals the Tpu interpreter's bit for bit).
   The time of each step is printed at the end.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tests.models holds the ONNX model builders

from tests.models import onnx_inference, resnet18  # noqa: E402
from tpudsl.cli.compare import compare_arrays, measures  # noqa: E402

OUT = ROOT / "demo_out"
BIN = Path(sys.executable).parent
TIMES: list[tuple[str, float]] = []


def run(step: str, *argv: str) -> str:
    """Run one tpudsl command, echo it, time it; stop the demo if it fails."""
    print(f"\n$ {' '.join(argv)}", flush=True)
    start = time.perf_counter()
    proc = subprocess.run([str(BIN / argv[0]), *argv[1:]], cwd=OUT, capture_output=True, text=True)
    TIMES.append((step, time.perf_counter() - start))
    sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        sys.exit(f"demo failed at: {step}")
    return proc.stdout


def tpuc_opt_demo() -> None:
    shutil.copy(ROOT / "examples" / "resnet_block_origin.mlir", OUT)
    run("shape-infer", "tpuc-opt", "resnet_block_origin.mlir", "--shape-infer", "--mlir-print-debuginfo",
        "-o", "resnet_block.mlir")
    print((OUT / "resnet_block.mlir").read_text())
    again = run("round trip", "tpuc-opt", "resnet_block.mlir", "--mlir-print-debuginfo")
    same = again == (OUT / "resnet_block.mlir").read_text()
    print(f"round trip: {'identical' if same else 'DIFFERENT'}")
    if not same:
        sys.exit("demo failed: printing is not a fixed point")


def onnx_demo(size: int = 224) -> None:
    start = time.perf_counter()
    (OUT / "resnet18.onnx").write_bytes(resnet18(input_size=size).SerializeToString())
    x = np.random.default_rng(0).standard_normal((1, 3, size, size)).astype(np.float32)
    np.savez(OUT / "resnet18_in.npz", input=x)
    TIMES.append(("build ONNX model", time.perf_counter() - start))

    run("model_transform", "model_transform", "--model_name", "resnet18", "--model_def", "resnet18.onnx",
        "--input_shapes", f"[[1,3,{size},{size}]]", "--mlir", "resnet18.mlir",
        "--test_input", "resnet18_in.npz", "--test_result", "resnet18_top_outputs.npz")
    run("model_runner", "model_runner", "--input", "resnet18_in.npz", "--model", "resnet18.mlir",
        "--output", "resnet18_runner_outputs.npz")

    start = time.perf_counter()
    reference = onnx_inference(resnet18(input_size=size), {"input": x})
    TIMES.append(("onnxruntime", time.perf_counter() - start))
    ours = dict(np.load(OUT / "resnet18_runner_outputs.npz"))

    print("\nTop interpreter vs onnxruntime:")
    print(f"  {'output':<12} {'shape':<10} {'cosine':>10} {'euclid':>10} {'max |err|':>11}  verdict")
    for name, ref in reference.items():
        r = compare_arrays(ours[name], ref, (0.99, 0.99), name=name)
        m = measures(ours[name], ref)  # the verdict measures only what it needs; the table shows all
        shape = "x".join(map(str, ref.shape))
        print(f"  {name:<12} {shape:<10} {m.cosine:>10.7f} {m.euclid:>10.7f} {r.max_abs_error:>11.3e}  {r.verdict}")


def deploy_demo(size: int = 224) -> None:
    print(run("model_deploy F32", "model_deploy", "--mlir", "resnet18.mlir", "--quantize", "F32", "--processor", "bm1684x",
        "--model", "resnet18_f32.bmodel", "--test_input", "resnet18_in_f32.npz", "--tolerance", "0.99,0.99"))
    print(run("model_tool", "model_tool", "--info", "resnet18_f32.bmodel"))
    samples = OUT / "calibration_samples"
    samples.mkdir(exist_ok=True)
    rng = np.random.default_rng(1)
    for i in range(8):
        np.savez(samples / f"sample{i}.npz", input=rng.standard_normal((1, 3, size, size)).astype(np.float32))
    run("run_calibration", "run_calibration", "resnet18.mlir", "--dataset", "calibration_samples", "--input_num", "8",
        "--quiet", "-o", "resnet18_cali_table")
    print(run("model_deploy INT8", "model_deploy", "--mlir", "resnet18.mlir", "--quantize", "INT8",
              "--calibration_table", "resnet18_cali_table", "--processor", "bm1684x", "--model", "resnet18_int8.bmodel",
              "--test_input", "resnet18_in_f32.npz", "--tolerance", "0.99,0.9"))
    print(run("model_tool INT8", "model_tool", "--info", "resnet18_int8.bmodel"))


def main() -> None:
    OUT.mkdir(exist_ok=True)
    tpuc_opt_demo()
    onnx_demo()
    deploy_demo()
    print("\nstep times:")
    for step, seconds in TIMES:
        print(f"  {step:<18} {seconds:6.2f} s")
    print(f"\nfiles are in {OUT.relative_to(ROOT)}/")


if __name__ == "__main__":
    main()

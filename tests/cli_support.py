"""Running a command's main in the test process: its exit status and both streams, as a
subprocess would give them, without a Python start and the imports per call. Each command's
test file still runs its real script once (tools/*.py), so the entry point itself stays tested."""

from __future__ import annotations

import contextlib
import importlib
import io
import subprocess
from pathlib import Path

import numpy as np


def run_main(command: str, *args, cwd: Path | str | None = None) -> subprocess.CompletedProcess:
    """`command` is a module of tpudsl.cli (model_transform, model_runner, npz_tool, ...)."""
    main = importlib.import_module(f"tpudsl.cli.{command}").main
    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    status = 0
    with contextlib.ExitStack() as stack:
        if cwd is not None:
            stack.enter_context(contextlib.chdir(cwd))
        stack.enter_context(contextlib.redirect_stdout(out))
        stack.enter_context(contextlib.redirect_stderr(err))
        try:
            main(argv)
        except SystemExit as e:
            status = e.code
    return subprocess.CompletedProcess(argv, status, out.getvalue(), err.getvalue())


def run_model(model: Path | str, inputs: Path, output: Path, all_tensors: bool = False) -> dict:
    """model_runner on the npz `inputs` into `output` (exit status 0, else its stderr), and what it wrote."""
    r = run_main("model_runner", "--input", inputs, "--model", model, "--output", output,
                 *(["--dump_all_tensors"] if all_tensors else []))
    assert r.returncode == 0, r.stderr
    return dict(np.load(output))


def table_rows(path: Path) -> list[list[str]]:
    """The rows of a qtable or calibration table: each line that is neither blank nor a comment, split."""
    return [line.split() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def deploy_dir_int8(d: Path, table: Path | str, sample: str, tolerance: str,
                *extra: str | Path) -> subprocess.CompletedProcess:
    """model_deploy --quantize INT8 for bm1684x of `d`/m.mlir with the calibration `table` (relative
    to `d`), its Tpu check on `d`/data/`sample` at `tolerance` ("cosine,euclidean")."""
    return run_main("model_deploy", "--mlir", "m.mlir", "--quantize", "INT8", "--processor", "bm1684x",
                    "--calibration_table", table, "--model", "m.bmodel", "--test_input", f"data/{sample}",
                    "--tolerance", tolerance, *extra, cwd=d)

"""The CNNs that several INT8 test files calibrate the same way (test_tpu_int8, test_quant_asym):
ResNet-18- and MobileNetV2-shaped on 32x32 inputs, KLD over the same 32 random samples. Built once
per test process (`conftest.calibrated_cnn`), not once per test: calibrating and converting them is
most of each test's CPU, and the table does not depend on how a test then lowers it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

from tests.models import mobilenetv2, resnet18
from tests.test_tpu_float import top_module
from tpudsl.ir.module import TopModule, save_module
from tpudsl.lowering.calibration import calibrate
from tpudsl.lowering.calibration_table import TableEntry, table_text

BUILDERS = {"resnet18": lambda: resnet18(input_size=32, num_classes=10, width=8),
            "mobilenetv2": lambda: mobilenetv2(input_size=32, num_classes=10, width_mult=0.25)}
SAMPLES = 32


@dataclass(frozen=True, eq=False)  # hashed by identity: functools.cache keys
class CalibratedCnn:
    """`mlir` (the Top module written by `top_module`) and `table_path` (KLD thresholds over
    `feeds`) in a directory of their own; `top` that Top module in memory (read only: tests run it
    as the float reference); `table` the calibration's entries as computed (min and max unrounded)."""

    model: onnx.ModelProto
    mlir: Path
    table_path: Path
    top: TopModule
    feeds: list[dict[str, np.ndarray]]
    table: dict[str, TableEntry]


def build(name: str, d: Path) -> CalibratedCnn:
    model = BUILDERS[name]()
    top = top_module(model)
    save_module(top, d / "m.mlir")
    rng = np.random.default_rng(0)
    feeds = [{"input": rng.random((1, 3, 32, 32), dtype=np.float32)} for _ in range(SAMPLES)]
    result = calibrate(str(d / "m.mlir"), [str(i) for i in range(SAMPLES)], lambda k: feeds[int(k)])
    table = result.table("kld")
    (d / "table").write_text(table_text(table, 2048, SAMPLES))
    return CalibratedCnn(model, d / "m.mlir", d / "table", top, feeds, table)

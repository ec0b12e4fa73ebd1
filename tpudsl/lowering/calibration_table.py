"""TPU-MLIR's calibration table: `#` header lines, then `name threshold min max` per tensor.

    # genetated time: 2026-12-02 22:00:00.000000      (TPU-MLIR's spelling)
    # histogram number: 2048
    # sample number: 100
    # tune number: 5                                  (only when run_calibration --tune_num tuned it)
    ###
    # op_name    threshold    min    max
    conv1 2.3456789 -1.0000000 3.0000000

The writer prints 7 decimals as TPU-MLIR's does. The reader is strict: a line that is not a
comment must be four fields (a name and three numbers), a name appears once, threshold > 0 and
min <= max; with a module, every name must be a tensor of it. Errors are
`FILE:LINE:COL: error: ...` (COL: the offending field).
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from tpudsl.ir.diagnostics import TpudslError


# Marker comments of TPU-MLIR's other table sections (int4, fp8, per-channel weight scales, asymmetric ops).
_SECTIONS = ("#weight_scale", "#int4_th", "#tpu-mlir-fp8", "mqbench-fp8", "asym_op", "int4_op")


@dataclass(frozen=True)
class TableEntry:
    threshold: float
    min: float
    max: float


def table_text(entries: Mapping[str, TableEntry], bins: int, samples: int,
               now: datetime.datetime | None = None, tuned: int = 0) -> str:
    """`tuned`: the samples the thresholds were tuned on (TPU-MLIR's `# tune number` line), 0: not tuned."""
    lines = [
        f"# genetated time: {now or datetime.datetime.now()}",
        f"# histogram number: {bins}",
        f"# sample number: {samples}",
        *([f"# tune number: {tuned}"] if tuned else []),
        "###",
        "# op_name    threshold    min    max",
    ]
    lines += [f"{name} {' '.join(_written(e))}" for name, e in entries.items()]
    return "\n".join(lines) + "\n"


def as_written(entries: Mapping[str, TableEntry]) -> dict[str, TableEntry]:
    """`entries` as their table file holds them: a search scores the thresholds model_deploy reads
    from the table it writes, not the unrounded ones."""
    return {name: TableEntry(*map(float, _written(e))) for name, e in entries.items()}


def _written(e: TableEntry) -> list[str]:
    return [f"{v:.7f}" for v in (e.threshold, e.min, e.max)]  # TPU-MLIR's 7 decimals


def read_table(path: str, tensor_names: Collection[str] | None = None) -> dict[str, TableEntry]:
    """The entries of the table at `path` by tensor name, in file order."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise TpudslError(f"cannot read calibration table '{path}': {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise TpudslError("calibration table is not UTF-8 text", path) from None
    return parse_table(text, path, tensor_names)


def parse_table(text: str, path: str, tensor_names: Collection[str] | None = None) -> dict[str, TableEntry]:
    entries: dict[str, TableEntry] = {}
    first_line: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        section = next((m for m in _SECTIONS if stripped.startswith("#") and m in stripped), None)
        if section is not None:
            raise TpudslError(f"TPU-MLIR's '{section}' table section is not supported", path, number, 1)
        if not stripped or stripped.startswith("#"):
            continue

        def fail(message: str, field: int = 0):
            starts = [m.start() + 1 for m in re.finditer(r"\S+", line)]
            raise TpudslError(message, path, number, starts[min(field, len(starts) - 1)])

        fields = stripped.split()
        if len(fields) != 4:
            fail(f"expected 'op_name threshold min max', found {len(fields)} field(s)")
        name = fields[0]
        try:
            threshold, lo, hi = (float(v) for v in fields[1:])
        except ValueError:
            fail(f"threshold, min and max of '{name}' must be numbers, found {' '.join(fields[1:])}", 1)
        if not all(math.isfinite(v) for v in (threshold, lo, hi)):
            fail(f"threshold, min and max of '{name}' must be finite", 1)
        if threshold <= 0:
            fail(f"threshold of '{name}' must be positive, found {fields[1]}", 1)
        if lo > hi:
            fail(f"min of '{name}' is above its max ({fields[2]} > {fields[3]})", 2)
        if name in first_line:
            fail(f"'{name}' appears twice (first on line {first_line[name]})")
        if tensor_names is not None and name not in tensor_names:
            fail(f"'{name}' is not a tensor of the module")
        first_line[name] = number
        entries[name] = TableEntry(threshold, lo, hi)
    return entries

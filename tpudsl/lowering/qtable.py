"""TPU-MLIR's quantize table (`--quantize_table`, `convert-top-to-tpu="qtable=FILE"`): per-op precision.

    # op_name   quantize_mode
    /blocks.0/demod/ReduceSum F32
    conv1 F16

One `name MODE` line per op (whitespace-separated), `#` comments, blank lines. The reader is strict:
a line with other than two fields, an unknown mode, a name given twice, or names that no op of the
module has are errors with the file and line (unknown names are listed together, so one run shows
all of them).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from tpudsl.ir.diagnostics import TpudslError

QTABLE_MODES = ("F32", "F16", "BF16", "INT8")


def read_qtable(path: str | Path, op_names: Collection[str]) -> dict[str, str]:
    """name -> mode for every line of `path`; every name must be one of `op_names`."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise TpudslError(f"cannot read quantize table: {e}", str(path)) from None
    table: dict[str, str] = {}
    lines: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split()
        where = f"{path}:{number}"
        if len(fields) != 2:
            raise TpudslError(f"{where}: error: expected 'op_name MODE', got {line.strip()!r}")
        name, mode = fields[0], fields[1].upper()
        if mode not in QTABLE_MODES:
            raise TpudslError(f"{where}: error: mode '{fields[1]}' is not one of {', '.join(QTABLE_MODES)}")
        if name in table:
            raise TpudslError(f"{where}: error: '{name}' is already given on line {lines[name]}")
        table[name], lines[name] = mode, number
    unknown = [name for name in table if name not in op_names]
    if unknown:
        first = lines[unknown[0]]
        listed = ", ".join(f"'{n}' (line {lines[n]})" for n in unknown)
        raise TpudslError(f"{path}:{first}: error: no op of the module is named {listed}")
    return table

"""xDSL module -> MLIR text. (Interim: delegates to xDSL's printer; to be replaced by the MLIR-exact printer.)"""

from __future__ import annotations

import io

from xdsl.ir import Operation
from xdsl.printer import Printer


def print_module(op: Operation, debuginfo: bool = False) -> str:
    """The module as MLIR text, ending with a newline; locations printed when `debuginfo`."""
    out = io.StringIO()
    Printer(stream=out, print_generic_format=True, print_debuginfo=debuginfo).print_op(op)
    return out.getvalue() + "\n"

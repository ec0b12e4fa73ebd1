"""The step the backend's property tests share: interpret a lowered module, compile it for the
`tiny` chip (4 lanes x 16 KiB, so that ops are sliced), run the bmodel on the cmodel, compare every
output as its mode requires, and say what was compiled (record types, whether sliced)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tests.backend_support import assert_bit_exact, assert_f32_close, compile_for, interpret
from tpudsl.backend import isa
from tpudsl.backend.cmodel import run_bmodel
from tpudsl.ir.printer import print_module

# A group cut into two or more sections along N or H (`nsecs = 12` too, which `[2-9]` missed).
SLICED = re.compile(r"\b[nh]secs = (?:[2-9]|[1-9]\d+)\b")


@dataclass(frozen=True)
class Compiled:
    records: list  # every instruction of the bmodel, decoded (isa record objects), in order
    sliced: bool  # some group is cut along N or H


def compare(got: np.ndarray, want: np.ndarray, name: str, mode: str) -> None:
    """F32 floats within 1e-5 relative; F16/BF16 results and every integer output (a mask, an
    index) bit for bit (docs/quantization.md, "F16/BF16 arithmetic")."""
    if mode == "F32" and want.dtype.kind == "f":
        assert_f32_close(got, want, name)
    else:
        assert_bit_exact(got, want, name)


def cmodel_matches_interpreter(top, feed: dict[str, np.ndarray], mode: str, bmodel: Path) -> Compiled:
    """The cmodel's outputs of `top` compiled for tiny equal the Tpu interpreter's (per `mode`)."""
    want = interpret(top, feed)
    bm = compile_for(top, "tiny", str(bmodel))
    got, _ = run_bmodel(bm, feed)
    for name, w in want.items():
        compare(got[name], w, name, mode)
    return Compiled(isa.decode(bm.commands), SLICED.search(print_module(top.module)) is not None)

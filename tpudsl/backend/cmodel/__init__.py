"""The cmodel: runs a .bmodel's command stream on numpy global and per-lane local memory.

`run_bmodel(bmodel, inputs)` writes the coefficients and the inputs (by name) to global memory,
executes every instruction (engine.py; several cores' streams phase by phase,
cores.py) and reads the outputs by name; `run_bmodel_tensors` reads
every tensor during the run instead (capture.py). With `profile`, it also
returns the cost model's cycles per op location name. It never imports tpudsl.interp: the Tpu
interpreter is what it is checked against.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping

import numpy as np

from tpudsl.backend import isa
from tpudsl.backend.bmodel import check_coeffs, check_in_global_memory, gmem_bytes, tensors_in_tag
from tpudsl.backend.chips import chip_named
from tpudsl.backend.cmodel.capture import Capture
from tpudsl.backend.cmodel.cores import run_cores
from tpudsl.backend.cmodel.engine import execute, op_names
from tpudsl.backend.cmodel.memory import NUMPY, Memory, contiguous
from tpudsl.backend.cores import one_core
from tpudsl.backend.cost import cycles
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.npz import check_float32_exact


def _loaded(bmodel, inputs: Mapping[str, np.ndarray]) -> tuple[Memory, list[isa.Record], list[str]]:
    """Global memory holding the coefficients and the inputs, the decoded records and their op names."""
    h = bmodel.header
    chip = chip_named(h["chip"])
    records = isa.checked_records(bmodel.commands, h)  # before the run, which checks only the codes it reads
    check_coeffs(h, bmodel.coeffs)
    check_in_global_memory(h)
    # Global memory: the coefficients, io_alone's IO region (the header checked that every input and
    # output lies in it), the neurons; and each memory tag of the io_tag modes on its own.
    memory = Memory(chip, gmem_bytes(h),
                    {r["tag"]: (r["size"], tensors_in_tag(h, r["tag"])) for r in h.get("io_tags", [])})
    memory.gmem[: len(bmodel.coeffs)] = np.frombuffer(bmodel.coeffs, np.uint8)
    for t in h["inputs"]:
        if t["name"] not in inputs:
            raise TpudslError(f"input '{t['name']}' is missing; the npz holds: {', '.join(inputs) or 'nothing'}")
        x = np.asarray(inputs[t["name"]])
        if list(x.shape) != t["shape"]:
            raise TpudslError(f"input '{t['name']}' has shape {list(x.shape)}, expected {t['shape']}")
        if t["dtype"] == "f32":
            check_float32_exact(t["name"], x)
        if t["dtype"] in ("i8", "u8") and x.dtype != NUMPY[t["dtype"]]:  # never a silent float truncation
            raise TpudslError(f"input '{t['name']}' is {t['dtype']} (scale {t['scale']:g}, zero point "
                              f"{t['zero_point']}), the data is {x.dtype}: quantize it first (model_runner does)")
        if t["dtype"] in ("f16", "bf16") and x.dtype != NUMPY[t["dtype"]]:  # never a silent f32 rounding
            raise TpudslError(f"input '{t['name']}' is {t['dtype']}, the data is {x.dtype}: round it first "
                              f"(model_runner does)")
        memory.write_global(t["address"], contiguous(x.shape), x.astype(NUMPY[t["dtype"]]))
    return memory, records, op_names(bmodel.debug, len(records))


def _run(bmodel, memory: Memory, records: list[isa.Record], names: list[str],
         after: Callable[[Memory, int], None] | None = None) -> None:
    """Every instruction, one core's stream or several cores' (cores.py: phase by phase)."""
    counts = bmodel.header.get("core_instructions")
    if counts:
        run_cores(memory, records, names, counts, after)
    else:
        execute(memory, one_core(records), names, after)


def run_bmodel(bmodel, inputs: Mapping[str, np.ndarray]) -> tuple[dict[str, np.ndarray], Counter[str]]:
    """The outputs by name, and the estimated cycles spent in each op (by location name; the work
    of all cores)."""
    h = bmodel.header
    memory, records, names = _loaded(bmodel, inputs)
    _run(bmodel, memory, records, names)
    outputs = {t["name"]: memory.read_global(t["address"], contiguous(t["shape"]), tuple(t["shape"]),
                                             NUMPY[t["dtype"]]) for t in h["outputs"]}
    chip = chip_named(h["chip"])
    profile: Counter[str] = Counter()
    for r, name in zip(records, names, strict=True):
        profile[name] += cycles(r, chip)
    return outputs, profile


def run_bmodel_tensors(bmodel, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every tensor of the header's tensor_locations, captured during the run (capture.py), in the
    order the ops complete, after the inputs (as stored: int8 and f16 as their own dtypes)."""
    locations = bmodel.header.get("tensor_locations")
    if not locations:
        raise TpudslError("the bmodel has no tensor locations (debug info): compile it with "
                          "--codegen=\"... embed_debug_info=true\" (model_deploy does)")
    memory, records, names = _loaded(bmodel, inputs)
    capture = Capture(locations)
    _run(bmodel, memory, records, names, capture.after)
    stored = {t["name"]: np.asarray(inputs[t["name"]]).astype(NUMPY[t["dtype"]]) for t in bmodel.header["inputs"]}
    return {**stored, **capture.result()}

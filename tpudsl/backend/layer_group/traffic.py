"""GDMA traffic: the bytes a command stream moves, and the fewest bytes any grouping can move.

Layer groups cut GDMA traffic by keeping tensors in local memory, but some bytes move whatever the
grouping: every coefficient must be loaded at least once, every element of a model input that the
outputs need loaded at least once (a strided window may skip an input's last rows: those need not
move) and every output stored at least once (`lower_bound`). Only the rest, the activations
stored and loaded again between groups (and a group of one's halo rows), is removable; the bench
(bench/layer_group.py) prints what share of it a grouping removes. The bound assumes each
coefficient is read whole by some op (a filter, bias or table: every coefficient of the models we
compile); an op that reads only some rows of a weight (a Gather of a table) would make it too high.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import ReturnOp
from xdsl.ir import SSAValue

from tpudsl.backend import isa
from tpudsl.backend.address_assign import nbytes
from tpudsl.backend.slicing import BACKWARD_UPDATE_SLICE, ESIZE, KINDS, Part, dtype_of, output_dims, whole_tiles


def gdma_bytes(records: list[isa.Record]) -> int:
    """Bytes every load, store and global copy of `records` moves (a load or store: its local
    tensor's elements; a copy: its `nbytes`). Other GDMA records (gathers, scatters) are an error:
    what they move depends on their indices."""
    total = 0
    for r in records:
        if isinstance(r, isa.GdmaLoad):  # GdmaStore is one too
            total += r.n * r.c * r.h * r.w * isa.DTYPE_BYTES[isa.DTYPE_NAMES[r.dtype]]
        elif isinstance(r, isa.GdmaCopy):
            total += r.nbytes
        elif r.ENGINE == "gdma":
            raise ValueError(f"gdma_bytes: {type(r).__name__} moves a data-dependent number of bytes")
    return total


def lower_bound(module: ModuleOp) -> int:
    """The GDMA bytes any grouping of `module` (not yet grouped: before --layer-group) moves at
    least: every coefficient (`top.Weight` that some op reads) once, every returned value once, and
    the elements of every model input that the outputs need once (`_needed`)."""
    if any(op.name == "tpu.Group" for op in module.walk()):
        raise ValueError("lower_bound: the module has layer groups; take the bound before --layer-group")
    total, needed = 0, _needed(module)
    for op in module.walk():
        if op.name == "top.Weight" and op.results[0].uses:
            total += nbytes(op.results[0])
        elif op.name == "top.Input":
            total += int(needed.get(op.results[0], np.zeros(0, bool)).sum()) * ESIZE[dtype_of(op.results[0])]
        elif isinstance(op, ReturnOp):
            total += sum(nbytes(v) for v in op.operands if isinstance(v.type, TensorType))
    return total


def _needed(module: ModuleOp) -> dict[SSAValue, np.ndarray]:
    """Per tensor, which of its elements (flat) the returned values need, last op first: an op
    whose output elements are needed computes at least the N x H box around them (its records
    compute boxes), whose input parts `BACKWARD_UPDATE_SLICE` gives; an op without that rule reads
    every element of its operands. A strided window may leave rows of its input unread, and a
    later op may need only some rows of its producer: those elements need not move."""
    needed: dict[SSAValue, np.ndarray] = {}

    def want(value: SSAValue, flat: np.ndarray | None) -> None:
        if isinstance(value.type, TensorType):
            mask = needed.setdefault(value, np.zeros(nbytes(value) // ESIZE[dtype_of(value)], bool))
            mask[slice(None) if flat is None else flat] = True

    for op in reversed(list(module.walk())):
        if isinstance(op, ReturnOp):
            for v in op.operands:
                want(v, None)
        elif op.results and op.results[0] in needed and op.name != "top.Input":
            got = needed[op.results[0]]
            kind = KINDS.get(op.name)
            if kind not in BACKWARD_UPDATE_SLICE:
                for v in op.operands:
                    want(v, None)
                continue
            rule = BACKWARD_UPDATE_SLICE[kind]
            n, h = output_dims(op)
            out = rule(op, Part((0, n), (0, h))).output  # the whole output in the op's view
            idx = np.indices(out.shape).reshape(4, -1)
            flat = out.offset + (idx * np.array(out.strides)[:, None]).sum(axis=0)
            hit = got[flat]
            if not hit.any():
                continue
            part = Part((int(idx[0][hit].min()), int(idx[0][hit].max()) + 1),
                        (int(idx[2][hit].min()), int(idx[2][hit].max()) + 1))
            whole = {t.value for t in whole_tiles(op)}
            for t in rule(op, part).inputs:
                if t.value not in whole:
                    want(t.value, t.offset + sum(np.ix_(*(np.arange(k) * st for k, st in zip(t.shape, t.strides,
                                                                                              strict=True)))).ravel())
    return needed

"""GDMA traffic: the bytes a command stream moves, and the fewest bytes any grouping can move.

Layer groups cut GDMA traffic by keeping tensors in local memory, but some bytes move whatever the
grouping: every coefficient must be loaded at least once, every element of a model input that the
outputs need loaded at least once (a strided window may skip the rows between its windows and an
input's last rows: those need not move) and every output stored at least once (`lower_bound`). Only the rest, the activations
stored and loaded again between groups (and a group of one's halo rows), is removable; the bench
(bench/layer_group.py) prints what share of it a grouping removes. The bound assumes each
coefficient is read whole by some op (a filter, bias or table: every coefficient of the models we
compile); an op that reads only some rows of a weight (a Gather of a table) would make it too high.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.dialects.func import ReturnOp
from xdsl.ir import Operation, SSAValue

from tpudsl.backend import isa
from tpudsl.backend.address_assign import nbytes
from tpudsl.backend.slicing import (BACKWARD_UPDATE_SLICE, ESIZE, KINDS, Part, Secs, SlicePlan, Tile, cw_dims, dtype_of,
                                    output_dims, parts, sliceable, whole_tiles)
from tpudsl.ir.diagnostics import TpudslError


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
    """Per tensor, which of its elements (flat) the returned values need, last op first. A slice of
    an op computes a box of its output and reads the input parts `BACKWARD_UPDATE_SLICE` gives;
    the finest slices any grouping can cut are the op's cells (`_cells`). An op computes at least
    the cells holding an element its consumers need and reads the union of their input parts, not
    the box around them: a strided window leaves the rows (and columns) between its windows unread
    however its output is sliced. An op without that rule reads every element of its operands."""
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
            if KINDS.get(op.name) not in BACKWARD_UPDATE_SLICE:
                for v in op.operands:
                    want(v, None)
                continue
            plan, alive, masks = _cells(op)
            hit = needed[op.results[0]][_flat(plan.output)].reshape(plan.output.shape)
            # the cells that compute a needed element (a dead cell computes nothing: `_cells` drops its masks)
            cells = _carry(op, hit, masks[0], alive.shape, to_cells=True) & alive
            whole = {t.value for t in whole_tiles(op)}
            for t, m in zip(plan.inputs, masks[1:], strict=True):
                if t.value not in whole:
                    want(t.value, _flat(t)[_carry(op, cells, m, t.shape, to_cells=False).ravel()])
    return needed


def _flat(t: Tile) -> np.ndarray:
    """The flat element indices of tile `t`, in its (n, c, h, w) order."""
    return t.offset + sum(np.ix_(*(np.arange(k) * st for k, st in zip(t.shape, t.strides, strict=True)))).ravel()


Masks = dict[tuple[int, int], np.ndarray]  # (dim d of the cells, dim k of a tile) -> [cell along d, element along k]


def _cells(op: Operation) -> tuple[SlicePlan, np.ndarray, list[Masks]]:
    """The op's whole slice; which of its cells read input (a transposed conv's row of only
    inserted zeros reads none); and per tile of the whole slice (the output, then the inputs) which
    of its elements each cell's part holds. The cells: the finest parts of the op's output along
    each dim, one row of N and of H, and where the op may be cut along them (`sliceable`) one
    column of W and one part of C (whole lanes: `parts`); a cell of N x C x H x W holds the
    elements its four parts along the dims have in common (`_carry`)."""
    rule = BACKWARD_UPDATE_SLICE[KINDS[op.name]]
    (n, h), (c, w) = output_dims(op), cw_dims(op)
    plan = rule(op, Part((0, n), (0, h)))
    tiles = [plan.output, *plan.inputs]
    counts = (n, c if sliceable(op, "C") else 1, h, w if sliceable(op, "W") else 1)
    masks: list[Masks] = [{} for _ in tiles]
    lives = []
    for d, count in enumerate(counts):
        units = parts(op, Secs(**{"nchw"[d]: count})) if count > 1 else [Part((0, n), (0, h))]
        lives.append(np.ones(len(units), bool))
        for i, unit in enumerate(units):
            try:
                got = rule(op, unit)
            except TpudslError:  # a cell of only inserted zeros: other kinds' parts all read input
                if KINDS[op.name] != "deconv":
                    raise
                lives[d][i] = False
                continue
            for t, m, g in zip(tiles, masks, [got.output, *got.inputs], strict=True):
                for k in range(4):
                    lo = g.start[k] - t.start[k]
                    m.setdefault((d, k), np.zeros((len(units), t.shape[k]), bool))[i, lo:lo + g.shape[k]] = True
    for m in masks:  # a mask every live cell fills whole says nothing
        for key in [key for key, a in m.items() if a[lives[key[0]]].all()]:
            del m[key]
    alive = np.ones((1, 1, 1, 1), bool)
    for d, live in enumerate(lives):
        alive = alive & live.reshape([-1 if e == d else 1 for e in range(4)])
    return plan, alive, masks


def _carry(op: Operation, mask: np.ndarray, masks: Masks, shape: tuple[int, ...], to_cells: bool) -> np.ndarray:
    """Elements of a tile (A, B, C, D) -> the cells (n, c, h, w) holding one of them (`to_cells`),
    or cells -> the elements of a tile they hold, as a mask of `shape`; `masks` lacks the (d, k)
    along which every cell holds the whole tile (those dims are summed, or broadcast). Exact while
    each tile dim follows at most one dim of the cells (a box's rows the output rows, its columns
    the output columns): following two, the product of the cell's parts could hold more than the
    cell reads, so that is an error."""
    for k in range(4):
        if sum(key[1] == k for key in masks) > 1:
            raise ValueError(f"lower_bound: {op.name}: dim {k} of a tile follows several dims of the output; "
                             f"not modelled")
    src, dst = ("ABCD", "nchw") if to_cells else ("nchw", "ABCD")
    keys = list(masks)
    spec = ",".join([src, *("nchw"[d] + "ABCD"[k] for d, k in keys)])
    out = "".join(x for x in dst if x in spec)
    got = np.einsum(f"{spec}->{out}", mask.astype(float), *(masks[key].astype(float) for key in keys), optimize=True)
    return np.broadcast_to(got.reshape([got.shape[out.index(x)] if x in out else 1 for x in dst]), shape) > 0

"""Where each tensor a .bmodel computes can be read while the cmodel runs: the header's optional
`tensor_locations` (docs/bmodel.md), written with `embed_debug_info` (TPU-MLIR's
tensor_location.json, kept inside the file). `model_runner --dump_all_tensors` and `bmodel_checker`
read them (cmodel/capture.py).

A tensor is assembled from pieces of its 4-D view, each read right after one instruction, before
its memory can be reused: a result in global memory after the op's last instruction (an op outside
a group) or after the store of each slice (a group's stored result); a result that lives only in
local memory inside a layer group from its tile, right after the BDC record that writes each slice
(the next slice's record writes the same bytes).
"""

from __future__ import annotations

import math

from xdsl.ir import Operation, SSAValue

from tpudsl.backend.address_assign import address_of
from tpudsl.backend.slicing import Tile, contiguous, dtype_of, shape_of
from tpudsl.dialects.opdef import describe, result_names
from tpudsl.ir.diagnostics import TpudslError


def _entry(op: Operation, value: SSAValue, view: tuple[int, ...], pieces: list[dict]) -> dict:
    return {"name": result_names(op)[value.index], "op": op.name, "shape": list(shape_of(value)),
            "dtype": dtype_of(value), "view": list(view), "pieces": pieces}


def whole_results(op: Operation, after: int) -> list[dict]:
    """Each result of `op` (an op outside a group) read whole from global memory after instruction
    `after`, its last: as a flat (1, 1, 1, elements) view, whatever its rank."""
    out = []
    for value in op.results:
        addr = address_of(value)
        if addr is None:
            continue
        view = (1, 1, 1, math.prod(shape_of(value)))
        out.append(_entry(op, value, view, [{"after": after, "space": "global", "address": addr, "start": [0] * 4,
                                             "shape": list(view), "strides": list(contiguous(view))}]))
    return out


def piece(after: int, tile: Tile, space: str, address: int) -> dict:
    """A slice's part `tile` of a group member's result: in global memory at `address` (the bytes the
    store wrote) or in local memory at `address`, after instruction `after`."""
    out = {"after": after, "space": space, "address": address, "start": list(tile.start), "shape": list(tile.shape)}
    return {**out, "strides": list(tile.strides)} if space == "global" else out


def member_result(op: Operation) -> SSAValue:
    """A group member's one result: a group's records write only a slice's first output
    (layer_group/plan.py's GROUPABLE kinds have one), so a further result could be neither computed
    nor read (codegen checks it with or without tensor locations)."""
    if len(op.results) != 1:
        raise TpudslError(f"codegen: layer-group member {describe(op)} has {len(op.results)} results; a group's "
                          f"records write only the first (run --layer-group again)")
    return op.results[0]


def sliced_result(op: Operation, view: tuple[int, ...], pieces: list[dict]) -> dict:
    """A group member's result from its slices' pieces (its 4-D view: the tiles' coordinates)."""
    return _entry(op, member_result(op), view, pieces)

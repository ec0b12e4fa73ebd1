"""Groups of one op (`--layer-group="opt=1"`, and every op the search leaves alone).

The op's output is split along N first, then along H, into the fewest parts whose tiles (input
parts with their halos, the output part, the weights loaded whole) fit one lane's local memory
(`slicing.footprint`).
"""

from __future__ import annotations

from xdsl.ir import Operation

from tpudsl.backend.chips import Chip
from tpudsl.backend.slicing import Secs, budgeted_whole_tiles, footprint, output_dims, split, tile_bytes
from tpudsl.dialects.opdef import describe
from tpudsl.ir.diagnostics import TpudslError


def choose_secs(op: Operation, chip: Chip, slice_weights: bool = False) -> tuple[Secs, int]:
    """(slices, bytes per lane): the fewest slices, N before H, that fit local memory
    (slice_weights: the TEST-ONLY budget of slicing.budgeted_whole_tiles)."""
    weights = sum(tile_bytes(t, chip) for t in budgeted_whole_tiles(op, slice_weights))
    if weights > chip.lmem_bytes:
        raise TpudslError(f"layer-group: {describe(op)}: its weights (loaded whole, never sliced) need {weights} "
                          f"bytes per lane; chip {chip.name} has {chip.lmem_bytes}")
    n_total, h_total = output_dims(op)
    for hsecs in range(1, h_total + 1):
        for nsecs in range(1, n_total + 1):
            if len(split(n_total, nsecs)) != nsecs or len(split(h_total, hsecs)) != hsecs:
                continue  # the same parts as a smaller count
            need = footprint(op, Secs(nsecs, hsecs), chip, slice_weights)
            if need <= chip.lmem_bytes:
                return Secs(nsecs, hsecs), need
    least = footprint(op, Secs(n_total, h_total), chip, slice_weights)
    raise TpudslError(f"layer-group: {describe(op)} needs {least} bytes of local memory per lane even in slices "
                      f"of one row; chip {chip.name} has {chip.lmem_bytes}")

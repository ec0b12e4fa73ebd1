"""Groups of one op (`--layer-group="opt=1"`, and every op the search leaves alone).

The op's output is split along N first, then along H, into the fewest parts whose tiles (input
parts with their halos, the output part, the weights loaded whole) fit one lane's local memory
(`slicing.footprint`). When no N x H split fits (a tensor with one row, a big-W image on a small
chip, a filter larger than local memory), ops whose kind allows it are split along C (whole
lanes per part; a conv then loads its filter per C part) and then along W, each with the fewest
N x H parts that fit: C before W, as TPU-MLIR's order (N, C, H, W) has it. N and H first keeps
every op that fitted before sliced, and so compiled, exactly as before.
"""

from __future__ import annotations

import math
from dataclasses import replace

from xdsl.ir import Operation

from tpudsl.backend.chips import Chip
from tpudsl.backend.cores import count_passes, slowest
from tpudsl.backend.slicing import (Secs, budgeted_whole_tiles, channel_step, cw_dims, footprint, output_dims,
                                    sliceable, tile_bytes)
from tpudsl.dialects.opdef import describe
from tpudsl.ir.diagnostics import TpudslError


def _counts(total: int, step=lambda total, k: -(-total // k)) -> list[int]:
    """The numbers of parts that give distinct splits of `total` into parts of `step(total, k)`
    (a larger count giving the same parts as a smaller one is skipped)."""
    return [k for k in range(1, total + 1) if -(-total // step(total, k)) == k]


def _fewest_nh(op: Operation, chip: Chip, c: int, w: int, slice_weights: bool) -> tuple[Secs, int] | None:
    """The fewest N x H slices (N before H) that fit with c, w parts along C, W; with several cores
    (cores.deal gives each its run of slices) at least one per core where N x H has that many, and
    a count the cores divide evenly first. None if none fits."""
    n_total, h_total = output_dims(op)
    if (c, w) != (1, 1) and _need(op, Secs(n_total, h_total, c, w), chip, slice_weights) > chip.lmem_bytes:
        return None  # the finest N x H split does not fit: no coarser one does
    for allowed in count_passes(chip.cores, n_total * h_total):
        for hsecs in _counts(h_total):
            for nsecs in _counts(n_total):
                if not allowed(nsecs * hsecs * c * w):
                    continue
                need = _need(op, Secs(nsecs, hsecs, c, w), chip, slice_weights) if (c, w) != (1, 1) else \
                    footprint(op, Secs(nsecs, hsecs), chip, slice_weights)
                if need <= chip.lmem_bytes:
                    return Secs(nsecs, hsecs, c, w), need
    return None


def _slowest(op: Operation, chip: Chip, secs: Secs) -> int:
    """The slowest core's cycles (GDMA and BDC overlapped) of the op alone sliced `secs`: codegen's records."""
    from tpudsl.backend.codegen import alone_streams, gaddr_or_0

    return slowest(alone_streams(op, chip, secs, gaddr_or_0), chip)


def _need(op: Operation, secs: Secs, chip: Chip, slice_weights: bool) -> float:
    """footprint, or infinity for a C/W split the op cannot take (a Deconv's W part of only inserted
    zeros): another split is tried."""
    try:
        return footprint(op, secs, chip, slice_weights)
    except TpudslError:
        return float("inf")


def _cw_counts(op: Operation, chip: Chip) -> tuple[list[int], list[int]]:
    """The distinct numbers of C parts (whole lanes each) and of W parts the op allows ([1]: none)."""
    c_total, w_total = cw_dims(op) if sliceable(op, "C") or sliceable(op, "W") else (1, 1)
    cs = _counts(c_total, lambda t, k: channel_step(t, k, chip.lanes)) if sliceable(op, "C") else [1]
    return cs, _counts(w_total) if sliceable(op, "W") else [1]


def choose_secs(op: Operation, chip: Chip, slice_weights: bool = False) -> tuple[Secs, int]:
    """(slices, bytes per lane): the fewest slices, N before H, that fit local memory, else with C
    and then W cut where the op allows (slice_weights: the TEST-ONLY budget of
    slicing.budgeted_whole_tiles). An op --core-parallel placed on a core (`core_id`) is sliced for
    that one core."""
    if "core_id" in op.attributes:
        chip = replace(chip, cores=1)
    weights = sum(tile_bytes(t, chip) for t in budgeted_whole_tiles(op, slice_weights))
    cs, ws = _cw_counts(op, chip)
    # several cores: C parts the cores divide evenly first (each core loads only its parts' weights)
    cs = sorted(cs, key=lambda c: (c % chip.cores != 0, c))
    alone = _fewest_nh(op, chip, 1, 1, slice_weights) if weights <= chip.lmem_bytes else None  # N x H only
    if math.prod(output_dims(op)) < chip.cores:  # fewer N x H rows than cores (a Gemm head): C parts for
        # them when that is faster (a small op gains less than each core's issue costs)
        split = next((got for c in cs if c > 1 and c % chip.cores == 0
                      and (got := _fewest_nh(op, chip, c, 1, slice_weights)) is not None), None)
        if split is not None and (alone is None or _slowest(op, chip, split[0]) < _slowest(op, chip, alone[0])):
            return split
    if alone is not None:
        return alone
    if weights > chip.lmem_bytes and cs == [1]:
        raise TpudslError(f"layer-group: {describe(op)}: its weights (loaded whole, never sliced) need {weights} "
                          f"bytes per lane; chip {chip.name} has {chip.lmem_bytes}")
    for c, w in [(c, w) for w in ws for c in cs if (c, w) != (1, 1)]:  # W outer: every C split before W is cut
        got = _fewest_nh(op, chip, c, w, slice_weights)
        if got is not None:
            return got
    n_total, h_total = output_dims(op)
    least = footprint(op, Secs(n_total, h_total, max(cs), ws[-1]), chip, slice_weights)
    cut = "".join(f", {chip.lanes if d == 'C' else 1} {'channels' if d == 'C' else 'column'}"
                  for d, k in (("C", cs), ("W", ws)) if k != [1])
    raise TpudslError(f"layer-group: {describe(op)} needs {least} bytes of local memory per lane even in slices "
                      f"of one row{cut}; chip {chip.name} has {chip.lmem_bytes}")

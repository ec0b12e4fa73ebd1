"""The cost model: cycles of one instruction from the chip's numbers (chips.py).

Per instruction (schedule.py places them on the two engines): a fixed issue cost plus the work
divided by the chip's throughput. GDMA moves `dma_bytes_per_cycle` bytes a cycle;
a BDC record does `macs_per_cycle_per_lane` multiply-adds (or element operations) per lane a
cycle, with the channels spread over the lanes (ceil(c / lanes) rounds on each). These are
estimates for comparing schedules, not the vendor's timings.
"""

from __future__ import annotations

import functools

from tpudsl.backend import isa
from tpudsl.backend.chips import Chip

ISSUE_CYCLES = {"gdma": 64, "bdc": 16}
# BdcGridSample's taps per output point and channel, by isa.GRID_SAMPLE_MODES code (the rest: bilinear's
# corners, 4, or 8 on a volume)
_GRID_TAPS = {isa.GRID_SAMPLE_MODES["nearest"]: 1, isa.GRID_SAMPLE_MODES["bicubic"]: 16}


def _bytes(dtype: int) -> int:
    return isa.DTYPE_BYTES[isa.DTYPE_NAMES[dtype]]


@functools.lru_cache(maxsize=1 << 14)  # as schedule.footprint: the search costs the same records again and again
def cycles(r: isa.Record, chip: Chip) -> int:
    """Estimated cycles of record `r` on `chip`. Remembered: a pure function of two frozen values."""
    rounds = lambda c: isa.cgroups(c, chip.lanes)  # noqa: E731
    if isinstance(r, isa.GdmaLoad):
        work = r.n * r.c * r.h * r.w * _bytes(r.dtype) / chip.dma_bytes_per_cycle
    elif isinstance(r, isa.GdmaCopy):
        work = r.nbytes / chip.dma_bytes_per_cycle
    elif isinstance(r, isa.BdcConv):
        work = rounds(r.oc) * r.on * r.oh * r.ow * (r.ic // r.group) * r.kh * r.kw / chip.macs_per_cycle_per_lane
    elif isinstance(r, isa.BdcDeconv):  # the stride-1 conv over the zero-inserted input, zeros included
        work = rounds(r.oc) * r.on * r.oh * r.ow * (r.ic // r.group) * r.kh * r.kw / chip.macs_per_cycle_per_lane
    elif isinstance(r, isa.BdcPool):
        work = rounds(r.oc) * r.on * r.oh * r.ow * r.kh * r.kw / chip.macs_per_cycle_per_lane
    elif isinstance(r, isa.BdcMatMul):
        work = rounds(r.n_out) * r.batch * r.m * r.k / chip.macs_per_cycle_per_lane
    elif isinstance(r, (isa.BdcBinary, isa.BdcConst, isa.BdcActive, isa.BdcCast, isa.BdcLut, isa.BdcRequant,
                        isa.BdcQuantCast, isa.BdcReduce, isa.BdcRequantZ, isa.BdcConstSumQ, isa.BdcRequantAxis)):
        work = rounds(r.c) * r.n * r.h * r.w / chip.macs_per_cycle_per_lane
    elif isinstance(r, (isa.BdcSoftmax, isa.BdcLayerNorm, isa.BdcGroupNorm,
                        isa.BdcSoftmaxQ)):  # reduce, subtract, reduce, scale: 4 passes
        work = 4 * rounds(r.c) * r.n * r.h * r.w / chip.macs_per_cycle_per_lane
    elif isinstance(r, isa.BdcPad):  # every output element written once
        work = (rounds(r.c + r.pc0 + r.pc1) * (r.n + r.pn0 + r.pn1) * (r.h + r.ph0 + r.ph1) * (r.w + r.pw0 + r.pw1)
                / chip.macs_per_cycle_per_lane)
    elif isinstance(r, isa.BdcInterp):  # two passes (rows, columns), two taps each for linear
        work = (1 + r.mode) * 2 * rounds(r.c) * r.n * r.oh * r.ow / chip.macs_per_cycle_per_lane
    elif isinstance(r, isa.BdcUpsample):
        work = rounds(r.c) * r.n * r.oh * r.w * r.sw / chip.macs_per_cycle_per_lane
    elif isinstance(r, (isa.BdcScale, isa.BdcActiveX, isa.BdcBinaryX, isa.BdcConstX, isa.BdcSelect)):
        work = rounds(r.c) * r.n * r.h * r.w / chip.macs_per_cycle_per_lane
    elif isinstance(r, isa.BdcRMSNorm):  # square-and-reduce, then scale: 2 passes
        work = 2 * rounds(r.c) * r.n * r.h * r.w / chip.macs_per_cycle_per_lane
    elif isinstance(r, isa.BdcPadReflect):  # every output element written once
        work = rounds(r.c + r.pc0 + r.pc1) * r.on * r.oh * (r.w + r.pw0 + r.pw1) / chip.macs_per_cycle_per_lane
    elif isinstance(r, isa.GdmaGather):  # the indices read, the gathered slabs moved
        work = (r.count * _bytes(r.index_dtype) + r.outer * r.count * r.inner * r.esize) / chip.dma_bytes_per_cycle
    elif isinstance(r, (isa.BdcArg, isa.BdcTrilu)):  # one compare (select) per element
        work = rounds(r.c) * r.n * r.h * r.w / chip.macs_per_cycle_per_lane
    elif isinstance(r, isa.BdcTopK):  # k passes, each picking the next element of every row
        work = r.k * rounds(r.c) * r.n * r.h * r.w / chip.macs_per_cycle_per_lane
    elif isinstance(r, isa.BdcCumSum):  # a scan across lanes: one channel after another
        work = r.c * r.n * r.h * r.w / chip.macs_per_cycle_per_lane
    elif isinstance(r, (isa.GdmaGatherElements, isa.GdmaScatterElements)):  # indices read, elements moved
        positions = r.in_ * r.ic * r.ih * r.iw
        copied = r.xn * r.xc * r.xh * r.xw * r.esize if isinstance(r, isa.GdmaScatterElements) else 0
        work = (positions * (_bytes(r.index_dtype) + r.esize) + 2 * copied) / chip.dma_bytes_per_cycle
    elif isinstance(r, (isa.GdmaGatherND, isa.GdmaScatterND)):  # index tuples read, slabs moved
        rows = getattr(r, "batch", 1) * r.count
        copied = r.d0 * r.d1 * r.d2 * r.d3 * r.slab * r.esize if isinstance(r, isa.GdmaScatterND) else 0
        work = (rows * (r.k * _bytes(r.index_dtype) + r.slab * r.esize) + 2 * copied) / chip.dma_bytes_per_cycle
    elif isinstance(r, isa.GdmaYuv2rgb):  # the frames read, 3 planes written
        work = r.batch * r.h * r.w * 4.5 / chip.dma_bytes_per_cycle  # 1.5 bytes a pixel in, 3 out
    elif isinstance(r, isa.BdcGridSample):  # per point and channel: 4 taps, 8 volumetric (1 nearest, 16 bicubic)
        depth, corners = (r.od, 8) if isinstance(r, isa.BdcGridSample3D) else (1, 4)
        work = 2 * _GRID_TAPS.get(r.mode, corners) * rounds(r.c) * r.n * depth * r.oh * r.ow \
            / chip.macs_per_cycle_per_lane
    elif isinstance(r, isa.BdcLRN):  # square, `size` window adds, scale-add, power, divide
        work = (r.size + 4) * rounds(r.c) * r.n * r.h * r.w / chip.macs_per_cycle_per_lane
    elif isinstance(r, isa.BdcPoolMask):  # the max and the index of its first occurrence: two passes
        work = 2 * rounds(r.oc) * r.on * r.oh * r.ow * r.kh * r.kw / chip.macs_per_cycle_per_lane
    elif isinstance(r, isa.BdcYoloDetection):  # every head element read once; NMS unknown before run time
        work = sum(n * c * h * w for n, c, h, w in isa.yolo_head_shapes(r)) / chip.macs_per_cycle_per_lane
    elif isinstance(r, isa.BdcYolov8Detection):  # every head element read once; NMS unknown before run time
        work = r.n * (4 + r.classes) * r.boxes / chip.macs_per_cycle_per_lane
    elif isinstance(r, isa.BdcDetectionOutput):  # every score and offset read once; NMS unknown before run time
        work = r.n * r.priors * (r.classes + 4) / chip.macs_per_cycle_per_lane
    elif isinstance(r, isa.BdcRecurrent):  # each step: the gates' matmuls (gates*hidden over the lanes), ~4 passes
        gates = isa.RECURRENT_GATES[r.cell]
        work = (r.dirs * r.seq * r.batch * rounds(gates * r.hidden) * (r.n_in + r.hidden + 4)
                / chip.macs_per_cycle_per_lane)
    elif isinstance(r, isa.CoreSync):  # the wait for the slowest core is the phase's (backend/cores.py)
        work = 0
    else:  # a record without a cost is a bug here
        raise AssertionError(f"no cost for {type(r).__name__}")
    return ISSUE_CYCLES[r.ENGINE] + int(-(-work // 1))

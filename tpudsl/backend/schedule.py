"""The two engines with sync: each record placed on GDMA or BDC as early as its dependencies allow.

`footprint(record, chip)` is the single source of what a record touches: the local ranges it reads
and writes (per lane: every local tensor starts on lane 0 and fills lanes 0 .. min(c, lanes) - 1,
bytes laddr .. laddr + isa.lane_bytes(...) in each; isa.py's layout) and the global ranges
(gaddr plus its strided view's lowest .. highest element). `schedule(records, chip)` issues each
engine's records in program order; a record starts at the later of its engine being free and
the end of every earlier record it conflicts with (it reads what that one writes, RAW; writes what
it reads, WAR; or writes what it writes, WAW). Cycles per record are cost.cycles. This is the
chip's dependency-driven sync idealized (no sync-id limit, no issue latency between engines):
an estimate for comparing schedules, as cost.py is. `live_ranges(schedule)` derives local-memory
occupancy from the same footprints (model_tool --timeline draws it).
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tpudsl.backend import isa, operands
from tpudsl.backend.chips import Chip
from tpudsl.backend.cost import cycles

ENGINES = ("gdma", "bdc")
F32 = isa.DTYPES["f32"]  # the bias operands of Conv and MatMul are f32 whatever the record's dtype
I8, I32 = isa.DTYPES["i8"], isa.DTYPES["i32"]  # INT8 records write int8; their biases are int32
INT8_OUT = (isa.BdcRequant, isa.BdcConstQ)  # elementwise records whose out is int8 whatever their dtype field


def _q_out(r) -> int:
    """An INT8 record's result dtype: `out_dtype` (opcodes 53-59: i8 or u8), else int8."""
    return getattr(r, "out_dtype", I8)


@dataclass(frozen=True)
class Span:
    """Bytes [start, end) of global memory (lanes 0), or of local memory in lanes 0 .. lanes - 1."""

    space: str  # "local" or "global"
    start: int
    end: int
    lanes: int = 0

    def overlaps(self, other: Span) -> bool:
        # local spans all start on lane 0, so their lanes always intersect
        return self.space == other.space and self.start < other.end and other.start < self.end


@dataclass(frozen=True)
class Footprint:
    reads: tuple[Span, ...]
    writes: tuple[Span, ...]


def _esize(dtype: int) -> int:
    return isa.DTYPE_BYTES[isa.DTYPE_NAMES[dtype]]


def local(chip: Chip, laddr: int, shape: Sequence[int], dtype: int) -> tuple[Span, ...]:
    """The span of a local (n, c, h, w) tensor at `laddr` (none when it is empty)."""
    n, c, h, w = shape
    if n * c * h * w == 0:
        return ()
    size = isa.lane_bytes(n, c, h, w, _esize(dtype), chip.lanes, chip.eu_bytes)
    return (Span("local", laddr, laddr + size, min(c, chip.lanes)),)


def _global(gaddr: int, strides: Sequence[int], shape: Sequence[int], esize: int) -> tuple[Span, ...]:
    """The span from a strided view's lowest to its highest element (a transposing view included)."""
    if 0 in shape:
        return ()
    steps = [s * (d - 1) for s, d in zip(strides, shape, strict=True)]
    lo, hi = sum(min(0, s) for s in steps), sum(max(0, s) for s in steps)
    return (Span("global", gaddr + lo * esize, gaddr + (hi + 1) * esize),)


def _optional(chip: Chip, addr: int, shape: Sequence[int], dtype: int) -> tuple[Span, ...]:
    return () if addr == isa.NO_ADDR else local(chip, addr, shape, dtype)


def _gdma(r: isa.GdmaLoad, chip: Chip) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
    g = _global(r.gaddr, (r.gn, r.gc, r.gh, r.gw), (r.n, r.c, r.h, r.w), _esize(r.dtype))
    lo = local(chip, r.laddr, (r.n, r.c, r.h, r.w), r.dtype)
    return (lo, g) if isinstance(r, isa.GdmaStore) else (g, lo)


def _conv(r: isa.BdcConv, chip: Chip):
    """BdcConv (f32 bias), BdcConvQ (the merged int32 (bias, multiplier, rshift) tile, int8 out)."""
    blocks = -(-(r.ic // r.group) // max(r.ic_parallel, 1))
    q = isinstance(r, isa.BdcConvQ)
    bias = local(chip, r.bias_addr, (1, r.oc, 1, 3), I32) if q else _optional(chip, r.bias_addr, (1, r.oc, 1, 1), F32)
    return (local(chip, r.in_addr, (r.n, r.ic, r.ih, r.iw), r.dtype)
            + local(chip, r.weight_addr, (1, r.oc, blocks, r.kh * r.kw * max(r.ic_parallel, 1)), r.dtype) + bias,
            local(chip, r.out_addr, (r.on, r.oc, r.oh, r.ow), _q_out(r) if q else r.dtype))


def _matmul(r: isa.BdcMatMul, chip: Chip):
    """BdcMatMul (f32 bias), BdcMatMulQ (int32 bias, int8 out), BdcMatMulQZ (also the per-column
    (multiplier, rshift) tile, out in out_dtype), BdcMatMulA16 (an 8-bit right side, its scale tile)."""
    rows, q = r.batch * r.m, isinstance(r, isa.BdcMatMulQ)
    quant = _optional(chip, r.quant_addr, (1, r.n_out, 1, 2), I32) if isinstance(r, isa.BdcMatMulQZ) else ()
    if isinstance(r, isa.BdcMatMulA16):  # the right side's scales and zero points
        quant = (local(chip, r.scale_addr, (1, r.n_out, 1, r.groups), r.dtype)
                 + _optional(chip, r.zp_addr, (1, r.n_out, 1, r.groups), isa.DTYPES["u8"]))
    return (local(chip, r.left_addr, (rows, r.k, 1, 1), r.dtype)
            + local(chip, r.right_addr, (r.batch, r.k // (2 if getattr(r, "weight_bits", 8) == 4 else 1), 1, r.n_out),
                    getattr(r, "right_dtype", r.dtype))
            + _optional(chip, r.bias_addr, (1, r.n_out, 1, 1), I32 if q else F32) + quant,
            local(chip, r.out_addr, (rows, r.n_out, 1, 1), _q_out(r) if q else r.dtype))


def _pool(r: isa.BdcPool, chip: Chip):
    return (local(chip, r.in_addr, (r.n, r.c, r.ih, r.iw), r.dtype),
            local(chip, r.out_addr, (r.on, r.oc, r.oh, r.ow), _q_out(r) if isinstance(r, isa.BdcPoolQ) else r.dtype))


def _tiles(*names: str, optional: tuple[str, ...] = (), out_dtype: Callable = lambda r: r.dtype) -> Callable:
    """The footprint of an element-wise record: it reads the local tiles `names` and, where their
    address is not NO_ADDR, `optional` ones (operands.py: where each is, its shape and dtype) and
    writes (n, c, h, w) at out_addr in out_dtype(r)."""

    def footprint(r, chip: Chip):
        reads = [local(chip, *operands.tile(r, name)) for name in names]
        reads += [_optional(chip, *operands.tile(r, name)) for name in optional]
        return sum(reads, ()), local(chip, r.out_addr, operands.out_shape(r), out_dtype(r))

    return footprint


# BdcBinary, BdcBinaryQ (out in out_dtype or int8), BdcBinaryX
_binary = _tiles("a", "b", out_dtype=lambda r: _q_out(r) if isinstance(r, isa.BdcBinaryQ) else r.dtype)
# BdcConst, BdcActive, BdcSoftmax: in and out of the same dtype (BdcRequant, BdcConstQ: int8 out)
_elementwise = _tiles("in", out_dtype=lambda r: I8 if isinstance(r, INT8_OUT) else r.dtype)
# BdcCast, BdcQuantCast, BdcRequantZ, BdcConstSumQ: out in `out_dtype`
_cast = _tiles("in", out_dtype=lambda r: r.out_dtype)



def _bytes_at(addr: int, nbytes: int) -> tuple[Span, ...]:
    return _global(addr, (1,), (nbytes,), 1)


def _index_record(r, chip: Chip):
    """Records 76-79: the source (whole), the indices, the updates of a scatter; the whole result."""
    if isinstance(r, (isa.GdmaGatherElements, isa.GdmaScatterElements)):
        x, positions = r.xn * r.xc * r.xh * r.xw, r.in_ * r.ic * r.ih * r.iw
        src, idx = x * r.esize, positions * _esize(r.index_dtype)
        dst = x * r.esize if isinstance(r, isa.GdmaScatterElements) else positions * r.esize
        upd = positions * r.esize
    else:
        rows = r.d0 * r.d1 * r.d2 * r.d3 if 1 <= r.k <= 4 else 0
        batch = getattr(r, "batch", 1)
        src, idx = batch * rows * r.slab * r.esize, batch * r.count * r.k * _esize(r.index_dtype)
        dst = src if isinstance(r, isa.GdmaScatterND) else batch * r.count * r.slab * r.esize
        upd = r.count * r.slab * r.esize
    scatter = isinstance(r, (isa.GdmaScatterElements, isa.GdmaScatterND))
    return (_bytes_at(r.src, src) + _bytes_at(r.idx, idx) + (_bytes_at(r.upd, upd) if scatter else ()),
            _bytes_at(r.dst, dst))

def _yolo_detection(r: isa.BdcYoloDetection, chip: Chip):
    """The heads (whole, f32; an absent one is 0 x 0: no bytes); the whole result, n keep_topk rows of 7 f32."""
    heads = zip((r.src, r.src1, r.src2), isa.yolo_head_shapes(r), strict=True)
    return (sum((_bytes_at(at, n * c * h * w * 4) for at, (n, c, h, w) in heads), ()),
            _bytes_at(r.dst, r.n * r.keep_topk * 7 * 4))


def _yolov8_detection(r: isa.BdcYolov8Detection, chip: Chip):
    """The head (whole, f32); the whole result, n keep_topk rows of 7 f32."""
    return _bytes_at(r.src, r.n * (4 + r.classes) * r.boxes * 4), _bytes_at(r.dst, r.n * r.keep_topk * 7 * 4)


def _detection_output(r: isa.BdcDetectionOutput, chip: Chip):
    """loc, conf and the priors (whole, f32); the whole result, n keep_top_k rows of 7 f32."""
    return (_bytes_at(r.src, r.n * r.priors * 4 * 4) + _bytes_at(r.conf_at, r.n * r.priors * r.classes * 4)
            + _bytes_at(r.prior_at, 2 * r.priors * 4 * 4), _bytes_at(r.dst, r.n * r.keep_top_k * 7 * 4))


def _grid_sample(r: isa.BdcGridSample, chip: Chip):
    """Records 98/101: the input and the grid whole, the result whole (f32); record 101's depths."""
    d, od, axes = (r.d, r.od, 3) if isinstance(r, isa.BdcGridSample3D) else (1, 1, 2)
    return (_bytes_at(r.src, r.n * r.c * d * r.h * r.w * 4) + _bytes_at(r.grid, r.n * od * r.oh * r.ow * axes * 4),
            _bytes_at(r.dst, r.n * r.c * od * r.oh * r.ow * 4))


def _recurrent(r: isa.BdcRecurrent, chip: Chip):
    """The input, weights and initial states present (whole, f32); the results present, whole."""
    weights = r.dirs * isa.RECURRENT_GATES[r.cell] * r.hidden
    state = r.dirs * r.batch * r.hidden * 4
    reads = ((r.src, r.seq * r.batch * r.n_in * 4), (r.w_at, weights * r.n_in * 4), (r.r_at, weights * r.hidden * 4),
             (r.b_at, 2 * weights * 4), (r.h0_at, state), (r.c0_at, state),
             (getattr(r, "p_at", isa.NO_ADDR), r.dirs * 3 * r.hidden * 4))  # record 102's peepholes
    writes = ((r.dst, r.seq * state), (r.yh_at, state), (r.yc_at, state))
    return tuple(tuple(span for at, n in spans if at != isa.NO_ADDR for span in _bytes_at(at, n))
                 for spans in (reads, writes))


# What each record reads and writes, keyed by its class (a subclass, e.g. BdcConvQ, has its own row).
FOOTPRINTS: dict[type[isa.Record], Callable] = {
    isa.GdmaLoad: _gdma,
    isa.GdmaStore: _gdma,
    isa.GdmaCopy: lambda r, chip: (_global(r.src, (1,), (r.nbytes,), 1), _global(r.dst, (1,), (r.nbytes,), 1)),
    isa.BdcConv: _conv,
    isa.BdcPool: _pool,
    isa.BdcPoolCeil: _pool,
    isa.BdcMatMul: _matmul,
    isa.BdcBinary: _binary,
    isa.BdcConst: _elementwise,
    isa.BdcActive: _elementwise,
    isa.BdcSoftmax: _elementwise,
    isa.BdcCast: _cast,
    isa.BdcLayerNorm: _tiles("in", optional=("weight", "bias")),
    isa.BdcUpsample: lambda r, chip: (local(chip, r.in_addr, (r.n, r.c, r.h, r.w), r.dtype),
                                      local(chip, r.out_addr, (r.n, r.c, r.oh, r.w * r.sw), r.dtype)),
    isa.BdcConvQ: _conv,
    isa.BdcPoolQ: _pool,
    isa.BdcMatMulQ: _matmul,
    isa.BdcBinaryQ: _binary,
    isa.BdcLut: lambda r, chip: (local(chip, r.in_addr, (r.n, r.c, r.h, r.w), r.dtype)
                                 + local(chip, r.table_addr, (1, r.c, 1, 256), I8),
                                 local(chip, r.out_addr, (r.n, r.c, r.h, r.w), I8)),
    isa.BdcRequant: _elementwise,
    isa.BdcQuantCast: _cast,
    isa.BdcConstQ: _elementwise,
    isa.BdcDeconv: lambda r, chip: (local(chip, r.in_addr, (r.n, r.ic, r.ih, r.iw), r.dtype)
                                    + local(chip, r.weight_addr, (r.group, r.oc // r.group, r.ic // r.group,
                                                                  r.kh * r.kw), r.dtype)
                                    + _optional(chip, r.bias_addr, (1, r.oc, 1, 1), r.dtype),
                                    local(chip, r.out_addr, (r.on, r.oc, r.oh, r.ow), r.dtype)),
    isa.BdcReduce: lambda r, chip: (local(chip, r.in_addr, (r.n, r.c, r.h, r.w), r.dtype),
                                    local(chip, r.out_addr, (r.n, 1, r.h, r.w), r.dtype)),
    isa.BdcPad: lambda r, chip: (local(chip, r.in_addr, (r.n, r.c, r.h, r.w), r.dtype),
                                 local(chip, r.out_addr, (r.n + r.pn0 + r.pn1, r.c + r.pc0 + r.pc1,
                                                          r.h + r.ph0 + r.ph1, r.w + r.pw0 + r.pw1), r.dtype)),
    isa.BdcInterp: lambda r, chip: (local(chip, r.in_addr, (r.n, r.c, r.h, r.w), r.dtype),
                                    local(chip, r.out_addr, (r.n, r.c, r.oh, r.ow), r.dtype)),
    isa.BdcGroupNorm: _tiles("in", optional=("weight", "bias")),
    isa.BdcDeconvQ: lambda r, chip: (local(chip, r.in_addr, (r.n, r.ic, r.ih, r.iw), r.dtype)
                                     + local(chip, r.weight_addr, (r.group, r.oc // r.group, r.ic // r.group,
                                                                   r.kh * r.kw), I8)
                                     + local(chip, r.bias_addr, (1, r.oc, 1, 3), I32),
                                     local(chip, r.out_addr, (r.on, r.oc, r.oh, r.ow), r.out_dtype)),
    isa.BdcSoftmaxQ: lambda r, chip: (local(chip, r.in_addr, (r.n, r.c, r.h, r.w), r.dtype)
                                      + local(chip, r.table_addr, (1, min(r.c, chip.lanes), 1, 256), I32),
                                      local(chip, r.out_addr, (r.n, r.c, r.h, r.w), r.out_dtype)),
    isa.BdcMatMulQZ: _matmul,
    isa.BdcMatMulA16: _matmul,
    isa.BdcConvQZ: _conv,
    isa.BdcPoolQZ: _pool,
    isa.BdcBinaryQZ: _binary,
    isa.BdcRequantZ: _cast,
    isa.BdcRequantAxis: lambda r, chip: (local(chip, r.in_addr, (r.n, r.c, r.h, r.w), r.dtype)
                                         + local(chip, r.quant_addr, (1, r.c, 1, 3), I32),
                                         local(chip, r.out_addr, (r.n, r.c, r.h, r.w), r.out_dtype)),
    isa.BdcConstSumQ: _cast,
    isa.BdcScale: _tiles("in", "scale", "bias"),
    isa.BdcActiveX: _elementwise,
    isa.BdcRMSNorm: _tiles("in", optional=("gamma",)),
    isa.BdcPadReflect: lambda r, chip: (local(chip, r.in_addr, (r.n, r.c, r.h, r.w), r.dtype),
                                        local(chip, r.out_addr, (r.on, r.c + r.pc0 + r.pc1, r.oh, r.w + r.pw0 + r.pw1),
                                              r.dtype)),
    isa.BdcBinaryX: _binary,
    isa.BdcConstX: _elementwise,
    isa.BdcSelect: _tiles("cond", optional=("a", "b")),  # a constant operand has no tile
    isa.BdcArg: lambda r, chip: (local(chip, r.in_addr, (r.n, r.c, r.h, r.w), r.dtype),
                                 local(chip, r.idx_addr, (r.n, 1, r.h, r.w), r.idx_dtype)
                                 + _optional(chip, r.val_addr, (r.n, 1, r.h, r.w), r.dtype)),
    isa.BdcTopK: lambda r, chip: (local(chip, r.in_addr, (r.n, r.c, r.h, r.w), r.dtype),
                                  local(chip, r.val_addr, (r.n, r.k, r.h, r.w), r.dtype)
                                  + local(chip, r.idx_addr, (r.n, r.k, r.h, r.w), r.idx_dtype)),
    isa.BdcCumSum: _elementwise,
    isa.BdcTrilu: _elementwise,
    isa.GdmaGather: lambda r, chip: (_global(r.src, (1,), (r.outer * r.axis * r.inner * r.esize,), 1)
                                     + _global(r.idx, (1,), (r.count,), _esize(r.index_dtype)),
                                     _global(r.dst, (1,), (r.outer * r.count * r.inner * r.esize,), 1)),
    isa.GdmaGatherElements: _index_record,
    isa.GdmaGatherND: _index_record,
    isa.GdmaScatterElements: _index_record,
    isa.GdmaScatterND: _index_record,
    isa.GdmaScatterElementsReduce: _index_record,
    isa.GdmaScatterNDReduce: _index_record,
    isa.BdcYoloDetection: _yolo_detection,
    isa.BdcYolov8Detection: _yolov8_detection,
    isa.BdcDetectionOutput: _detection_output,
    isa.BdcRecurrent: _recurrent,
    isa.BdcRecurrentPeephole: _recurrent,
    isa.GdmaYuv2rgb: lambda r, chip: (_bytes_at(r.src, r.batch * r.h * r.w * 3 // 2),
                                      _bytes_at(r.dst, r.batch * 3 * r.h * r.w)),
    isa.BdcGridSample: _grid_sample,
    isa.BdcGridSample3D: _grid_sample,
    isa.BdcLRN: _elementwise,
    isa.BdcPoolMask: lambda r, chip: (local(chip, r.in_addr, (r.n, r.c, r.ih, r.iw), r.dtype),
                                      local(chip, r.out_addr, (r.on, r.oc, r.oh, r.ow), r.dtype)
                                      + local(chip, r.mask_addr, (r.on, r.oc, r.oh, r.ow), F32)),
    isa.CoreSync: lambda r, chip: ((), ()),  # orders the cores, touches no memory (backend/cores.py)
}


@functools.lru_cache(maxsize=1 << 14)  # MobileNetV2 at 64: 9,500 records a search
def footprint(r: isa.Record, chip: Chip) -> Footprint:
    """The local and global spans record `r` reads and writes on `chip`. Remembered: a pure function
    of two frozen values (a record's fields are ints and floats, `isa.record`), and the layer-group
    search schedules the same records again and again (a run's records reappear in the prefetch
    costing and in longer runs; MobileNetV2: 48,000 calls, 9,500 records)."""
    fn = FOOTPRINTS.get(type(r))
    if fn is None:  # a record without a footprint is a bug here
        raise AssertionError(f"no footprint for {type(r).__name__}")
    reads, writes = fn(r, chip)
    return Footprint(tuple(reads), tuple(writes))


@dataclass(frozen=True)
class Schedule:
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    footprints: tuple[Footprint, ...]

    @property
    def makespan(self) -> int:
        """Cycles of the whole stream with the engines overlapped."""
        return max(self.ends, default=0)

    @property
    def serial(self) -> int:
        """Cycles of the whole stream one record after another (the serial cost model)."""
        return sum(e - s for s, e in zip(self.starts, self.ends, strict=True))


class _Intervals:
    """Byte ranges [start, end) with the end cycle of the record that accessed them, sorted by start,
    so that the ranges overlapping a span are found by bisection: a range overlapping [lo, hi) starts
    before hi and after lo - longest (the longest range held so far)."""

    def __init__(self) -> None:
        self.items: list[tuple[int, int, int]] = []
        self.longest = 0

    def latest(self, s: Span) -> int:
        """The latest end cycle among the ranges overlapping span s (0: none)."""
        lo = bisect.bisect_left(self.items, (s.start - self.longest + 1,))
        hi = bisect.bisect_left(self.items, (s.end,))
        return max((t for _, end, t in self.items[lo:hi] if end > s.start), default=0)

    def add(self, s: Span, t: int) -> None:
        bisect.insort(self.items, (s.start, s.end, t))
        self.longest = max(self.longest, s.end - s.start)

    def drop_inside(self, s: Span) -> None:
        lo, hi = bisect.bisect_left(self.items, (s.start,)), bisect.bisect_left(self.items, (s.end,))
        self.items[lo:hi] = [item for item in self.items[lo:hi] if item[1] > s.end]


class _Accesses:
    """Earlier accesses of one memory space, reads and writes apart. An access lying inside a later
    write's span is dropped: whatever would conflict with it conflicts with that write too, which
    ends no earlier (it waited for it)."""

    def __init__(self) -> None:
        self.reads, self.writes = _Intervals(), _Intervals()

    def ready(self, fp_reads: Sequence[Span], fp_writes: Sequence[Span]) -> int:
        """The latest end among the earlier accesses these reads (RAW) and writes (WAR, WAW) conflict with."""
        return max([0, *(self.writes.latest(s) for s in fp_reads),
                    *(max(self.reads.latest(s), self.writes.latest(s)) for s in fp_writes)])

    def add(self, fp_reads: Sequence[Span], fp_writes: Sequence[Span], end: int) -> None:
        for s in fp_writes:
            self.reads.drop_inside(s)
            self.writes.drop_inside(s)
        for s in fp_reads:
            self.reads.add(s, end)
        for s in fp_writes:
            self.writes.add(s, end)


def schedule(records: Sequence[isa.Record], chip: Chip) -> Schedule:
    """Each record's (start, end) cycles with GDMA and BDC running side by side, in program order
    per engine, every record after the earlier ones it depends on."""
    free = dict.fromkeys(ENGINES, 0)
    spaces = {"local": _Accesses(), "global": _Accesses()}
    starts, ends, fps = [], [], []
    for r in records:
        fp = footprint(r, chip)
        by_space = {k: ([s for s in fp.reads if s.space == k], [s for s in fp.writes if s.space == k])
                    for k in spaces}
        start = max([free[r.ENGINE], *(spaces[k].ready(*by_space[k]) for k in spaces)])
        end = start + cycles(r, chip)
        for k, acc in spaces.items():
            acc.add(*by_space[k], end)
        free[r.ENGINE] = end
        starts.append(start)
        ends.append(end)
        fps.append(fp)
    return Schedule(tuple(starts), tuple(ends), tuple(fps))


@dataclass(frozen=True)
class Live:
    """Local bytes [start, end) of every lane in use, written by record `record`, from cycle t0 (its
    start) to t1 (the end of its last reader before another record overwrites them)."""

    record: int
    start: int
    end: int
    t0: int
    t1: int


def live_ranges(s: Schedule) -> list[Live]:
    """Local-memory occupancy: each local range a record writes, live until its last reader.

    A written range is followed through the later records: a write covering part of it ends that
    part's life, a read of a part still live extends that part's (the range is cut where they begin
    and end, and adjacent parts dying together are joined again). The writer of a
    range waits for the readers of what it overwrites (WAR), so the boxes never overlap in (time,
    address). A record that reads and writes the same bytes counts as overwriting them."""
    out = []
    for i, fp in enumerate(s.footprints):
        for w in fp.writes:
            if w.space != "local":
                continue
            alive, done = [(w.start, w.end, s.ends[i])], []
            for j in range(i + 1, len(s.footprints)):
                if not alive:
                    break
                for k in (x for x in s.footprints[j].writes if x.space == "local"):
                    alive, cut = _cut(alive, k)
                    done += cut
                for r in (x for x in s.footprints[j].reads if x.space == "local"):
                    alive, read = _cut(alive, r)
                    alive += [(a, b, max(t, s.ends[j])) for a, b, t in read]
            done += alive
            out += [Live(i, a, b, s.starts[i], t) for a, b, t in _merge(sorted(done))]
    return out


def _cut(alive: list[tuple[int, int, int]], k: Span) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
    """The parts of `alive` outside span k and the parts inside it."""
    keep, cut = [], []
    for a, b, t in alive:
        lo, hi = max(a, k.start), min(b, k.end)
        if lo >= hi:
            keep.append((a, b, t))
            continue
        cut.append((lo, hi, t))
        keep += [p for p in ((a, lo, t), (hi, b, t)) if p[0] < p[1]]
    return keep, cut


def _merge(parts: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Adjacent parts that die at the same cycle as one range."""
    merged: list[tuple[int, int, int]] = []
    for a, b, t in parts:
        if merged and merged[-1][1] == a and merged[-1][2] == t:
            merged[-1] = (merged[-1][0], b, t)
        else:
            merged.append((a, b, t))
    return merged

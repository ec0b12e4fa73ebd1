"""Depthwise convolution (one input channel per group, any rank, stride, dilation, depth
multiplier) as a few column copies, one small GEMM per channel and a few shifted adds.

The zero-padded input of a block of channels is written into its stride phases (phase p of an
axis holds padded positions p, p + s, ...), so a tap reads one phase in unit steps. The first
spatial axis is the "row" axis; every other axis is flattened into "wide" rows of the phase's
width, whose extra columns (reads that wrap into the next row) are dropped at the end. A tap at
phase ph, row shift r and in-row shift c then reads the phase's flat buffer from r * row + c on.

Taps that differ only in their row shift need not be copied apart: the copy of (ph, c) read from
element c on serves every r, shifted by r rows. So the row shifts are cut into groups of `fold`
consecutive ones; the columns are the distinct (ph, row shift within its group, c) reads (U of
them), and one GEMM per channel, W [oc/g * R, U] @ columns [U, extended length], gives one
partial sum per group (R groups), which are added with their group's row shift. fold = 1 copies
kw columns (3x3 stride 1: 3 copies instead of 9, 5x5: 5 instead of 25) and adds kh partial sums;
fold >= the number of row shifts is plain im2col (every tap its own column, one GEMV, no adds).
The sums stay on wide rows; one pass then drops the extra columns into the output, applying the
fused relu on the way unless a computed bias comes first (a cropped add, or a crop then a clip, cost
more: short inner loops). A computed bias and the relu are applied to the block while it is in
cache (a constant bias is one more GEMM column, read against a row of ones).

Kernels at most 3 wide (fold 1: MobileNetV2's, ShuffleNet's and EfficientNet's 3x3 layers) take
the direct layout instead (`_direct_plan`, the dws2 round): no phase buffer and no wide rows. Each
column is written straight from the input with the output's own row width: a "same" stride-1 conv's
as one flat copy of the input shifted by the tap's offset (the reads that wrap into the next row land
in the padding and are zeroed after it), a strided conv's through a strided view (at stride 2 on
wide outputs, an integer cast of element pairs: `_pair_writes`), once per phase along the last axis
(the other columns of that phase are flat copies of it, shifted). The padding
is never written (the work array is keyed by the geometry), the row groups' partial sums are added
straight into the output block and the relu clips it in place: no crop pass. Measured inside the
inferences against the phase layout: the stride-1 layers 1.1-1.5x, the stride-2 ones 1.0-1.3x
(interp_conv_ab; docs/interpreter.md, the dws2 round); 5x5 and 7x7 stay on the phase layout.

Small 2-D outputs (the last stages' 7x7 maps) go channels-last instead
(`_channels_last`): with hundreds of channels of a few dozen positions, one BLAS call per channel
costs more than its work.

W, the reads and the row groups depend only on the filter and the geometry: `pack` builds them
once (`prepare`); the flat offsets, slices and channel block, which depend on the input's size,
once per size (`_plan`, kept in the Packed).

Measured inside the interp_zoo inferences against the im2col + GEMV kernel it replaced (and
banded.py's 7x7): 1.1-1.3x per model's depthwise layers; fold = kh (im2col) the same or slower on
3x3 and 1.3-2x slower on 5x5 and 7x7 (docs/interpreter.md, bench/RESULTS.md `speeddw`)."""

from __future__ import annotations

import itertools
import math
import sys
from dataclasses import dataclass, field

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tpudsl.interp import winograd
from tpudsl.interp.kernel import Array
from tpudsl.interp.windows import Geometry

# Channels go through the split, copies, GEMM and adds in blocks of about this many bytes of work
# arrays, so that each step reads what the previous one wrote from cache.
BLOCK_BYTES = 1 << 20

# Row shifts folded into one GEMM's columns (see above). Also 1 for 5x5: fold 2 (5x5 only) measured
# 0.76-0.94x in-model (docs/interpreter.md, the eff5x5 round).
FOLD = 1

# Outputs of at most this many positions (7x7, 8x8) take the channels-last path: there the
# per-channel GEMM calls cost more than their work (960 channels of 7x7: 960 BLAS calls on 81
# columns). Measured inside the inferences: 1.3-1.7x faster at 7x7 outputs, 0.7-0.9x at 14x14
# (5x5 at 14x14 too: 0.75-0.80x).
CHANNELS_LAST_MAX_OUT = 64

# With fold 1, kernels at most this wide along every axis read their columns straight from the
# input (`_direct_plan`): no phase buffer, no wide rows. Wider ones stay on the phase buffer: 5x5 /2
# measured 0.93x standalone, and "same" 5x5 / 7x7 (flat copies) 0.92-1.13x per layer in-model,
# ConvNeXt's four 0.99x summed (docs/interpreter.md, the dws2 round).
DIRECT_MAX_KERNEL = 3

# Stride-2 columns of outputs at least this wide are de-interleaved by integer casts of element pairs
# (`_pair_writes`; the low half of a uint64 is its first float32 on little-endian machines only). The
# cast's loop and the last odd element's own strided copy cost more than they save on short rows:
# standalone 96x112x112 /2 1.07x, 56x56 inputs 0.94-1.02x, 28x28 ones 0.82-0.98x.
PAIRS_MIN_WIDTH = 56 if sys.byteorder == "little" else math.inf


@dataclass(frozen=True, eq=False)  # arrays and a cache: compared by identity
class Packed:
    w: Array  # [groups, oc/g * R, U (+ 1)]: row (m, k) is output m's partial sum of row group k
    reads: tuple[tuple[int, int, tuple[int, ...]], ...]  # U columns: (phase, row shift in group, shifts of the other axes)
    bases: tuple[int, ...]  # R row groups: each group's row shift
    phases: tuple[tuple[int, ...], ...]
    hwc: Array | None  # [K, groups]: the taps for the channels-last path (2-D, no depth multiplier), else None
    bias: Array | None  # [oc], a constant bias: w's last column (row group 0's), read against a row of ones
    plans: dict = field(default_factory=dict)  # per input size, see _plan


def pack(w: Array, g: Geometry, fold: int | None = None, bias: Array | None = None) -> Packed:
    """The depthwise filter w [oc, 1, *k] (oc a multiple of the group count) in GEMM layout, with
    the constant `bias` [oc] (if any) as one more column of the first row group, read against a row
    of ones, so the GEMM adds it: a pass and a call a block less (1.15-1.3x on the GEMM and the bias
    add standalone; the depthwise layers 1.02-1.06x inside MobileNetV2 and EfficientNet-style)."""
    fold = FOLD if fold is None else fold
    groups, mult = g.group, w.shape[0] // g.group
    phases = tuple(itertools.product(*(range(st) for st in g.strides)))
    taps = []
    for tap in g.taps():
        pos = [t * d for t, d in zip(tap, g.dilations, strict=True)]
        taps.append((phases.index(tuple(p % st for p, st in zip(pos, g.strides, strict=True))),
                     pos[0] // g.strides[0], tuple(p // st for p, st in zip(pos[1:], g.strides[1:], strict=True))))
    shifts = sorted({r for _, r, _ in taps})
    bases = tuple(shifts[i] for i in range(0, len(shifts), fold))
    group_of = {r: i // fold for i, r in enumerate(shifts)}
    keyed = [(ph, r - bases[group_of[r]], c) for ph, r, c in taps]
    reads = tuple(sorted(set(keyed)))
    packed = np.zeros((groups, mult, len(bases), len(reads) + (bias is not None)), np.float32)
    flat = w.reshape(groups, mult, -1)
    for t, ((_, r, _), key) in enumerate(zip(taps, keyed, strict=True)):
        packed[:, :, group_of[r], reads.index(key)] = flat[:, :, t]
    if bias is not None:
        bias = np.asarray(bias, np.float32).reshape(-1)
        packed[:, :, 0, -1] = bias.reshape(groups, mult)
    hwc = np.ascontiguousarray(w.reshape(groups, -1).T, np.float32) if mult == 1 and len(g.kernel) == 2 else None
    return Packed(packed.reshape(groups, mult * len(bases), -1), reads, bases, phases, hwc, bias)


def channel_block(groups: int, channel_bytes: int) -> int:
    """Channels per block: as many as fit BLOCK_BYTES, at least one."""
    return max(1, min(groups, BLOCK_BYTES // channel_bytes))


@dataclass(frozen=True)
class _Plan:
    """What a call on one input size needs besides the arrays (computed once per size: the
    Python work was 30-45 us a call, a fifth of a small layer)."""

    block: int
    direct: bool  # the columns are written straight from the input (buf is the columns' array)
    ones: bool  # the columns' last row is a packed bias's row of ones
    flat: bool  # direct, every stride 1, out = size past the first axis: writes index both sides flat
    buf_key: str
    buf_shape: tuple[int, ...]
    writes: tuple[tuple[tuple, tuple], ...]  # (some of the input's elements, where they go in buf after the
    # block axis); the source of a pair write is (parity, elements of that pair view), see _pair_writes
    reads: tuple[tuple[int, slice], ...]  # per column: (phase, its elements in the flat phase)
    extended: int
    sums: tuple[slice, ...]  # per row group: its partial sum's elements, shifted by the group's rows
    wide: tuple[int, ...]  # [oc/g, out rows, *phase shape after the first axis] (direct: the output's)
    crop: tuple[slice, ...]  # the wide rows' real columns (direct: none)
    derived: tuple[tuple[tuple, tuple], ...] = ()  # direct: (column, its flat elements) copied from (column, elements)
    zeros: tuple[tuple, ...] = ()  # direct: where a column's flat copy wrapped into the padding (zeroed after it)
    views: dict = field(default_factory=dict)  # per block size, the _Views of the last call's work arrays


def _plan(p: Packed, g: Geometry, size: tuple[int, ...], groups: int, out: tuple[int, ...]) -> _Plan:
    if max(g.kernel) <= DIRECT_MAX_KERNEL and all(r == 0 for _, r, _ in p.reads):
        return _direct_plan(p, g, size, groups, out)
    s = g.strides
    mult = p.w.shape[1] // len(p.bases)
    ncols = p.w.shape[2]  # the reads, and the row of ones of a packed bias
    padded = [d + pb + pe for d, pb, pe in zip(size, g.pads_begin, g.pads_end, strict=True)]
    phase_shape = [-(-d // st) for d, st in zip(padded, s, strict=True)]
    row = math.prod(phase_shape[1:])
    steps = [math.prod(phase_shape[k + 1:]) for k in range(1, len(s))]
    length = out[0] * row
    extended = length + p.bases[-1] * row
    offsets = [r * row + sum(c * st for c, st in zip(cs, steps, strict=True)) for _, r, cs in p.reads]
    # rows past the phase's end that the furthest read touches (its wrapped columns): kept zero
    rows = max(phase_shape[0], -(-(max(offsets) + extended) // row))
    nph, ngroup = len(p.phases), len(p.bases)
    per_channel = nph * rows * row + ncols * extended + mult * ngroup * extended + mult * length
    writes = []
    for ph in p.phases:
        first = [(q - pb) % st for q, pb, st in zip(ph, g.pads_begin, s, strict=True)]
        at = [(f + pb) // st for f, pb, st in zip(first, g.pads_begin, s, strict=True)]
        count = [len(range(f, d, st)) for f, d, st in zip(first, size, s, strict=True)]
        writes.append((tuple(slice(f, None, st) for f, st in zip(first, s, strict=True)),
                       tuple(slice(a, a + c) for a, c in zip(at, count, strict=True))))
    block = channel_block(groups, 4 * per_channel)
    return _Plan(
        block=block,
        direct=False,
        ones=ncols > len(p.reads),
        flat=False,
        # zero borders that the interior writes never touch: keyed by the input's geometry
        buf_key=f"depthwise_phases {size} {g.strides} {g.pads_begin}",
        buf_shape=(block, nph, rows, *phase_shape[1:]),
        writes=tuple((src, (i, *dst)) for i, (src, dst) in enumerate(writes)),
        reads=tuple((ph, slice(off, off + extended)) for (ph, _, _), off in zip(p.reads, offsets, strict=True)),
        extended=extended,
        sums=tuple(slice(base * row, base * row + length) for base in p.bases),
        wide=(mult, out[0], *phase_shape[1:]),
        crop=(slice(None), slice(None), slice(None), *(slice(0, o) for o in out[1:])),
    )


def _same(g: Geometry, size: tuple[int, ...], out: tuple[int, ...]) -> bool:
    """Every stride 1 and the output as large as the input past the first axis (2-D and up)."""
    return len(size) > 1 and all(st == 1 for st in g.strides) and tuple(out[1:]) == tuple(size[1:])


def _direct_plan(p: Packed, g: Geometry, size: tuple[int, ...], groups: int, out: tuple[int, ...]) -> _Plan:
    """The plan of the direct layout: column u holds, for out rows + the last row group's shift rows
    and every output position of the other axes, the input element its read (phase, shifts) sees,
    copied from the input through one strided view (zero where that falls in the padding: never
    written). Rows are then exactly the output's, so the partial sums are added straight into the
    output, with no wide rows to crop. (Also the layout of fold 1's sums: row group k's partial sum
    starts k's shift rows in.)

    With every stride 1 and the output as wide as the input past the first axis (a "same" conv), a
    column is the input shifted by a constant number of elements: one flat copy (long inner loops:
    2.9 against 7.6 us for a row-sliced copy of 13x56x56), whose reads that wrapped into the next or
    previous row land in the column's padding, zeroed after it.

    Otherwise (a stride past the first axis), columns whose reads differ only by whole strides along
    the last axis hold the same de-interleaved elements, shifted: one of them is copied from the
    input (strided), the others from it by one flat copy each (3x3 /2: 4 strided copies and 2 flat
    ones instead of 6 strided), their wrapped reads zeroed the same way."""
    s, pb = g.strides, g.pads_begin
    mult = p.w.shape[1] // len(p.bases)
    ncols = p.w.shape[2]
    rows = out[0] + p.bases[-1]
    inner = math.prod(out[1:])
    length, extended = out[0] * inner, rows * inner
    flat = _same(g, size, out)
    steps = [math.prod(out[k + 1:]) for k in range(1, len(out))]  # the input's too when flat
    writes, zeros, derived = [], [], []
    columns = {}  # per key (every offset but a whole number of last strides): [(u, offsets, src, dst)]
    for u, (i, _, cs) in enumerate(p.reads):
        ph = p.phases[i]
        # the input index along each axis is position * stride + offset
        offsets = [ph[0] - pb[0]] + [c * st + q - b for c, st, q, b in zip(cs, s[1:], ph[1:], pb[1:], strict=True)]
        src, dst = [], []
        for n_pos, off, st, d in zip((rows, *out[1:]), offsets, s, size, strict=True):
            lo, hi = max(0, -(off // st)), min(n_pos, (d - 1 - off) // st + 1)
            src.append(slice(lo * st + off, (hi - 1) * st + off + 1, st))
            dst.append(slice(lo, hi))
        if all(d.stop > d.start for d in dst):  # else the column is all padding
            columns.setdefault((*offsets[:-1], offsets[-1] % s[-1]), []).append((u, offsets, src, dst))

    def wrapped(u, dst):  # a flat copy's reads that wrapped along the last axis
        last = dst[-1]
        for z in (slice(0, last.start), slice(last.stop, out[-1])):
            if z.stop > z.start:
                zeros.append((u, dst[0], *(slice(None),) * (len(out) - 2), z))

    for group in columns.values():
        if flat:
            for u, offsets, _, dst in group:
                shift = offsets[0] * inner + sum(o * st for o, st in zip(offsets[1:], steps, strict=True))
                a, b = max(dst[0].start * inner, -shift), min(dst[0].stop * inner, size[0] * inner - shift)
                writes.append(((slice(a + shift, b + shift),), (u, slice(a, b))))
                for k, d in enumerate(dst[1:-1]):  # other axes than the last: none in 2-D
                    for z in (slice(0, d.start), slice(d.stop, out[k + 1])):
                        if z.stop > z.start:
                            zeros.append((u, dst[0], *(slice(None),) * k, z))
                wrapped(u, dst)
            continue

        def shifted(base, col):  # col's elements as base's shifted by j positions, or None
            j = (col[1][-1] - base[1][-1]) // s[-1]
            fits = base[3][-1].start <= col[3][-1].start + j and col[3][-1].stop + j <= base[3][-1].stop
            return j if fits and len(out) > 1 else None

        base = max(group, key=lambda b: sum(shifted(b, c) is not None for c in group))
        for col in group:
            u, _, src, dst = col
            j = None if col is base else shifted(base, col)
            if j is None:
                writes.extend(_pair_writes(src, dst, u, size[-1]) if s[-1] == 2 and out[-1] >= PAIRS_MIN_WIDTH else
                              [(tuple(src), (u, *dst))])
                continue
            a, b = max(dst[0].start * inner, -j), min(dst[0].stop * inner, extended - j)
            derived.append(((u, slice(a, b)), (base[0], slice(a + j, b + j))))
            wrapped(u, dst)
    block = channel_block(groups, 4 * (ncols + mult * len(p.bases)) * extended)
    return _Plan(
        block=block,
        direct=True,
        ones=ncols > len(p.reads),
        flat=flat,
        # zero where no write lands: keyed by everything that places the writes (not the channel
        # count: layers of one geometry share the array, as the phase layout's do)
        buf_key=f"depthwise_direct {size} {g.kernel} {g.strides} {g.dilations} {g.pads_begin} {g.pads_end} {ncols}",
        buf_shape=(block, ncols, rows, *out[1:]),
        writes=tuple(writes),
        reads=(),
        extended=extended,
        sums=tuple(slice(base * inner, base * inner + length) for base in p.bases),
        wide=(mult, *out),
        crop=(),
        zeros=tuple(zeros),
        derived=tuple(derived),
    )


def _pair_writes(src: list[slice], dst: list[slice], u: int, width: int) -> list[tuple]:
    """A column's strided write at step 2 along the last axis as a cast of the input's element pairs:
    viewed as uint64 from an even (parity 0) or odd (parity 1) element on, a pair's low half is the
    element wanted, and numpy's uint64 -> uint32 cast copies it at 1.7x the strided copy's speed
    (4.7-5.0 against 8.3-8.6 us on 9x56x56 elements). Writes are (source, destination) with the source
    (parity, index into that pair view [c, *size[:-1], pairs]); the pairs a view lacks (the last
    odd element: its pair would end past the row) stay a strided write."""
    last, lo = src[-1], dst[-1].start
    count, parity = dst[-1].stop - lo, last.start % 2
    first = last.start // 2
    covered = max(0, min(count, (width - parity) // 2 - first))  # the pairs inside the row
    writes = [((parity, (*src[:-1], slice(first, first + covered))), (u, *dst[:-1], slice(lo, lo + covered)))] \
        if covered else []
    if covered < count:
        writes.append(((*src[:-1], slice(last.start + 2 * covered, last.stop, 2)),
                       (u, *dst[:-1], slice(lo + covered, dst[-1].stop))))
    return writes


def conv(x: Array, p: Packed, g: Geometry, out: tuple[int, ...], bias: Array | None,
         clip: tuple[float, float] | None = None) -> Array:
    """y [n, oc, *out] of x [n, g, *size] (+ bias [oc], or the packed one); `clip` (lo, hi), the fused
    relu, is applied in place to each block of finished output channels."""
    if p.bias is not None:
        assert bias is None, "a bias besides the packed one"
    if p.hwc is not None and math.prod(out) <= CHANNELS_LAST_MAX_OUT:
        return _channels_last(x, p.hwc, g, out, p.bias if bias is None else bias, clip)
    n, groups = x.shape[:2]
    key = (x.shape[1:], g.pads_begin, g.pads_end, BLOCK_BYTES)
    plan = p.plans.get(key)
    if plan is None:
        plan = p.plans[key] = _plan(p, g, x.shape[2:], groups, out)
    mult, block, wide = plan.wide[0], plan.block, plan.wide
    buf = winograd.work(plan.buf_key, plan.buf_shape, zeroed=True)
    work = (buf,
            # a packed bias's row of ones stays below the columns (see _Views.of): its own arrays
            None if plan.direct else  # the columns are buf (see _Views.of)
            winograd.work("depthwise_cols" if p.bias is None else "depthwise_cols_ones", (block, p.w.shape[2], plan.extended)),
            winograd.work("depthwise_sums", (block, mult, len(plan.sums), plan.extended)),
            winograd.work("depthwise_acc", (block, *wide)) if len(plan.sums) > 1 and not plan.direct else None)
    if bias is not None:
        bias = bias.reshape((-1,) + (1,) * len(out))
    y = np.empty((n, groups * mult, *out), np.float32)
    full = _views(plan, block, work)  # looked up once a call: ~1 us a block
    if full.pairs and (x.dtype != np.float32 or x.strides[-1] != 4):
        x = np.ascontiguousarray(x, np.float32)  # the pair views need float32 rows in unit steps
    for b in range(n):
        xb = x[b]
        if full.pairs:  # the input's element pairs from an even and from an odd element on (see _pair_writes)
            w = xb.shape[-1]
            xu = xb.view(np.uint8)
            pairs = (xu[..., : 8 * (w // 2)].view(np.uint64), xu[..., 4 : 4 + 8 * ((w - 1) // 2)].view(np.uint64))
        for c0 in range(0, groups, block):
            c1 = min(groups, c0 + block)
            v = full if c1 - c0 == block else _views(plan, c1 - c0, work)
            xc = xb[c0:c1] if not plan.flat else xb[c0:c1].reshape(c1 - c0, -1)
            for dst, src in zip(v.phases, v.sources, strict=True):
                np.copyto(dst, xc[src])
            for dst, parity, src in v.pairs:
                np.copyto(dst, pairs[parity][c0:c1][src], casting="unsafe")
            for dst, src in v.copies:
                np.copyto(dst, src)
            for z in v.zeros:
                z.fill(0)
            np.matmul(p.w[c0:c1], v.cols, out=v.part)
            yb = y[b, c0 * mult : c1 * mult]
            dst = yb.reshape(v.out_shape)
            if v.acc is not None:  # every sum on wide rows (long inner loops); one pass then crops them
                np.add(v.whole[0], v.whole[1], out=v.acc)
                for s in v.whole[2:]:
                    np.add(v.acc, s, out=v.acc)
            elif v.result is None:  # direct, several row groups: the sums added into the output block
                np.add(v.whole[0], v.whole[1], out=dst)
                for s in v.whole[2:]:
                    np.add(dst, s, out=dst)
            if v.result is not None:
                if bias is None and clip is not None:
                    v.result.clip(*clip, out=dst)  # the crop and the relu in one pass (np.clip's wrapper: ~0.7 us more)
                    continue
                np.copyto(dst, v.result)
            if bias is not None:
                yb += bias[c0 * mult : c1 * mult]
            if clip is not None:
                yb.clip(*clip, out=yb)
    return y


def _views(plan: _Plan, nb: int, work: tuple[Array | None, ...]) -> _Views:
    """The plan's views for blocks of `nb` channels, made again if `work` holds other arrays."""
    v = plan.views.get(nb)
    if v is None or not all(old is new for old, new in zip(v.work, work, strict=True)):
        v = plan.views[nb] = _Views.of(plan, nb, work)
    return v


@dataclass(frozen=True)
class _Views:
    """The views of the work arrays that one block of `nb` channels reads and writes. Made once per
    block size and work arrays (building them per block was ~5 us of Python, a tenth of a 56x56
    block; per call ~10 us, a fifth of a small ShuffleNet layer); they keep the work arrays they
    view alive until the next call rebuilds them (winograd.work's cache dropped them)."""

    work: tuple[Array | None, ...]  # the work arrays viewed: (phases, columns, sums, acc)
    phases: tuple[Array, ...]  # per phase (direct: per column written from the input): where the input's elements go
    sources: tuple[tuple, ...]  # per phase: its elements in a block of the input [nb, *size] (flat: [nb, positions])
    zeros: tuple[Array, ...]  # direct: the columns' padding that their flat copies wrote
    pairs: tuple[tuple[Array, int, tuple], ...]  # (columns as uint32, parity, its pairs) per pair write
    copies: tuple[tuple[Array, Array], ...]  # (columns, flat phase) per run of reads at a constant step
    # (direct: (column, the column it is a shifted copy of))
    cols: Array
    part: Array  # the GEMM's result [nb, oc/g * R, extended]
    whole: tuple[Array, ...]  # per row group: its partial sum on wide rows, shifted by the group's rows
    acc: Array | None  # the running sum on wide rows (more than one row group)
    result: Array | None  # the finished sum (acc, or the one partial sum) without the wide rows' extra
    # columns; None when the sums are added straight into the output block (direct, several row groups)
    out_shape: tuple[int, ...]  # a block of y as [nb, oc/g, out rows, *out after the first axis]
    # (direct: [nb, oc/g, positions])

    @staticmethod
    def of(plan: _Plan, nb: int, work: tuple[Array | None, ...]) -> _Views:
        buf, cols, sums, acc = work
        if cols is None:  # direct: the columns are buf
            cols = buf.reshape(buf.shape[0], buf.shape[1], -1)
        flat = buf.reshape(buf.shape[0], buf.shape[1], -1)[:nb]
        ext, wide, crop = plan.extended, plan.wide, plan.crop
        copies, u = [], 0
        for ph, start, step, count in _runs(plan.reads):
            src = flat[:, ph, start:]
            copies.append((cols[:nb, u : u + count],
                           as_strided(src, (nb, count, ext), (src.strides[0], step * src.strides[1], src.strides[1]),
                                      writeable=False)))
            u += count
        copies += [(cols[(slice(0, nb), *dst)], cols[(slice(0, nb), *src)]) for dst, src in plan.derived]
        part = sums[:nb]
        whole = tuple(part[:, :, k, elements] for k, elements in enumerate(plan.sums))
        if plan.ones:  # the packed bias's row of ones (no copy writes it)
            cols[:, -1] = 1
        return _Views(
            work=work,
            phases=tuple((cols if plan.flat else buf)[(slice(0, nb), *dst)] for src, dst in plan.writes
                         if not isinstance(src[0], int)),
            pairs=tuple((buf.view(np.uint32)[(slice(0, nb), *dst)], src[0], (slice(None), *src[1])) for src, dst in plan.writes
                        if isinstance(src[0], int)),
            zeros=tuple(buf[(slice(0, nb), *z)] for z in plan.zeros),
            sources=tuple((slice(None), *src) for src, _ in plan.writes if not isinstance(src[0], int)),
            copies=tuple(copies),
            cols=cols[:nb],
            part=part.reshape(nb, -1, ext),
            whole=whole,
            acc=None if acc is None else acc[:nb].reshape(nb, wide[0], -1),
            result=(whole[0] if len(whole) == 1 else None) if plan.direct else
            whole[0].reshape(nb, *wide)[crop] if acc is None else acc[:nb][crop],
            out_shape=(nb, wide[0], math.prod(wide[1:])) if plan.direct else
            (nb, *wide[:2], *(c.stop for c in crop[3:])),
        )


def _runs(reads: tuple[tuple[int, slice], ...]) -> list[tuple[int, int, int, int]]:
    """The column reads as runs (phase, first offset, step, count) of reads of one phase whose offsets
    grow by a constant step (a row of taps: 3x3 stride 1 is one run), each copied by one call."""
    runs: list[list[int]] = []
    for ph, elements in reads:
        last = runs[-1] if runs else None
        if last is not None and last[0] == ph and elements.start > last[1] and \
                (last[3] == 1 or elements.start - last[1] == last[2] * last[3]):
            last[2] = (elements.start - last[1]) // last[3]
            last[3] += 1
        else:
            runs.append([ph, elements.start, 1, 1])
    return [tuple(r) for r in runs]


def _channels_last(x: Array, taps: Array, g: Geometry, out: tuple[int, ...], bias: Array | None,
                   clip: tuple[float, float] | None) -> Array:
    """The 2-D depthwise conv on small maps, one image at a time: the zero-padded input is turned
    channels-last [h, w, c] (a 2-D transposing copy), every tap's strided [ho, wo, c] window is
    multiplied by its weight vector along the contiguous channel axis and summed by one einsum over a
    [ho, wo, kh, kw, c] view (long inner loops, no per-channel calls, no pass per tap: 1.2-1.6x faster
    than a multiply and an add per tap on 7x7 outputs, the same float32 sums in the same order), and
    the sum goes back to [c, ho, wo]."""
    n, c, h, w = x.shape
    ho, wo = out
    (pt, pl), (pb, pr) = g.pads_begin, g.pads_end
    (sh, sw), (dh, dw) = g.strides, g.dilations
    # zero borders the interior copy never touches: keyed by the input's geometry
    xh = winograd.work(f"depthwise_hwc {h} {w} {pt} {pl} {pb} {pr}", (h + pt + pb, w + pl + pr, c), zeroed=True)
    hwc = winograd.work("depthwise_hwc_in", (h * w, c))
    acc = winograd.work("depthwise_hwc_acc", (ho, wo, c))
    s0, s1, s2 = xh.strides
    windows = as_strided(xh, (ho, wo, *g.kernel, c), (s0 * sh, s1 * sw, s0 * dh, s1 * dw, s2), writeable=False)
    taps = taps.reshape(*g.kernel, c)
    y = np.empty((n, c, ho, wo), np.float32)
    for b in range(n):
        np.copyto(hwc, x[b].reshape(c, -1).T)  # a 2-D transpose is fast in numpy, a 3-D one into a window is not
        xh[pt : pt + h, pl : pl + w] = hwc.reshape(h, w, c)
        np.einsum("ijklc,klc->ijc", windows, taps, out=acc)
        if bias is not None:
            acc += bias
        np.copyto(y[b].reshape(c, -1), acc.reshape(-1, c).T)
        if clip is not None:
            np.clip(y[b], *clip, out=y[b])
    return y

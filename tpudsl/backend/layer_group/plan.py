"""One layer group of several consecutive ops: its slices, the tiles each op computes in them, and
where every tile lives in local memory.

A group is sliced on its last op's output, `nsecs` parts along N times `hsecs` along H. Each op's
part follows from its consumers' (`backward_update_slice`: `slicing.BACKWARD_UPDATE_SLICE` of each
consumer, last op first), so a conv's halo rows are computed by its producer in the same slice.
`plan_group` returns the plan or the reason the group is not valid:

* every op but the last is read by an op of the group (its part follows from theirs);
* every op is of a kind that joins groups (`GROUPABLE`: one BDC record per part); the moves,
  MatMul and the reductions along C stay groups of one;
* a result read outside the group (the last op's always counts) is stored from every slice, so
  its slices' parts must cover the whole tensor (a strided consumer may skip rows; halo rows are
  stored twice, with the same values);
* a tensor read by several ops of the group is computed, in each slice, as the union of the parts
  they need (the widest N and H ranges: a residual block's input feeds its first conv, halo rows
  and all, and the Add), and each consumer reads its part in place, at an offset into that tile
  (`window_offset`); where isa.py's layout cannot address the part as a local tensor (rows of
  another length in a tile of several channel groups or N), a conv or pool reads on to the tile's
  end if that makes it addressable (`_to_tile_end`: a 1x1 stride-2 conv skips the last row), else
  the group is not valid;
* with more than one slice, no result it stores shares global memory with an input
  (--address-assign freed the input after its last reader, a member: the first slice's store
  would overwrite rows later slices load);
* operands read whole (weights, a dynamic filter) come from outside the group: they are loaded
  whole once per group and never sliced;
* the summed H of every sliced tensor's parts over one N part stays within `H_GROWTH` x its H
  (TPU-MLIR's limit on recomputed halos), and its summed W likewise;
* only when no N x H split fits (`first_fit_split`) is the group cut along W (every op sliceable
  there; a part with fewer columns than its producer's tile is read in place only as one row) or
  along C (every op channel-local, `channel_local`; parts of whole lanes; the whole tiles stay
  whole and a C part reads its channels of them in place, `GroupPlan.whole_at`);
* the tiles fit the chip's local memory: whole tiles, two buffers per loaded input part (slice i+1
  loads into one while slice i computes on the other; a part that lies inside another reader's part
  of the same tensor in every slice, where the layout can address it, reads that one's buffers at
  an offset: the tensor is loaded once per slice, the largest part, `_shared_loads`), the
  intermediate and output tiles, which
  reuse each other's space once their last consumer has run; with the chip's bank rule
  (`bank_conflict_rule`), an op's output tile lies in no bank its input tiles touch.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from tpudsl.backend import slicing
from tpudsl.backend.address_assign import align, global_range, overlap
from tpudsl.backend.chips import Chip
from tpudsl.backend.cores import count_passes
from tpudsl.backend.isa import cgroups, row_bytes
from tpudsl.backend.slicing import (ESIZE, KINDS, Part, Range, Secs, SlicePlan, Tile, as4d, attrs_of, backward_slice,
                                    channel_step, cw_dims, dtype_of, output_dims, shape_of, sliceable, split,
                                    tile_bytes, whole_tiles)

GROUPABLE = ("conv", "pool", "binary", "unary", "lut", "upsample")
H_GROWTH = 1.5  # TPU-MLIR: a split whose input rows grow beyond 1.5x the tensor's rows is rejected


@dataclass
class GroupPlan:
    ops: list[Operation]
    nsecs: int
    hsecs: int
    slices: list[dict[Operation, SlicePlan]]  # per slice (N outer, H inner), each op's part
    whole: dict[Operation, list[int]]  # local addresses of each op's whole tiles
    loads: dict[tuple[Operation, int], tuple[int, int]]  # (op, sliced input index) -> its two buffers
    # (op, sliced input index) -> the earlier reader whose buffers it reads: its part of the same
    # tensor lies inside the part those hold in every slice, so it is not loaded (`_shared_loads`)
    shared: dict[tuple[Operation, int], tuple[Operation, int]]
    # each loader (a loaded (op, input index) not in `shared`) -> the reader whose part it loads
    # into its buffers: the largest of those reading them (`_shared_loads`)
    host: dict[tuple[Operation, int], tuple[Operation, int]]
    out_addr: dict[Operation, int]  # local address of each op's output tile
    # per slice, (op, input index) -> where it reads its part: in place in a member's tile, or in
    # the slice's load buffer (at an offset when it lies inside a larger loaded part)
    reads: list[dict[tuple[Operation, int], int]]
    lmem_bytes: int
    stored: frozenset[Operation]  # the ops whose results leave the group
    out_size: dict[Operation, int]  # bytes per lane of each op's output tile
    ahead: tuple[int, int] | None  # the block of ahead_op's whole tiles when prefetched (prefetch.py)
    used: list[tuple[int, int]]  # every block of local memory the group touches, [start, end)
    csecs: int  # parts along C (whole lanes each) and W; slices C outer, then N, H, W
    wsecs: int
    chip: Chip  # the chip it is planned for

    def whole_at(self, op: Operation, s: int) -> list[int]:
        """Where `op` reads its whole tiles in slice s: loaded once, whole; a C part reads its
        channels in place, (first channel // lanes) channel groups in (a whole tile is (1, C, h, w)
        per output channel in a C-sliced group: `_cw_reason`)."""
        groups, eu = self.slices[s][op].output.start[1] // self.chip.lanes, self.chip.eu_bytes
        if groups == 0:
            return self.whole[op]
        return [at + groups * row_bytes(t.shape[2], t.shape[3], ESIZE[dtype_of(t.value)], eu)
                for t, at in zip(whole_tiles(op), self.whole[op], strict=True)]

    def is_member(self, value: SSAValue) -> bool:
        return value.owner in self.ops

    def loaded(self, s: int, loader: tuple[Operation, int]) -> Tile:
        """The part `loader` (a key of `host`) loads in slice s: its host's."""
        return _part_of(self.slices[s], self.host[loader])

    @property
    def ahead_op(self) -> Operation | None:
        """The first op with whole tiles: the one whose weights a prefetch loads early."""
        return next((op for op in self.ops if whole_tiles(op)), None)


def joins_groups(op: Operation) -> bool:
    """A GROUPABLE kind without tensors of rank > 4 (those fold to a 4-D view of their own), not
    placed on a core by --core-parallel (`core_id`: it runs alone, whole on that core)."""
    return KINDS.get(op.name) in GROUPABLE and "core_id" not in op.attributes and not any(
        isinstance(v.type, TensorType) and len(shape_of(v)) > 4 for v in (*op.operands, *op.results))


def static_reason(ops: list[Operation]) -> str | None:
    """Why `ops` cannot be one group whatever its slicing, nor with more ops before them (None: they may be)."""
    if not joins_groups(ops[-1]):
        return f"{ops[-1].name} does not join groups"
    members = {ops[-1]}
    for op in ops[-2::-1]:
        reason = reason_in_front(op, members)
        if reason is not None:
            return reason
        members.add(op)
    return None


def reason_in_front(op: Operation, members: set[Operation]) -> str | None:
    """Why `op` cannot join a run `members` that static_reason accepts, in front of it (None: the longer
    run is accepted too): the search grows its runs so, one op at a time. The members' checks only
    change where they involve `op` (its producers come before it: none of its operands is a member)."""
    if not joins_groups(op):
        return f"{op.name} does not join groups"
    if any(t.value.owner is op for r in op.results for u in r.uses if u.operation in members
           for t in whole_tiles(u.operation)):
        return "an operand read whole (weight, dynamic filter) is computed inside the group"
    if not any(u.operation in members for u in op.results[0].uses):
        return "an op other than the last is read by no op of the group (its slices are undefined)"
    return None


def _stored(ops: list[Operation]) -> frozenset[Operation]:
    return frozenset(op for op in ops if op is ops[-1] or any(u.operation not in ops for u in op.results[0].uses))


def _shares_memory(ops: list[Operation], stored: frozenset[Operation]) -> bool:
    """Whether a result the group stores shares global memory with one of its inputs."""
    inputs = [global_range(v) for op in ops for v in op.operands if v.owner not in ops]
    outs = [global_range(op.results[0]) for op in stored]
    return any(out is not None and overlap(out, i) for out in outs for i in inputs)


def _covers(op: Operation, slices: list[dict[Operation, SlicePlan]]) -> bool:
    """Whether the op's output parts over the slices cover its whole tensor (N x C x H x W of its view)."""
    seen = np.zeros(_view(op.results[0]), bool)
    for parts in slices:
        t = parts[op].output
        seen[tuple(slice(a, a + k) for a, k in zip(t.start, t.shape, strict=True))] = True
    return bool(seen.all())


def _backward(ops: list[Operation], part: Part) -> dict[Operation, SlicePlan]:
    """Each op's part of the slice `part` of the last op's output. A tensor read by several members
    is computed as the union of their parts: every consumer of a member comes after it in `ops`, so
    all of them have asked for their part before its producer's turn. C and W stay None (whole,
    each op's own pads) unless the group is cut along them."""
    wanted: dict[SSAValue, Part] = {ops[-1].results[0]: part}
    plans: dict[Operation, SlicePlan] = {}
    for op in reversed(ops):
        _backward_step(op, wanted, plans, part)
    return plans


def _backward_step(op: Operation, wanted: dict[SSAValue, Part], plans: dict[Operation, SlicePlan], part: Part) -> None:
    """`op`'s part (from what its consumers asked for in `wanted`) into `plans`, and what it asks of
    its operands into `wanted` (of every producer: those outside the group are never read)."""
    cut_c, cut_w = part.c is not None, part.w is not None
    got = wanted[op.results[0]]
    if KINDS[op.name] == "upsample" and got.w is not None:
        sw = attrs_of(op)["scale_w"]  # whole input columns: the record repeats each sw times from the first
        got = Part(got.n, got.h, got.c, (got.w[0] // sw * sw, -(-got.w[1] // sw) * sw))
    plan = plans[op] = backward_slice(op, got)
    for t in plan.inputs:
        r = [(a, a + k) for a, k in zip(t.start, t.shape, strict=True)]
        new = Part(r[0], r[2], r[1] if cut_c else None, r[3] if cut_w else None)
        had = wanted.get(t.value)
        wanted[t.value] = new if had is None else Part(*(_union(x, y) for x, y in zip(
            (had.n, had.h, had.c, had.w), (new.n, new.h, new.c, new.w), strict=True)))


class Backward:
    """`_backward` for runs that end at the same op, remembered per part of its output: the search
    asks for ops[j:i] with j = i-2, i-3, .. (each run one op longer at the front). A member's part
    depends only on what its consumers in the run ask for, and all of them come after it, so the
    parts of ops[j+1:i] are those of ops[j:i] but op j's, which follows from them: a longer run
    costs one op per slice, not its length (the same parts, so the same decisions)."""

    def __init__(self) -> None:
        # (last op, part) -> (the ops done, last first; what each producer is asked for; their parts)
        self.done: dict[tuple[Operation, Part], tuple[list[Operation], dict, dict]] = {}
        self.reasons: dict[tuple[Operation, ...], str | None] = {}  # run -> its static_reason

    def static_reason(self, ops: list[Operation]) -> str | None:
        """static_reason(ops), once per run: plan_group asks it at every split the search tries."""
        key = tuple(ops)
        if key not in self.reasons:
            self.reasons[key] = static_reason(ops)
        return self.reasons[key]

    def __call__(self, ops: list[Operation], part: Part) -> dict[Operation, SlicePlan]:
        key = (ops[-1], part)
        seq, wanted, plans = self.done.get(key) or ([], {}, {})
        if any(a is not b for a, b in zip(seq, reversed(ops))):  # another run ending there: start over
            seq, wanted, plans = [], {}, {}
        if not seq:
            wanted[ops[-1].results[0]] = part
        for op in ops[len(ops) - 1 - len(seq)::-1] if len(seq) < len(ops) else ():
            _backward_step(op, wanted, plans, part)
            seq.append(op)
        self.done[key] = (seq, wanted, plans)
        return {op: plans[op] for op in reversed(ops)}  # a copy: plan_group replaces parts in it


def _shared_loads(ops: list[Operation], slices: list[dict[Operation, SlicePlan]], chip: Chip
                  ) -> tuple[dict[tuple[Operation, int], tuple[Operation, int]], dict[tuple[Operation, int],
                                                                                     tuple[Operation, int]]]:
    """(shared, host): the loaded parts that are read inside another load, and what each load holds.
    A reader (op, input i) of a tensor from outside the group whose part lies, in every slice, inside
    the part another reader of it loads, where isa.py's layout can address it in place
    (`_inside`), reads that load's buffers at an offset and is not loaded itself: `shared` maps it
    to the buffer's first reader in program order (the loader, which loads it in each slice), and
    `host` maps every loader to the reader whose part it loads, the largest (a residual block's
    input: its first 3x3 conv's rows with the halos, the Add's rows inside them; equal parts: the
    first reader's own). A later reader whose part holds every part of a buffer becomes its host.
    A conv's or pool's part that is not addressable in the larger one reads on to its end where that
    makes it so (`_to_tile_end`, as for a producer's tile: ResNet's downsampling 1x1 stride-2 conv
    beside its block's 3x3 stride-2 conv, 13 rows of the 14 the 3x3 conv loads, on 4 channel groups
    per lane); `slices` then holds its wider part. A part that sticks out in some slice, or lies in
    it at rows isa.py's layout cannot hand out (another channel range, fewer rows of several channel
    groups or N), is loaded on its own. Load buffers are held for the whole group (never freed), so
    they live until the last reader of each slice."""
    def parts(key: tuple[Operation, int]) -> list[Tile]:
        return [_part_of(s, key) for s in slices]

    host: dict[tuple[Operation, int], tuple[Operation, int]] = {}
    shared: dict[tuple[Operation, int], tuple[Operation, int]] = {}
    for op in ops:
        for i, t in enumerate(slices[0][op].inputs):
            if t.value.owner in ops:
                continue
            key, mine = (op, i), parts((op, i))
            for loader, big in host.items():
                if (inside := _reading_inside(op, i, slices, parts(big), chip)) is not None:
                    for s, part in zip(slices, inside, strict=True):
                        s[op] = part
                    shared[key] = loader
                    break
                readers = [loader, *(k for k, v in shared.items() if v == loader)]
                if all(_inside(p, t, chip) for r in readers for p, t in zip(parts(r), mine, strict=True)):
                    shared[key], host[loader] = loader, key
                    break
            else:
                host[key] = key
    return shared, host


def _part_of(parts: dict[Operation, SlicePlan], key: tuple[Operation, int]) -> Tile:
    """The part of its operand key[1] that op key[0] reads in the slice `parts`."""
    return parts[key[0]].inputs[key[1]]


def _reading_inside(op: Operation, i: int, slices: list[dict[Operation, SlicePlan]], tiles: list[Tile],
                    chip: Chip) -> list[SlicePlan] | None:
    """`op`'s part in each slice, its operand i read inside that slice's tile of `tiles` (`_inside`),
    read on to the tile's end where only that makes it so (`_to_tile_end`), or None if some slice's
    cannot be."""
    got = []
    for s, tile in zip(slices, tiles, strict=True):
        part = s[op]
        if not _inside(part.inputs[i], tile, chip):
            part = _to_tile_end(op, part, i, tile)  # type: ignore[assignment]
            if part is None or not _inside(part.inputs[i], tile, chip):
                return None
        got.append(part)
    return got


def _inside(part: Tile, tile: Tile, chip: Chip) -> bool:
    """Whether `part` lies inside `tile` (the same tensor, view and strides; along every axis within
    its range) and isa.py's layout reads it there in place (`window_offset`)."""
    return part.value is tile.value and (part.strides, part.base) == (tile.strides, tile.base) \
        and all(ts <= ps and ps + pk <= ts + tk for ps, pk, ts, tk in zip(part.start, part.shape, tile.start,
                                                                          tile.shape, strict=True)) \
        and window_offset(tile, part, chip) is not None


def _union(a: Range | None, b: Range | None) -> Range | None:
    return None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))


def window_offset(tile: Tile, part: Tile, chip: Chip) -> int | None:
    """Bytes from the start of `tile` (a producer's output in local memory) to `part` (the rows a
    consumer reads, inside it) read in place as the local tensor `part.shape` (isa.py's layout), or
    None when that tensor would not be these elements: its rows (n, channel group) are laid out
    `row_bytes(part's h, w)` apart, the tile's `row_bytes(tile's h, w)` apart, so a part with fewer rows
    is addressable only when it has one row of planes (N 1, one channel group) or the rounding to
    the EU width makes both lengths equal. A part with fewer columns (a W slice's halo) is one run
    of a plane only when it has one row. Its channels are the tile's (a C-sliced group is channel-local:
    every op's part has the slice's channels). Its last row must also end inside the tile."""
    if part.shape == tile.shape:
        return 0
    n, c, h, w = part.shape
    tw = tile.shape[3]
    if (part.start[1], c) != (tile.start[1], tile.shape[1]) or (w != tw and h > 1):
        return None
    esize, groups = ESIZE[dtype_of(part.value)], cgroups(c, chip.lanes)
    row, tile_row = row_bytes(h, w, esize, chip.eu_bytes), row_bytes(tile.shape[2], tw, esize, chip.eu_bytes)
    if n * groups > 1 and row != tile_row:
        return None
    offset = (part.start[0] - tile.start[0]) * groups * tile_row + (part.start[2] - tile.start[2]) * tw * esize \
        + (part.start[3] - tile.start[3]) * esize
    end = offset + (n * groups - 1) * tile_row + row
    return offset if end <= tile.shape[0] * groups * tile_row else None


class _Allocator:
    """First fit of EU-aligned blocks from offset 0: a block is freed once its last reader ran."""

    def __init__(self, eu: int):
        self.eu, self.live, self.end = eu, {}, 0

    def take(self, key: object, size: int, avoid: list[tuple[int, int]] = ()) -> int:  # type: ignore[assignment]
        """The first fit of `size` bytes around the live blocks and the ranges `avoid`."""
        at = 0
        for start, stop in sorted([*self.live.values(), *avoid]):
            if at + size <= start:
                break
            at = max(at, align(stop, self.eu))
        self.live[key] = (at, at + size)
        self.end = max(self.end, at + size)
        return at

    def free(self, key: object) -> None:
        del self.live[key]


def _input_banks(op: Operation, ops: list[Operation], alloc: _Allocator, chip: Chip,
                 shared: dict[tuple[Operation, int], tuple[Operation, int]]) -> list[tuple[int, int]]:
    """With the chip's bank rule, the banks of `op`'s input tiles (its loaded parts' buffers, its
    own or an earlier reader's when shared, and its producers' output tiles in the group): its
    output tile must avoid them. Whole tiles (weights) are not counted."""
    if not chip.bank_conflict_rule:
        return []
    blocks = [alloc.live[key] for key in alloc.live if isinstance(key, tuple) and key[0] is op]
    blocks += [alloc.live[src] for key, src in shared.items() if key[0] is op]
    blocks += [alloc.live[v.owner] for v in op.operands if v.owner in ops]  # type: ignore[index]
    bank = chip.bank_bytes
    return [(start - start % bank, align(stop, bank)) for start, stop in blocks]


def plan_group(ops: list[Operation], chip: Chip, nsecs: int, hsecs: int, check_memory: bool = True,
               ahead_base: int | None = None, csecs: int = 1, wsecs: int = 1,
               check_growth: bool = True, backward: Backward | None = None) -> GroupPlan | str:
    """The plan of `ops` as one group sliced (nsecs, hsecs), or why that is not valid (without
    `check_memory`, a plan whatever local memory it needs: the cost of a group of one). The whole
    tiles lie one after the other from 0, but with `ahead_base` those of the first op that has
    some (prefetched during the group before) from there; the other tiles are first fit around.
    `csecs`, `wsecs`: also cut along C (whole lanes per part; every op channel-local) and W (slices
    C outer, then N, H, W, as `slicing.parts` orders an op alone's). Without `check_growth`, the
    halo growth limit is not checked (what local memory a split needs at least, first_fit_split).
    `backward`: where the search remembers the parts of the runs that end at ops[-1] (`Backward`)."""
    reason = (static_reason(ops) if backward is None else backward.static_reason(ops)) or _cw_reason(ops, csecs, wsecs)
    if reason is not None:
        return reason
    slices = [(backward or _backward)(ops, p) for p in slicing.parts(ops[-1], Secs(nsecs, hsecs, csecs, wsecs))]
    stored = _stored(ops)
    if any(not _covers(op, slices) for op in stored):
        return "its slices do not compute all of a result used outside the group"
    if len(slices) > 1 and _shares_memory(ops, stored):
        return "a result it stores shares global memory with an input it still reads after the first store"
    for axis, secs, step, name in ((2, hsecs, wsecs, "rows"), (3, wsecs, 1, "columns")):
        if check_growth and secs > 1 and len(ops) > 1:  # a group of one is sliced as opt=1 slices it
            for op in ops:  # the parts along this axis of the first slice's other ranges
                for i, t in enumerate(slices[0][op].inputs):
                    size = _view(t.value)[axis]
                    got = sum(s[op].inputs[i].shape[axis] for s in slices[:secs * step:step])
                    if size > 1 and got > H_GROWTH * size:  # one row/column: a broadcast read, no halo
                        return (f"its {'H' if axis == 2 else 'W'} slices read {got} {name} of a {size}-{name[:-1]} "
                                f"tensor (> {H_GROWTH}x)")
    first = next((op for op in ops if whole_tiles(op)), None) if ahead_base is not None else None
    top, at, whole = 0, ahead_base, {}
    for op in ops:
        whole[op] = []
        for t in whole_tiles(op):
            if op is first:
                whole[op].append(at)
                at = align(at + tile_bytes(t, chip), chip.eu_bytes)  # type: ignore[operator]
            else:
                whole[op].append(top)
                top = align(top + tile_bytes(t, chip), chip.eu_bytes)
    alloc = _Allocator(chip.eu_bytes)
    if top > 0:  # held for the whole group
        alloc.live["whole"], alloc.end = (0, top), top
    ahead = None
    if first is not None:
        ahead = alloc.live["ahead"] = (ahead_base, at)  # type: ignore[assignment]
        alloc.end = max(alloc.end, at)  # type: ignore[type-var]
    loads, (shared, host) = {}, _shared_loads(ops, slices, chip)
    for op in ops:
        for i, t in enumerate(slices[0][op].inputs):
            if (op, i) in shared:
                loads[(op, i)] = loads[shared[(op, i)]]
            elif t.value.owner not in ops:  # held for the whole group: every later reader is covered
                size = align(max(tile_bytes(_part_of(s, host[(op, i)]), chip) for s in slices), chip.eu_bytes)
                buffers = 2 if len(slices) > 1 else 1
                at = alloc.take((op, i), size * buffers)
                loads[(op, i)] = (at, at + size * (buffers - 1))
    out_addr, out_size, used = {}, {}, list(alloc.live.values())
    last_reader = {op: max((ops.index(u.operation) for u in op.results[0].uses if u.operation in ops),
                           default=len(ops)) for op in ops}
    for i, op in enumerate(ops):
        for done in [o for o in alloc.live if isinstance(o, Operation) and last_reader[o] < i]:
            alloc.free(done)
        out_size[op] = max(tile_bytes(s[op].output, chip) for s in slices)
        out_addr[op] = alloc.take(op, out_size[op], _input_banks(op, ops, alloc, chip, shared))
        used.append(alloc.live[op])
    if check_memory and alloc.end > chip.lmem_bytes:
        return f"its tiles need {alloc.end} bytes per lane; chip {chip.name} has {chip.lmem_bytes}"
    reads = []
    for k, parts in enumerate(slices):
        reads.append({})
        for op in ops:
            for i, t in enumerate(parts[op].inputs):
                if t.value.owner not in ops:  # in its load buffer, `_inside` the part loaded there
                    big = host[shared.get((op, i), (op, i))]
                    offset = 0 if big == (op, i) else window_offset(_part_of(parts, big), t, chip)
                    reads[-1][(op, i)] = loads[(op, i)][k % 2] + offset  # type: ignore[operator]
                else:
                    tile = parts[t.value.owner].output  # type: ignore[index]
                    offset = window_offset(tile, t, chip)
                    if offset is None and (wider := _to_tile_end(op, parts[op], i, tile)) is not None:
                        parts[op], offset = wider, window_offset(tile, wider.inputs[i], chip)
                    if offset is None:
                        return (f"{op.name} reads a part of its operand {i} that its producer's tile (the union of "
                                f"its consumers' parts) cannot hand out in place")
                    reads[-1][(op, i)] = out_addr[t.value.owner] + offset  # type: ignore[index]
    return GroupPlan(ops, nsecs, hsecs, slices, whole, loads, shared, host, out_addr, reads, alloc.end, stored, out_size,
                     ahead, used, csecs, wsecs, chip)


def _view(value: SSAValue) -> tuple[int, int, int, int]:
    """A tensor's 4-D view (a group's ops have rank <= 4: `joins_groups`)."""
    return as4d(value.owner, shape_of(value))  # type: ignore[arg-type]


def channel_local(op: Operation) -> bool:
    """Whether each output channel of the op reads only its own input channel (a group cut along C
    must consist of such ops): pool, element-wise, Lut, Upsample, a depthwise conv; not a conv of
    group 1 (or another grouping), which mixes channels."""
    if KINDS[op.name] == "conv":
        a = attrs_of(op)
        return a["group"] == shape_of(op.operands[0])[1] == shape_of(op.results[0])[1]
    return KINDS[op.name] in ("pool", "binary", "unary", "lut", "upsample")


def _cw_reason(ops: list[Operation], csecs: int, wsecs: int) -> str | None:
    """Why the group cannot be cut csecs x wsecs along C and W (None: it may)."""
    for op in ops:
        if wsecs > 1 and not sliceable(op, "W"):
            return f"{op.name} is not sliced along W"
        if csecs > 1 and not channel_local(op):
            return f"{op.name} mixes channels: the group is not sliced along C"
        if csecs > 1 and any(t.shape[0] != 1 or t.shape[1] != _view(op.results[0])[1] for t in whole_tiles(op)):
            return f"{op.name}'s whole tiles are not per output channel: the group is not sliced along C"
    return None


def _to_tile_end(op: Operation, part: SlicePlan, i: int, tile: Tile) -> SlicePlan | None:
    """A conv's or pool's part `part` reading its operand `i` down to the end of `tile`, its
    producer's or the part another reader loads (`_shared_loads`) (None: not such a case). A
    strided window may leave the tile's last rows unread (a 1x1
    stride-2 conv reads rows 0, 2, .., 26 of 28), and then its part, one row short, cannot be read
    in place from a tile of several channel groups (`window_offset`); with the rows after it the
    windows start where they did, the record computes the same output rows (the cmodel requires
    enough input rows, not exactly as many) and the part is the tile's own row range. Only rows
    after the part are added, and only without a bottom pad (a part with one reaches the tensor's
    end already)."""
    t = part.inputs[i]
    end, tile_end = t.start[2] + t.shape[2], tile.start[2] + tile.shape[2]
    if KINDS[op.name] not in ("conv", "pool") or part.pads[1] or not t.start[2] >= tile.start[2] or end >= tile_end:
        return None
    wider = Tile(t.value, t.start, (t.shape[0], t.shape[1], tile_end - t.start[2], t.shape[3]), t.strides, t.base)
    return replace(part, inputs=[wider if k == i else x for k, x in enumerate(part.inputs)])


def first_fit_split(ops: list[Operation], chip: Chip, backward: Backward | None = None) -> GroupPlan | str:
    """The valid plan with the fewest slices (N before H, as groups of one), or why there is none.
    Only when even the finest N x H split (one row per slice) is short of local memory: W too,
    then C (`_cut_split`); N x H first keeps every group that fitted before sliced as before."""
    whole = sum(align(tile_bytes(t, chip), chip.eu_bytes) for op in ops for t in whole_tiles(op))
    if whole > chip.lmem_bytes:  # held whole for the whole group: no slicing helps
        return f"its whole tiles need {whole} bytes per lane; chip {chip.name} has {chip.lmem_bytes}"
    reason = _fewest_nh(ops, chip, 1, 1, backward)
    if isinstance(reason, GroupPlan) or not (_short(reason) or reason.startswith("its H slices")):
        return reason
    # short of memory, _fewest_nh's last try was the finest split itself (growth checked and within)
    if not _short(reason) and not _short(_finest(ops, chip, 1, 1, backward)):
        return reason
    for dim in ("W", "C"):
        got = _cut_split(ops, chip, dim, backward)
        if got is not None:
            return got
    return reason


def _short(got: GroupPlan | str) -> bool:
    return isinstance(got, str) and got.startswith("its tiles need")


def _finest(ops: list[Operation], chip: Chip, csecs: int, wsecs: int, backward: Backward | None) -> GroupPlan | str:
    """The plan of the finest N x H split (growth aside): what local memory needs at least."""
    return plan_group(ops, chip, *output_dims(ops[-1]), csecs=csecs, wsecs=wsecs, check_growth=False,
                      backward=backward)


def _cut_split(ops: list[Operation], chip: Chip, dim: str, backward: Backward | None) -> GroupPlan | None:
    """The valid plan with the fewest parts along `dim` (W, or C in whole lanes), each with the
    fewest N x H slices, or None. The fewest parts whose finest N x H split fits are found by
    bisection (fewer parts never need less memory); from there up, the first count that gives a
    valid plan; a reason other than memory or H growth ends the search (more parts cannot fix it)."""
    if _cw_reason(ops, 2 if dim == "C" else 1, 2 if dim == "W" else 1) is not None:
        return None
    total = _view(ops[-1].results[0])[1] if dim == "C" else cw_dims(ops[-1])[1]
    step = (lambda t, k: channel_step(t, k, chip.lanes)) if dim == "C" else (lambda t, k: -(-t // k))
    counts = [k for k in range(2, total + 1) if -(-total // step(total, k)) == k]  # distinct splits
    secs = lambda k: (k, 1) if dim == "C" else (1, k)  # noqa: E731
    lo, hi = 0, len(counts)
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if _short(_finest(ops, chip, *secs(counts[mid]), backward)) else (lo, mid)
    for k in counts[lo:]:
        got = _fewest_nh(ops, chip, *secs(k), backward)
        if isinstance(got, GroupPlan):
            return got
        if not (_short(got) or got.startswith("its H slices")):
            return None
    return None


def _fewest_nh(ops: list[Operation], chip: Chip, csecs: int, wsecs: int,
               backward: Backward | None) -> GroupPlan | str:
    """The valid plan with the fewest N x H slices (N before H) for these C and W parts, or why
    there is none; with several cores at least one slice per core where N x H has that many, and a
    count the cores divide evenly first (cores.count_passes, as single._fewest_nh)."""
    n_total, h_total = output_dims(ops[-1])
    reason = "no split"
    for allowed in count_passes(chip.cores, n_total * h_total):
        for hsecs in range(1, h_total + 1):
            if len(split(h_total, hsecs)) != hsecs:
                continue
            for nsecs in range(1, n_total + 1):
                if len(split(n_total, nsecs)) != nsecs or not allowed(nsecs * hsecs * csecs * wsecs):
                    continue
                got = plan_group(ops, chip, nsecs, hsecs, csecs=csecs, wsecs=wsecs, backward=backward)
                if isinstance(got, GroupPlan):
                    return got
                reason = got
                if not reason.startswith("its tiles need"):
                    return reason  # more slices cannot fix the others (H growth only grows)
    return reason

"""Several cores (bm1688's `--num_core 2`): how slices are dealt to the cores, the phases between
barriers, and the time of a stream of several cores (docs/backend.md, "Several cores").

Each core has its own command stream, lanes and local memory; global memory is shared. Codegen
deals each op's (or layer group's) slices to the cores in contiguous runs and ends every op or
group with an `isa.CoreSync` barrier in every stream, so a phase (the records of each core between
two barriers) reads only what earlier phases wrote. A phase takes as long as its slowest core.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate

from tpudsl.backend import isa
from tpudsl.backend.chips import Chip
from tpudsl.backend.schedule import Schedule, schedule
from tpudsl.ir.diagnostics import TpudslError


def deal(count: int, cores: int) -> list[range]:
    """Slices 0..count-1 dealt to the cores in contiguous runs whose sizes differ by at most one,
    the earlier cores the larger (core 0 always has a slice: the layer-group ranges start there;
    the cores without one are the last)."""
    size, extra = divmod(count, cores)
    bounds = [k * size + min(k, extra) for k in range(cores + 1)]
    return [range(bounds[k], bounds[k + 1]) for k in range(cores)]


def count_passes(cores: int, rows: int) -> list[Callable[[int], bool]]:
    """The slice counts the slicing searches accept, pass by pass (each takes the first that fits):
    with several cores, at least one slice per core where the output's N x H `rows` are that many,
    a count the cores divide evenly in the first pass; with one core, every count in one."""
    least = min(cores, rows)
    evens = (True, False) if cores > 1 else (False,)
    return [lambda count, even=even: count >= least and not (even and count % cores) for even in evens]


def starts(counts: Sequence[int]) -> list[int]:
    """Where each core's stream starts in the streams one after another of `counts` records each."""
    return list(accumulate(counts, initial=0))[:-1]


def one_core(records: Sequence[isa.Record]) -> Sequence[isa.Record]:
    """The stream of a one-core .bmodel, `records`, checked to hold no barrier: a barrier waits for
    other cores, and one core has none to wait for."""
    at = next((i for i, r in enumerate(records) if isinstance(r, isa.CoreSync)), None)
    if at is not None:
        raise TpudslError(f"command stream: barrier {records[at].barrier} (CoreSync) at instruction {at} of "  # type: ignore[attr-defined]
                          "a one-core bmodel: barriers are for several cores (the header's core_num)")
    return records


def streams_of(records: Sequence[isa.Record], counts: Sequence[int] | None) -> list[Sequence[isa.Record]]:
    """Each core's stream of a .bmodel's records, `counts` records each (the header's
    core_instructions; None: one core, `one_core`)."""
    if counts is None:
        return [one_core(records)]
    return [records[start:start + count] for start, count in zip(starts(counts), counts, strict=True)]


def phase_bounds(stream: Sequence[isa.Record]) -> list[tuple[int, int]]:
    """(start, end) of each phase of one core's stream, its barrier last; a stream ends with one."""
    bounds, start = [], 0
    for i, r in enumerate(stream):
        if isinstance(r, isa.CoreSync):
            bounds.append((start, i + 1))
            start = i + 1
    if start != len(stream):
        raise TpudslError(f"command stream: {len(stream) - start} instructions after the last barrier of a core")
    return bounds


def check_barriers(streams: Sequence[Sequence[isa.Record]]) -> list[list[tuple[int, int]]]:
    """Each core's phase bounds; every core must reach the same barriers in the same order, else a
    core would wait forever: one error naming the first that differ."""
    bounds = [phase_bounds(s) for s in streams]
    ids = [[s[end - 1].barrier for _, end in b] for s, b in zip(streams, bounds, strict=True)]  # type: ignore[attr-defined]
    for k in range(1, len(streams)):
        if ids[k] != ids[0]:
            at = next((i for i, (a, b) in enumerate(zip(ids[0], ids[k])) if a != b), min(len(ids[0]), len(ids[k])))
            got = [f"barrier {v[at]}" if at < len(v) else "its end" for v in (ids[0], ids[k])]
            raise TpudslError(f"command stream: core 0 reaches {got[0]} where core {k} reaches {got[1]} "
                              f"(phase {at}): the cores would wait for each other forever")
    return bounds


def slowest(streams: Sequence[Sequence[isa.Record]], chip: Chip) -> int:
    """The slowest core's cycles (GDMA and BDC overlapped, schedule.py) of each core's `streams`
    run alone: one phase."""
    return max(schedule(s, chip).makespan for s in streams)


@dataclass(frozen=True)
class Phase:
    """One phase (the records of each core between two barriers) on the stream's time axis: it
    starts when the slowest core of the phase before ended; each core's records are scheduled alone
    (schedule.py, from cycle 0 of the phase)."""

    start: int
    schedules: tuple[Schedule, ...]  # one per core

    @property
    def cycles(self) -> int:
        """The phase's time with GDMA and BDC overlapped: its slowest core's."""
        return max(s.makespan for s in self.schedules)

    @property
    def serial(self) -> int:
        """The phase's time with each core's records one after another: its slowest core's."""
        return max(s.serial for s in self.schedules)


def phases(streams: Sequence[Sequence[isa.Record]], chip: Chip) -> list[Phase]:
    """Each phase of the cores' streams, placed one after another (the cost model's time and
    model_tool --timeline's axis)."""
    out, start = [], 0
    for phase in zip(*check_barriers(streams), strict=True):
        out.append(Phase(start, tuple(schedule(list(s[begin:end]), chip)
                                      for s, (begin, end) in zip(streams, phase, strict=True))))
        start += out[-1].cycles
    return out


def timing(streams: Sequence[Sequence[isa.Record]], chip: Chip) -> tuple[int, int, list[int]]:
    """(serial, overlapped, per core) cycles: each phase takes its slowest core's time, serial (the
    records one after another) or with GDMA and BDC overlapped (schedule.py); per core, the
    overlapped cycles it is busy (without waiting at barriers). One core without barriers: the
    stream's own serial and overlapped cycles."""
    if len(streams) == 1 and not any(isinstance(r, isa.CoreSync) for r in streams[0]):
        t = schedule(list(streams[0]), chip)
        return t.serial, t.makespan, [t.makespan]
    placed = phases(streams, chip)
    busy = [sum(p.schedules[k].makespan for p in placed) for k in range(len(streams))]
    return sum(p.serial for p in placed), sum(p.cycles for p in placed), busy

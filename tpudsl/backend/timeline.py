"""`model_tool --timeline X.bmodel -o X.svg`: a bmodel's command stream as an SVG timeline.

One lane for GDMA and one for BDC; each instruction is a rectangle placed where the two-engine
schedule puts it (schedule.py: the engines overlap, each record waits for the ones it depends on)
and as wide as the cost model's cycles (cost.py). Below them, local-memory occupancy: every local
range a record writes, from that record's start to its last reader's end (schedule.live_ranges),
at its offset in each lane. Rectangles and ranges are coloured per op (debug info's loc name;
instructions before any debug entry, or of a bmodel without debug info, are "no debug info");
each op is one <g> holding its instructions, with the op and instruction in <title> tooltips. The
axis is in cycles and in us at the chip's clock (chips.py). Each layer group of several ops (the
header's layer_groups) is a labelled band over both lanes, from its first record's start to its
last record's end: group id, its ops, nsecs x hsecs.

Several cores (the header's core_num): a GDMA and a BDC lane per core and a local-memory panel
per core, on one time axis where each phase (the records between two barriers) starts when the
slowest core of the phase before ended (cores.phases, the cost model's placement); a dashed
vertical line per barrier and a grey box where a core waits at one. A group band spans its records
on every core in the phases of its records on core 0 (the header's range).
"""

from __future__ import annotations

import bisect
import collections
import colorsys

from dataclasses import dataclass, replace
from xml.sax.saxutils import escape, quoteattr

from tpudsl.backend import isa
from tpudsl.backend.bmodel import Bmodel, group_slices
from tpudsl.backend.chips import chip_named
from tpudsl.backend.cores import one_core, phases, streams_of
from tpudsl.backend.cores import starts as core_starts  # render names its records' start cycles `starts`
from tpudsl.backend.schedule import ENGINES, Schedule, live_ranges, schedule
from tpudsl.ir.diagnostics import TpudslError

WIDTH = 1000  # pixels of the time axis
LEFT, LANE_H, TOP = 60, 30, 56  # room above the lanes for the groups' labels
OCC_H = 240  # pixels of the local-memory panel
TICKS = 5


def _colour(i: int) -> str:
    """A distinct hue per op, by the op's order (golden-angle steps, so neighbours differ); #rrggbb,
    which every SVG renderer reads (some, e.g. cairosvg, draw hsl() black)."""
    rgb = colorsys.hls_to_rgb(i * 137.508 % 360 / 360, 0.55, 0.65)
    return "#" + "".join(f"{round(c * 255):02x}" for c in rgb)


def _anchor(tick: int) -> str:
    """The end ticks' labels stay inside the picture."""
    return "start" if tick == 0 else "end" if tick == TICKS else "middle"


@dataclass(frozen=True)
class Core:
    """One core's stream on the common time axis: its first record's index in the joined stream,
    its records' schedule (cycles of the axis), each record's phase and where the core waits at a
    barrier (t0, t1, barrier)."""

    first: int
    sched: Schedule
    phases: tuple[int, ...] = ()
    waits: tuple[tuple[int, int, int], ...] = ()


def _placed(records: list[isa.Record], header: dict, chip) -> tuple[list[Core], list[tuple[int, int]], int]:
    """Each core on the time axis, the barriers (cycle, number) that end the phases, and the serial
    cycles; one core without barriers is the stream's own schedule."""
    if "core_num" not in header:
        sched = schedule(one_core(records), chip)
        return [Core(0, sched)], [], sched.serial
    counts = header["core_instructions"]
    streams = streams_of(records, counts)
    placed = phases(streams, chip)  # the cost model's placement: a phase starts when the slowest core ended
    cores, barriers = [], []
    for k, (stream, first) in enumerate(zip(streams, core_starts(counts), strict=True)):
        begins, ends, footprints, phase_of, waits, at = [], [], [], [], [], 0
        for n, p in enumerate(placed):
            s = p.schedules[k]
            begins += [p.start + t for t in s.starts]
            ends += [p.start + t for t in s.ends]
            footprints += s.footprints
            phase_of += [n] * len(s.starts)
            at += len(s.starts)
            barrier = stream[at - 1].barrier  # type: ignore[attr-defined]  # a phase ends with its CoreSync
            if s.makespan < p.cycles:
                waits.append((p.start + s.makespan, p.start + p.cycles, barrier))
            if k == 0:
                barriers.append((p.start + p.cycles, barrier))
        cores.append(Core(first, Schedule(tuple(begins), tuple(ends), tuple(footprints)), tuple(phase_of),
                          tuple(waits)))
    return cores, barriers, sum(p.serial for p in placed)


def _check_local(core: Core, names: list[str], lmem_bytes: int) -> None:
    """A record touching local bytes past the chip's local memory is an error (the cmodel faults there too)."""
    for i, fp in enumerate(core.sched.footprints, core.first):
        for span in fp.reads + fp.writes:
            if span.space == "local" and span.end > lmem_bytes:
                raise TpudslError(f"bmodel: instruction {i} ({names[i]}) touches local bytes {span.start}..{span.end}, "
                                  f"past the chip's {lmem_bytes} bytes per lane")


def _panel_bytes(top: int, lmem_bytes: int) -> int:
    """The local-memory panel's height in bytes: the used part rounded up to a power of two, at most
    the chip's, so that small tensors stay visible."""
    size = 1
    while size < top:
        size *= 2
    return min(size, lmem_bytes)


def render(model: Bmodel) -> str:
    """The SVG text of `model`'s timeline; TpudslError when the command stream does not decode,
    disagrees with the header's instruction counts or barriers, or touches local memory the chip
    does not have."""
    from tpudsl.backend.cmodel.engine import op_names

    h, chip = model.header, chip_named(model.header["chip"])
    multi = "core_num" in h
    records = isa.checked_records(model.commands, h)
    names = op_names(model.debug, len(records))
    cores, barriers, serial = _placed(records, h, chip)
    for core in cores:
        _check_local(core, names, chip.lmem_bytes)
    lives = [[replace(a, record=a.record + core.first) for a in live_ranges(core.sched)] for core in cores]
    starts = [t for core in cores for t in core.sched.starts]  # by index in the joined stream
    ends = [t for core in cores for t in core.sched.ends]
    core_of = [k for k, core in enumerate(cores) for _ in core.sched.starts]
    makespan = max(core.sched.makespan for core in cores)
    total = max(makespan, 1)
    scale = WIDTH / total
    ops = list(dict.fromkeys(names))
    colour = {op: _colour(k) for k, op in enumerate(ops)}
    lane_y = {(k, e): TOP + (len(ENGINES) * k + j) * (LANE_H + 10) for k in range(len(cores))
              for j, e in enumerate(ENGINES)}
    bottom = max(lane_y.values()) + LANE_H
    occ_y = [bottom + 30 + k * (OCC_H + 30) for k in range(len(cores))]
    panel = _panel_bytes(max((a.end for live in lives for a in live), default=1), chip.lmem_bytes)
    yscale = OCC_H / panel
    axis_y = occ_y[-1] + OCC_H + 10
    legend_y = axis_y + 50
    height = legend_y + 20 * len(ops) + 20
    on_cores, per_phase = (f", {len(cores)} cores", ", each phase as long as its slowest core") if multi else ("", "")
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{LEFT + WIDTH + 20}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<text x="{LEFT}" y="20">{escape(h["network"])} on {escape(chip.name)} ({escape(h["mode"])}{on_cores}): '
           f'{makespan} cycles, {makespan / chip.clock_mhz:.3f} us at {chip.clock_mhz} MHz with GDMA and '
           f'BDC overlapped{per_phase} ({serial} cycles one after another)</text>']
    out += [f'<text x="4" y="{y + LANE_H * 0.65:.0f}">{e.upper()}{f" {k}" if multi else ""}</text>'
            for (k, e), y in lane_y.items()]
    phase_of = [n for core in cores for n in core.phases] if multi else None
    out += _group_bands(h.get("layer_groups", []), records, phase_of, starts, ends, scale, bottom)
    out += _waits(cores, lane_y, scale)
    for op in ops:
        out.append(f'<g class="op" data-op={quoteattr(op)} fill="{colour[op]}" stroke="white" stroke-width="0.5">'
                   f'<title>{escape(op)}</title>')
        for i, (r, name) in enumerate(zip(records, names, strict=True)):
            if name == op:
                start, c, k = starts[i], ends[i] - starts[i], core_of[i]
                on_core = (f' data-core="{k}"', f" on core {k}") if multi else ("", "")
                out.append(f'<rect x="{LEFT + start * scale:.3f}" y="{lane_y[k, r.ENGINE]}" width="{c * scale:.3f}" '
                           f'height="{LANE_H}" data-index="{i}" data-start="{start}" data-cycles="{c}" '
                           f'data-engine="{r.ENGINE}"{on_core[0]}><title>{escape(op)}: instruction {i} '
                           f'{type(r).__name__}{on_core[1]}, cycles {start}..{ends[i]}</title></rect>')
        out.append("</g>")
    for k, live in enumerate(lives):
        out += _occupancy(live, names, colour, occ_y[k], panel, scale, yscale, k if multi else None)
    out += [f'<line class="barrier" x1="{LEFT + t * scale:.3f}" y1="{TOP - 14}" x2="{LEFT + t * scale:.3f}" '
            f'y2="{axis_y}" stroke="#b00000" stroke-dasharray="4 3" data-barrier="{b}" data-cycle="{t}">'
            f'<title>barrier {b}: every core at cycle {t}</title></line>' for t, b in barriers]
    out.append(f'<line x1="{LEFT}" y1="{axis_y}" x2="{LEFT + WIDTH}" y2="{axis_y}" stroke="black"/>')
    for k in range(TICKS + 1):
        cyc = total * k // TICKS
        x = LEFT + cyc * scale
        out.append(f'<line x1="{x:.3f}" y1="{axis_y}" x2="{x:.3f}" y2="{axis_y + 5}" stroke="black"/>'
                   f'<text x="{x:.3f}" y="{axis_y + 18}" text-anchor="{_anchor(k)}">{cyc} cyc</text>'
                   f'<text x="{x:.3f}" y="{axis_y + 32}" text-anchor="{_anchor(k)}">'
                   f'{cyc / chip.clock_mhz:.3f} us</text>')
    for k, op in enumerate(ops):
        y = legend_y + 20 * k
        out.append(f'<g class="legend"><rect x="{LEFT}" y="{y}" width="12" height="12" fill="{colour[op]}"/>'
                   f'<text x="{LEFT + 18}" y="{y + 11}">{escape(op)}</text></g>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _waits(cores: list[Core], lane_y: dict, scale: float) -> list[str]:
    """A grey box over a core's lanes where it has finished its phase and waits at the barrier for
    the slowest core."""
    out = []
    for k, core in enumerate(cores):
        for t0, t1, barrier in core.waits:
            out.append(f'<rect class="wait" x="{LEFT + t0 * scale:.3f}" y="{lane_y[k, ENGINES[0]]}" '
                       f'width="{(t1 - t0) * scale:.3f}" height="{len(ENGINES) * (LANE_H + 10) - 10}" fill="grey" '
                       f'fill-opacity="0.3" data-core="{k}" data-t0="{t0}" data-t1="{t1}" data-barrier="{barrier}">'
                       f'<title>core {k} waits at barrier {barrier}: cycles {t0}..{t1}</title></rect>')
    return out


def _group_records(span: range, phase_of: list[int] | None, by_phase: dict[int, list[int]]) -> list[int]:
    """A group's records: the header's range (core 0's), and with several cores (`phase_of`, each
    record's phase) the later records of the same phases (`by_phase`: each phase's records, its
    barriers aside, in order): the other cores'."""
    if phase_of is None:
        return list(span)
    phases = {phase_of[i] for i in span}
    return [*span, *(i for p in phases for i in by_phase[p][bisect.bisect_left(by_phase[p], span.stop):])]


def _group_bands(groups: list[dict], records: list[isa.Record], phase_of: list[int] | None, starts: list[int],
                 ends: list[int], scale: float, bottom: int) -> list[str]:
    """One band per layer group, behind the lanes' rectangles' colours (translucent), spanning its
    records' time on every core: the schedule may start a group's first load before the previous
    group ends."""
    by_phase: dict[int, list[int]] = collections.defaultdict(list)  # built once, not scanned per group
    if phase_of is not None:
        for i, (r, phase) in enumerate(zip(records, phase_of, strict=True)):
            if not isinstance(r, isa.CoreSync):
                by_phase[phase].append(i)
    out = []
    for g in groups:
        span = range(g["first"], g["first"] + g["count"])
        members = _group_records(span, phase_of, by_phase)
        t0, t1 = min(starts[i] for i in members), max(ends[i] for i in members)
        x, w = LEFT + t0 * scale, (t1 - t0) * scale
        label = f'group {g["id"]}: {", ".join(g["ops"])} ({group_slices(g)} slices)'
        shown = label if w > 6 * len(label) else f'group {g["id"]}'  # the whole label where it has room
        out.append(f'<g class="group" data-group="{g["id"]}" data-ops={quoteattr(" ".join(g["ops"]))} '
                   f'data-nsecs="{g["nsecs"]}" data-hsecs="{g["hsecs"]}" data-t0="{t0}" data-t1="{t1}">'
                   f'<title>{escape(label)}, instructions {span.start}..{span.stop - 1}, cycles {t0}..{t1}</title>'
                   f'<rect x="{x:.3f}" y="{TOP - 14}" width="{w:.3f}" height="{bottom - TOP + 18}" fill="grey" '
                   f'fill-opacity="0.12" stroke="black" stroke-width="0.8"/>'
                   f'<text x="{x + 2:.3f}" y="{TOP - 3}" font-size="10">{escape(shown)}</text></g>')
    return out


def _occupancy(live, names, colour, y0: int, panel: int, scale: float, yscale: float,
               core: int | None) -> list[str]:
    """The local-memory panel (of `core`, None: the only one): offset 0 at the top, one box per live
    range, labelled when it has room."""
    whose, which = ("", "") if core is None else (f"core {core}: ", f' data-core="{core}"')
    out = [f'<text x="4" y="{y0 - 6}">{whose}local memory per lane, bytes 0..{panel} (live from the writing '
           f'instruction to its last reader)</text>',
           f'<rect x="{LEFT}" y="{y0}" width="{WIDTH}" height="{OCC_H}" fill="none" stroke="grey"/>',
           f'<g class="occupancy" data-bytes="{panel}"{which}>']
    for a in live:
        op = names[a.record]
        x, y, w, hgt = LEFT + a.t0 * scale, y0 + a.start * yscale, (a.t1 - a.t0) * scale, (a.end - a.start) * yscale
        out.append(f'<rect x="{x:.3f}" y="{y:.3f}" width="{w:.3f}" height="{hgt:.3f}" fill="{colour[op]}" '
                   f'fill-opacity="0.6" stroke="white" stroke-width="0.3" data-op={quoteattr(op)} '
                   f'data-record="{a.record}" data-t0="{a.t0}" data-t1="{a.t1}" data-addr0="{a.start}" '
                   f'data-addr1="{a.end}"><title>{escape(op)}: local bytes {a.start}..{a.end} live in cycles '
                   f'{a.t0}..{a.t1} (written by instruction {a.record})</title></rect>')
        if w > 7 * len(op) and hgt > 12:
            out.append(f'<text x="{x + 2:.3f}" y="{y + 11:.3f}" font-size="10">{escape(op)}</text>')
    out.append("</g>")
    return out

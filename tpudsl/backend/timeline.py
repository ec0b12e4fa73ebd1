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
"""

from __future__ import annotations

import colorsys

from xml.sax.saxutils import escape, quoteattr

from tpudsl.backend import isa
from tpudsl.backend.bmodel import Bmodel, group_slices
from tpudsl.backend.chips import chip_named
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


def _checked_records(model: Bmodel) -> list[isa.Record]:
    h = model.header
    if "core_num" in h:  # a GDMA and a BDC lane per core and their barriers: not drawn yet
        raise TpudslError(f"bmodel: a timeline of {h['core_num']} cores is not modelled (one core's stream is drawn)")
    records = isa.decode(model.commands)
    counts = {e: sum(r.ENGINE == e for r in records) for e in ENGINES}
    if (counts["gdma"], counts["bdc"]) != (h["gdma_count"], h["bdc_count"]):
        raise TpudslError(f"bmodel: the command stream holds {counts['gdma']} GDMA and {counts['bdc']} BDC "
                          f"instructions, the header says {h['gdma_count']} and {h['bdc_count']}")
    for i, r in enumerate(records):  # the cost model and the footprints need the element size
        for key in ("dtype", "out_dtype"):
            if getattr(r, key, 0) not in isa.DTYPE_NAMES:
                raise TpudslError(f"bmodel: instruction {i} ({type(r).__name__}) has unknown {key} code "
                                  f"{getattr(r, key)}")
    return records


def _check_local(s: Schedule, names: list[str], lmem_bytes: int) -> None:
    """A record touching local bytes past the chip's local memory is an error (the cmodel faults there too)."""
    for i, fp in enumerate(s.footprints):
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
    disagrees with the header's instruction counts or touches local memory the chip does not have."""
    from tpudsl.backend.cmodel.engine import op_names

    h, chip = model.header, chip_named(model.header["chip"])
    records = _checked_records(model)
    names = op_names(model.debug, len(records))
    sched = schedule(records, chip)
    _check_local(sched, names, chip.lmem_bytes)
    live = live_ranges(sched)
    total, serial = max(sched.makespan, 1), sched.serial
    scale = WIDTH / total
    ops = list(dict.fromkeys(names))
    colour = {op: _colour(k) for k, op in enumerate(ops)}
    lane_y = {e: TOP + k * (LANE_H + 10) for k, e in enumerate(ENGINES)}
    occ_y = lane_y[ENGINES[-1]] + LANE_H + 30
    panel = _panel_bytes(max((a.end for a in live), default=1), chip.lmem_bytes)
    yscale = OCC_H / panel
    axis_y = occ_y + OCC_H + 10
    legend_y = axis_y + 50
    height = legend_y + 20 * len(ops) + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{LEFT + WIDTH + 20}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<text x="{LEFT}" y="20">{escape(h["network"])} on {escape(chip.name)} ({escape(h["mode"])}): '
           f'{sched.makespan} cycles, {sched.makespan / chip.clock_mhz:.3f} us at {chip.clock_mhz} MHz with GDMA and '
           f'BDC overlapped ({serial} cycles one after another)</text>']
    out += [f'<text x="4" y="{y + LANE_H * 0.65:.0f}">{e.upper()}</text>' for e, y in lane_y.items()]
    out += _group_bands(h.get("layer_groups", []), sched, scale, lane_y[ENGINES[-1]] + LANE_H)
    for op in ops:
        out.append(f'<g class="op" data-op={quoteattr(op)} fill="{colour[op]}" stroke="white" stroke-width="0.5">'
                   f'<title>{escape(op)}</title>')
        for i, (r, name) in enumerate(zip(records, names, strict=True)):
            if name == op:
                start, c = sched.starts[i], sched.ends[i] - sched.starts[i]
                out.append(f'<rect x="{LEFT + start * scale:.3f}" y="{lane_y[r.ENGINE]}" width="{c * scale:.3f}" '
                           f'height="{LANE_H}" data-index="{i}" data-start="{start}" data-cycles="{c}" '
                           f'data-engine="{r.ENGINE}"><title>{escape(op)}: instruction {i} {type(r).__name__}, '
                           f'cycles {start}..{sched.ends[i]}</title></rect>')
        out.append("</g>")
    out += _occupancy(live, names, colour, occ_y, panel, scale, yscale)
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


def _group_bands(groups: list[dict], sched: Schedule, scale: float, bottom: int) -> list[str]:
    """One band per layer group, behind the lanes' rectangles' colours (translucent), spanning its
    records' time: the schedule may start a group's first load before the previous group ends."""
    out = []
    for g in groups:
        span = range(g["first"], g["first"] + g["count"])
        t0, t1 = min(sched.starts[i] for i in span), max(sched.ends[i] for i in span)
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


def _occupancy(live, names, colour, y0: int, panel: int, scale: float, yscale: float) -> list[str]:
    """The local-memory panel: offset 0 at the top, one box per live range, labelled when it has room."""
    out = [f'<text x="4" y="{y0 - 6}">local memory per lane, bytes 0..{panel} (live from the writing instruction '
           f'to its last reader)</text>',
           f'<rect x="{LEFT}" y="{y0}" width="{WIDTH}" height="{OCC_H}" fill="none" stroke="grey"/>',
           f'<g class="occupancy" data-bytes="{panel}">']
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

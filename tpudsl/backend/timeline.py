"""`model_tool --timeline X.bmodel -o X.svg`: a bmodel's command stream as an SVG timeline.

One lane for GDMA and one for BDC; each instruction is a rectangle starting where the one before it
ended (the cost model is serial: codegen does not overlap the engines, so neither does the picture)
and as wide as the cost model's cycles (cost.py). Rectangles are coloured per op (debug info's loc
name; instructions before any debug entry, or of a bmodel without debug info, are "no debug info"),
each op is one <g> holding its rectangles, with the op and instruction in <title> tooltips. The axis
is in cycles and in us at the chip's clock (chips.py). Local-memory occupancy is not drawn: the
header does not carry it, and the records' local addresses say what one instruction touches, not
what stays live across instructions (docs/backend.md).
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from tpudsl.backend import isa
from tpudsl.backend.bmodel import Bmodel
from tpudsl.backend.chips import chip_named
from tpudsl.backend.cost import cycles
from tpudsl.ir.diagnostics import TpudslError

ENGINES = ("gdma", "bdc")
WIDTH = 1000  # pixels of the time axis
LEFT, LANE_H, TOP = 60, 30, 40
TICKS = 5


def _colour(i: int) -> str:
    """A distinct hue per op, by the op's order (golden-angle steps, so neighbours differ)."""
    return f"hsl({i * 137.508 % 360:.1f},65%,55%)"


def _anchor(tick: int) -> str:
    """The end ticks' labels stay inside the picture."""
    return "start" if tick == 0 else "end" if tick == TICKS else "middle"


def render(model: Bmodel) -> str:
    """The SVG text of `model`'s timeline; TpudslError when the command stream does not decode or
    disagrees with the header's instruction counts."""
    from tpudsl.backend.cmodel.engine import op_names

    h, chip = model.header, chip_named(model.header["chip"])
    records = isa.decode(model.commands)
    counts = {e: sum(r.ENGINE == e for r in records) for e in ENGINES}
    if (counts["gdma"], counts["bdc"]) != (h["gdma_count"], h["bdc_count"]):
        raise TpudslError(f"bmodel: the command stream holds {counts['gdma']} GDMA and {counts['bdc']} BDC "
                          f"instructions, the header says {h['gdma_count']} and {h['bdc_count']}")
    names = op_names(model.debug, len(records))
    spans, t = [], 0
    for r in records:
        c = cycles(r, chip)
        spans.append((t, c))
        t += c
    total = max(t, 1)
    scale = WIDTH / total
    ops = list(dict.fromkeys(names))
    lane_y = {e: TOP + k * (LANE_H + 10) for k, e in enumerate(ENGINES)}
    axis_y = lane_y[ENGINES[-1]] + LANE_H + 10
    legend_y = axis_y + 40
    height = legend_y + 20 * len(ops) + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{LEFT + WIDTH + 20}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<text x="{LEFT}" y="20">{escape(h["network"])} on {escape(chip.name)} ({escape(h["mode"])}): '
           f'{t} cycles, {t / chip.clock_mhz:.3f} us at {chip.clock_mhz} MHz (serial cost model: engines never '
           f'overlap)</text>']
    out += [f'<text x="4" y="{y + LANE_H * 0.65:.0f}">{e.upper()}</text>' for e, y in lane_y.items()]
    for k, op in enumerate(ops):
        out.append(f'<g class="op" data-op={quoteattr(op)} fill="{_colour(k)}"><title>{escape(op)}</title>')
        for i, (r, name, (start, c)) in enumerate(zip(records, names, spans, strict=True)):
            if name == op:
                out.append(f'<rect x="{LEFT + start * scale:.3f}" y="{lane_y[r.ENGINE]}" width="{c * scale:.3f}" '
                           f'height="{LANE_H}" data-start="{start}" data-cycles="{c}" data-engine="{r.ENGINE}">'
                           f'<title>{escape(op)}: instruction {i} {type(r).__name__}, {c} cycles</title></rect>')
        out.append("</g>")
    out.append(f'<line x1="{LEFT}" y1="{axis_y}" x2="{LEFT + WIDTH}" y2="{axis_y}" stroke="black"/>')
    for k in range(TICKS + 1):
        cyc = total * k // TICKS
        x = LEFT + cyc * scale
        out.append(f'<line x1="{x:.3f}" y1="{axis_y}" x2="{x:.3f}" y2="{axis_y + 5}" stroke="black"/>'
                   f'<text x="{x:.3f}" y="{axis_y + 18}" text-anchor="{_anchor(k)}">{cyc} cyc / '
                   f'{cyc / chip.clock_mhz:.3f} us</text>')
    for k, op in enumerate(ops):
        y = legend_y + 20 * k
        out.append(f'<g class="legend"><rect x="{LEFT}" y="{y}" width="12" height="12" fill="{_colour(k)}"/>'
                   f'<text x="{LEFT + 18}" y="{y + 11}">{escape(op)}</text></g>')
    out.append(f'<text x="{LEFT}" y="{height - 12}">Local-memory occupancy: not drawn (the bmodel does not '
               f'record it).</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"

"""model_tool: what a .bmodel holds, as TPU-MLIR's `model_tool --info`.

  model_tool --info X.bmodel
  model_tool --timeline X.bmodel -o X.svg

Prints the network, chip and mode, each input and output (name, shape, dtype, scale, zero
point, global address), the coefficient and activation memory, the instruction counts and,
when the header carries it, the cost model's estimate. A damaged file is one error line and
exit status 1 (the reader checks every section: docs/bmodel.md). `--info` writes nothing;
`--timeline` writes the command stream as an SVG timeline (tpudsl/backend/timeline.py), atomically.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn

from tpudsl.cli.errors import CliArgumentParser, run_cli


def _tensor_line(kind: str, t: dict) -> str:
    shape = ", ".join(str(d) for d in t["shape"])
    return (f"{kind}: {t['name']}, [{shape}], {t['dtype']}, scale: {t['scale']:g}, "
            f"zero point: {t['zero_point']}, address: {t['address']:#x}")


def info_lines(header: dict, coeffs: bytes, commands: bytes, debug: list) -> list[str]:
    """The lines `model_tool --info` prints for a bmodel's parts."""
    from tpudsl.backend.bmodel import group_slices
    from tpudsl.backend.chips import chip_named

    h = header
    lines = [f"network: {h['network']}", f"chip: {h['chip']}", f"mode: {h['mode']}"]
    lines += [_tensor_line("input", t) for t in h["inputs"]]
    lines += [_tensor_line("output", t) for t in h["outputs"]]
    lines += [
        f"coeff memory: {h['coeff_mem_bytes']} bytes (blob {len(coeffs)} bytes)",
        f"activation memory: {h['activation_mem_bytes']} bytes",
        f"instructions: {h['gdma_count']} GDMA, {h['bdc_count']} BDC (command stream {len(commands)} bytes)",
        f"debug info: {len(debug)} entries" if debug else "debug info: none",
    ]
    if "estimated_cycles" in h:
        cycles, mhz = h["estimated_cycles"], chip_named(h["chip"]).clock_mhz
        lines.append(f"cost model estimate: {cycles} cycles ({cycles / mhz:.3f} us at {mhz} MHz)")
    if "overlapped_cycles" in h:
        cycles, mhz = h["overlapped_cycles"], chip_named(h["chip"]).clock_mhz
        lines.append(f"with GDMA and BDC overlapped: {cycles} cycles ({cycles / mhz:.3f} us at {mhz} MHz)")
    lines += [f"layer group {g['id']}: {', '.join(g['ops'])} ({group_slices(g)} slices), instructions "
              f"{g['first']}..{g['first'] + g['count'] - 1}" for g in h.get("layer_groups", [])]
    return lines


def _main(argv: Sequence[str]) -> int:
    parser = CliArgumentParser(prog="model_tool", description="Show what a .bmodel holds, or draw its command stream.")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--info", metavar="X.bmodel", help="print the bmodel's header")
    what.add_argument("--timeline", metavar="X.bmodel", help="draw the command stream as an SVG timeline (needs -o)")
    parser.add_argument("-o", metavar="X.svg", help="where --timeline writes its SVG")
    args = parser.parse_args(argv)
    if (args.timeline is None) != (args.o is None):
        parser.error("-o goes with --timeline (and --timeline needs -o)")
    from tpudsl.backend.bmodel import read_bmodel

    if args.info is not None:
        model = read_bmodel(args.info)
        print("\n".join(info_lines(model.header, model.coeffs, model.commands, model.debug)))
        return 0
    from tpudsl.backend.timeline import render
    from tpudsl.ir.diagnostics import TpudslError
    from tpudsl.ir.module import write_atomically

    try:
        svg = render(read_bmodel(args.timeline)).encode()
    except TpudslError as e:
        raise TpudslError(e.message, file=e.file or args.timeline) from None
    write_atomically(args.o, lambda f: f.write(svg))
    return 0


def main(argv: Sequence[str] | None = None) -> NoReturn:
    run_cli(_main, argv)

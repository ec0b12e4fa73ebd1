"""model_tool: what a .bmodel holds, and combining and splitting them, as TPU-MLIR's model_tool.

  model_tool --info X.bmodel
  model_tool --combine A.bmodel B.bmodel ... [-o C.bmodel]
  model_tool --extract C.bmodel
  model_tool --chip X.bmodel | --is_dynamic X.bmodel
  model_tool --timeline X.bmodel -o X.svg

--info prints, per network and stage, the network, chip and mode, each input and output (name,
shape, dtype, scale, zero point, global address), the coefficient and activation memory, the
instruction counts and, when the header carries it, the cost model's estimate. --combine puts
bmodels of one network for other input shapes in as its stages and other networks beside it
(tpudsl/backend/bmodel_combined.py; the rules in docs/tools.md); --extract writes each stage back
as its own file. A damaged file or a clash is one error line and exit status 1, nothing written
(the reader checks every section: docs/bmodel.md). `--timeline` writes the command stream as an
SVG timeline (tpudsl/backend/timeline.py), atomically.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn

from tpudsl.cli.errors import CliArgumentParser, refuse_overwriting, run_cli
from tpudsl.ir.diagnostics import TpudslError


def _tensor_line(kind: str, t: dict) -> str:
    shape = ", ".join(str(d) for d in t["shape"])
    return (f"{kind}: {t['name']}, [{shape}], {t['dtype']}, scale: {t['scale']:g}, "
            f"zero point: {t['zero_point']}, address: {t['address']:#x}")


def _io_lines(h: dict) -> list[str]:
    """The address mode and its IO memory: io_alone's region, or each memory tag with its tensors."""
    if "io_addr" in h:
        return [f"address mode: io_alone, IO memory: {h['io_size']} bytes at {h['io_addr']:#x}"]
    if "io_tags" not in h:
        return []
    from tpudsl.backend.bmodel import tensors_in_tag
    from tpudsl.backend.chips import tag_base

    return [f"address mode: {h['addr_mode']}, IO memory: {len(h['io_tags'])} tags",
            *(f"tag {r['tag']}: {r['size']} bytes at {tag_base(r['tag']):#x} ({tensors_in_tag(h, r['tag'])})"
              for r in h["io_tags"])]


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
        *_io_lines(h),
        f"instructions: {h['gdma_count']} GDMA, {h['bdc_count']} BDC (command stream {len(commands)} bytes)",
        f"debug info: {len(debug)} entries" if debug else "debug info: none",
    ]
    if "estimated_cycles" in h:
        cycles, mhz = h["estimated_cycles"], chip_named(h["chip"]).clock_mhz
        lines.append(f"cost model estimate: {cycles} cycles ({cycles / mhz:.3f} us at {mhz} MHz)")
    if "overlapped_cycles" in h:
        cycles, mhz = h["overlapped_cycles"], chip_named(h["chip"]).clock_mhz
        lines.append(f"with GDMA and BDC overlapped: {cycles} cycles ({cycles / mhz:.3f} us at {mhz} MHz)")
    if "core_num" in h:  # several cores: the phases' slowest core is the overlapped total above
        lines.append(f"cores: {h['core_num']}, instructions per core: {', '.join(map(str, h['core_instructions']))}, "
                     f"busy cycles per core: {', '.join(map(str, h['core_cycles']))}")
    lines += [f"layer group {g['id']}: {', '.join(g['ops'])} ({group_slices(g)} slices), instructions "
              f"{g['first']}..{g['first'] + g['count'] - 1}" for g in h.get("layer_groups", [])]
    return lines


# TPU-MLIR's model_tool options tpudsl does not have (tools/model_tool/model_tool.cpp), and why.
REFUSED = {
    "--print": "it prints TPU-MLIR's flatbuffer as JSON; tpudsl's .bmodel is its own format (--info prints its header)",
    "--weight": "it lists each weight's range in the coefficient blob, which tpudsl's header does not record",
    "--dump": "it copies a byte range of the flatbuffer's binary; tpudsl's sections are whole (--extract gives a stage)",
    "--kernel_dump": "tpudsl's bmodels carry no kernel module (the cmodel runs the records)",
    "--kernel_update": "tpudsl's bmodels carry no kernel module (the cmodel runs the records)",
    "--combine_dir": "it combines TPU-MLIR's compilation directories (compilation.bmodel, input_ref_data.dat, "
                     "output_ref_data.dat), which tpudsl does not write; combine the .bmodel files with --combine",
    "--version": "tpudsl's tools print no version",
}
ACTIONS = ("--info", "--timeline", "--combine", "--extract", "--chip", "--is_dynamic")


def build_parser() -> CliArgumentParser:
    parser = CliArgumentParser(prog="model_tool", description="Show, combine or split .bmodel files, or draw one's "
                                                              "command stream.")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--info", metavar="X.bmodel", help="print every network and stage of the bmodel")
    what.add_argument("--timeline", metavar="X.bmodel", help="draw the command stream as an SVG timeline (needs -o)")
    what.add_argument("--combine", metavar="X.bmodel", nargs="+",
                      help="combine bmodels into one (-o, default bm_combined.bmodel): one network's bmodels for "
                           "other input shapes become its stages, other networks are added")
    what.add_argument("--extract", metavar="X.bmodel",
                      help="write each stage of each network as bm_net<I>_stage<J>.bmodel in the current directory")
    what.add_argument("--chip", metavar="X.bmodel", help="print the bmodel's chip")
    what.add_argument("--is_dynamic", metavar="X.bmodel", help="print false: tpudsl compiles static shapes")
    parser.add_argument("-o", metavar="FILE", help="where --timeline writes its SVG and --combine its bmodel")
    parser.add_argument("--all", action="store_true",
                        help="TPU-MLIR's --info --all (its hidden cascade networks): tpudsl's --info shows every network")
    return parser


def _main(argv: Sequence[str]) -> int:
    refused = next((a for a in argv if a in REFUSED), None)  # anywhere: `-o x --print y` too
    if refused is not None:
        raise TpudslError(f"model_tool: {refused} is not supported: {REFUSED[refused]} (supported: {', '.join(ACTIONS)})")
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.o is not None and args.timeline is None and args.combine is None:
        parser.error("-o goes with --timeline and --combine")
    if args.timeline is not None and args.o is None:
        parser.error("--timeline needs -o")
    if args.o == "":
        parser.error("-o needs a file name")
    if args.all and args.info is None:
        parser.error("--all goes with --info")
    from tpudsl.backend.bmodel_combined import read_networks

    if args.combine is not None:
        return _combine(args.combine, args.o or "bm_combined.bmodel")
    if args.timeline is not None:
        return _timeline(args.timeline, args.o)
    networks = read_networks(args.info or args.extract or args.chip or args.is_dynamic)
    if args.extract is not None:
        return _extract(networks)
    if args.info is not None:
        print("\n".join(networks_info_lines(networks)))
    else:  # one chip per file (bmodel_combined.merge)
        print(networks[0].stages[0].header["chip"] if args.chip else "false")
    return 0


def networks_info_lines(networks: list) -> list[str]:
    """--info: a single stage as info_lines; several as TPU-MLIR's model_tool lists them, a block
    per network and per stage."""
    if len(networks) == 1 and len(networks[0].stages) == 1:
        s = networks[0].stages[0]
        return info_lines(s.header, s.coeffs, s.commands, s.debug)
    lines = []
    for i, network in enumerate(networks):
        count = len(network.stages)
        lines += ["==========================================",
                  f"net {i}: [{network.name}], {count} stage{'s' if count > 1 else ''}"]
        for j, s in enumerate(network.stages):
            lines += ["------------", f"stage {j}:", *info_lines(s.header, s.coeffs, s.commands, s.debug)]
    return lines


def _combine(paths: list[str], out: str) -> int:
    """TPU-MLIR's --combine: every file is read and checked, then the result written at once."""
    from tpudsl.backend.bmodel_combined import merge, read_networks, write_networks

    refuse_overwriting("-o", out, {f"the input {path}": path for path in paths})
    parts = []
    for path in paths:
        networks = read_networks(path)
        whole = len(networks) == 1 and len(networks[0].stages) == 1
        parts += [(path if whole else f"{path} (network '{n.name}' stage {j})", s)
                  for n in networks for j, s in enumerate(n.stages)]
    combined = merge(parts)
    write_networks(out, combined)
    print(f"combined to {out}: " + ", ".join(f"network {n.name} ({len(n.stages)} stage{'s' if len(n.stages) > 1 else ''})"
                                             for n in combined))
    return 0


def _extract(networks: list) -> int:
    """TPU-MLIR's --extract: bm_net<I>_stage<J>.bmodel, each one stage as a version-1 file (all
    written, or none)."""
    from tpudsl.backend.bmodel import encode_bmodel
    from tpudsl.ir.module import write_files_atomically

    files = [(f"bm_net{i}_stage{j}.bmodel", encode_bmodel(s.header, s.coeffs, s.commands, s.debug), n.name)
             for i, n in enumerate(networks) for j, s in enumerate(n.stages)]
    write_files_atomically([(name, lambda f, data=data: f.write(data)) for name, data, _ in files])
    for name, _, network in files:
        print(f"{name}: network {network}")
    return 0


def _timeline(path: str, out: str) -> int:
    from tpudsl.backend.bmodel import read_bmodel
    from tpudsl.backend.timeline import render
    from tpudsl.ir.module import write_atomically

    refuse_overwriting("-o", out, {f"the input {path}": path})
    try:
        svg = render(read_bmodel(path)).encode()
    except TpudslError as e:
        raise TpudslError(e.message, file=e.file or path) from None
    write_atomically(out, lambda f: f.write(svg))
    return 0


def main(argv: Sequence[str] | None = None) -> NoReturn:
    run_cli(_main, argv)

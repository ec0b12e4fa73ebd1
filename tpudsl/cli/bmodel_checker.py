"""bmodel_checker: which op of a .bmodel first disagrees with the Tpu interpreter (TPU-MLIR's tool).

  bmodel_checker DIR_OR_BMODEL reference.npz [--tolerance 0.99,0.99] [--fail_fast] [--excepts a,b]
                 [--report failed_bmodel_outputs.npz] [--dump_mode failed|all|never]

The reference is the Tpu interpreter's dump (`model_runner --model X_tpu.mlir --dump_all_tensors`);
the bmodel runs on the cmodel from the reference's inputs, every tensor its ops produce read during
the run (cmodel/capture.py: from global memory after its store, from local memory inside a layer
group). One line per tensor in the order the ops complete: its name, op, PASSED/FAILED by
model_deploy's bmodel-vs-Tpu rule (compare.bmodel_mismatch: INT8, F16, BF16 bit-exact, F32 1e-5
relative) and npz_tool compare's verdict and measures at --tolerance (how far off a failure is; the
tolerance never passes a tensor the rule fails). Then a summary naming the first failure; exit
status 1 when any tensor failed. docs/tools.md, "bmodel_checker".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from tpudsl.cli.errors import CliArgumentParser, refuse_overwriting, run_cli
from tpudsl.cli.tpu_mlir_flags import Checked, add_checked_flags, check_flags
from tpudsl.ir.diagnostics import TpudslError

# TPU-MLIR's flags tpudsl does not model (docs/tools.md).
CHECKED = (
    Checked("--ref", (False,), "the cmodel runs the bmodel from its inputs only (no op fed the reference's operands)"),
    Checked("--dump_dataframe", (False,), "the report is its lines and the --report .npz (no pandas dataframe)"),
    Checked("--cache_mode", ("online",), "the cmodel runs every time (no SoC result caches)"),
    Checked("--run_by_atomic", (False,), "it is for PCIE and SoC devices; the cmodel reads tensors after each instruction"),
    Checked("--ddr_size", ("4294967296",), "the cmodel's global memory is the size the bmodel's header says"),
)
DUMP_MODES = ("failed", "all", "never")  # TPU-MLIR's comb and tpulang write its own formats


def bmodel_path(context: str) -> Path:
    """The .bmodel itself, or the one .bmodel in a directory (TPU-MLIR's context directory)."""
    path = Path(context)
    if not path.is_dir():
        return path
    found = sorted(path.glob("*.bmodel"))
    if len(found) != 1:
        held = ", ".join(p.name for p in found) or "none"
        raise TpudslError(f"a directory must hold one .bmodel to check; it holds {held}", file=context)
    return found[0]


def build_parser() -> CliArgumentParser:
    parser = CliArgumentParser(prog="bmodel_checker",
                               description="Check every tensor of a .bmodel's run against the Tpu interpreter's dump.")
    parser.add_argument("context_dir", help="the .bmodel, or a directory holding one")
    parser.add_argument("reference_data", help="the Tpu interpreter's tensors (model_runner --dump_all_tensors)")
    parser.add_argument("--tolerance", default="0.99,0.99",
                        help="cos,euclid of npz_tool compare's verdict shown per tensor (default 0.99,0.99)")
    parser.add_argument("--fail_fast", action="store_true", help="stop at the first tensor that fails")
    parser.add_argument("--excepts", default="", help="tensor names not to compare, comma-separated")
    parser.add_argument("--report", default="failed_bmodel_outputs.npz",
                        help="npz of the bmodel's tensors that --dump_mode names (default failed_bmodel_outputs.npz)")
    parser.add_argument("--dump_mode", default="failed", help="which tensors --report holds: failed, all or never")
    parser.add_argument("--no_interactive", action="store_true", help="accepted: bmodel_checker never prompts")
    add_checked_flags(parser, CHECKED)
    return parser


def _line(name: str, op: str, problem: str | None, result) -> str:
    """A tensor's row: name, op, the rule's PASSED/FAILED, then npz_tool compare's verdict and
    measures (a compare.Result), then what the rule found."""
    cells = [f"{name:<32} {op:<18} {'FAILED' if problem else 'PASSED'}", result.verdict]
    if not math.isnan(result.cosine):
        cells.append(f"cos {result.cosine:.6f} euclid {result.euclid:.6f}")
    if not math.isnan(result.max_abs_error):
        cells.append(f"max_abs_err {result.max_abs_error:.4g}")
    return "  ".join(cells + ([problem] if problem else []))


def _networks(model: Path) -> list:
    """The one network of the .bmodel, read once (a combined file of several is refused: which one
    the reference belongs to is not the checker's guess)."""
    from tpudsl.backend.bmodel_combined import read_networks

    networks = read_networks(model)
    if len(networks) > 1:
        raise TpudslError(f"holds {len(networks)} networks ({', '.join(n.name for n in networks)}); bmodel_checker "
                          "checks a bmodel of one (model_tool --extract gives each stage's file)", file=str(model))
    return networks


def _inputs(header: dict, reference, model: Path, path: str) -> dict:
    """The bmodel's inputs from the reference (every stage of a network has the same input names)."""
    missing = [t["name"] for t in header["inputs"] if t["name"] not in reference]
    if missing:
        raise TpudslError(f"holds no tensor '{missing[0]}', an input of {model.name} (the Tpu interpreter's "
                          f"--dump_all_tensors keeps the inputs)", file=path)
    return {t["name"]: reference[t["name"]] for t in header["inputs"]}


def _check_reference(header: dict, reference, model: Path, path: str) -> dict[str, str]:
    """The bmodel's tensors (name -> op), once the reference is known to hold some of them."""
    ops = {t["name"]: t["op"] for t in header.get("tensor_locations", [])}
    if ops and not any(name in reference for name in ops):
        raise TpudslError(f"holds none of the {len(ops)} tensors of {model.name} (e.g. '{next(iter(ops))}'): "
                          f"not the Tpu module's dump", file=path)
    return ops


def _compare(tensors, reference, ops: dict[str, str], mode: str, args, tolerance) -> tuple[list, int, list, dict]:
    """Print one line per tensor in the order the ops complete; (the failed (name, op)s, how many
    were checked, the names not in the reference, the tensors --report gets)."""
    from tpudsl.cli.compare import bmodel_mismatch, compare_arrays
    from tpudsl.cli.model_runner import widened

    excepts = {n for n in args.excepts.split(",") if n}
    failed, checked, absent, dumped = [], 0, [], {}
    for name in [n for n in tensors if n in ops and n not in excepts]:  # the inputs are given, not checked
        if name not in reference:
            absent.append(name)
            continue
        got, want = widened({"t": tensors[name], "r": reference[name]}).values()
        problem = bmodel_mismatch(got, want, mode)
        checked += 1
        print(_line(name, ops[name], problem, compare_arrays(tensors[name], reference[name], tolerance, name)))
        if problem or args.dump_mode == "all":
            dumped[name] = tensors[name]
        if problem:
            failed.append((name, ops[name]))
            if args.fail_fast:
                break
    return failed, checked, absent, dumped


def run(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(argv)
    check_flags("bmodel_checker", args, CHECKED)
    if args.dump_mode not in DUMP_MODES:
        raise TpudslError(f"bmodel_checker: --dump_mode {args.dump_mode} is not supported: TPU-MLIR's comb and "
                          f"tpulang write its own formats (supported: {', '.join(DUMP_MODES)})")
    from tpudsl.cli.compare import tolerance_flag
    from tpudsl.cli.model_runner import bmodel_inference, chosen_stage, save_npz
    from tpudsl.cli.npz_tool import load_npz

    tolerance = tolerance_flag(args.tolerance)
    model = bmodel_path(args.context_dir)
    refuse_overwriting("--report", args.report, {str(given): given for given in (model, args.reference_data)})
    networks = _networks(model)
    reference = load_npz(args.reference_data)
    inputs = _inputs(networks[0].stages[0].header, reference, model, args.reference_data)
    stage = chosen_stage(networks, None, inputs, model)  # of several stages, the one of the inputs' shapes
    ops = _check_reference(stage.header, reference, model, args.reference_data)
    tensors = bmodel_inference(inputs, model, dump_all_tensors=True, stage=stage)
    mode = stage.header["mode"]
    failed, checked, absent, dumped = _compare(tensors, reference, ops, mode, args, tolerance)
    if absent:
        print(f"not in the reference ({len(absent)}): {', '.join(absent)}")
    stopped = ", stopped at the first (--fail_fast)" if failed and args.fail_fast else ""
    print(f"{checked} tensors checked ({mode}: {'1e-5 relative' if mode == 'F32' else 'bit-exact'}): "
          f"{checked - len(failed)} passed, {len(failed)} failed{stopped}")
    if failed:
        print(f"first failure: {failed[0][0]} ({failed[0][1]})")
    if dumped and args.dump_mode != "never":
        save_npz(args.report, dumped)
        print(f"wrote {args.report}")
    print("bmodel_checker FAILED." if failed else "bmodel_checker PASSED.")
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> NoReturn:
    run_cli(run, argv)

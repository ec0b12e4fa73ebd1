"""npz_tool: compare, dump and summarize .npz tensor files (TPU-MLIR's npz_tool.py).

  npz_tool compare TARGET.npz REFERENCE.npz [--tolerance 0.99,0.99] [--excepts a,b] [-v|-vv]
                   [--stats_int8_tensor] [--fuzzy_match]
  npz_tool dump A.npz [NAME]
  npz_tool stats A.npz
  npz_tool get_shape A.npz NAME              # [1,3,224,224]
  npz_tool extract A.npz OUT.npz a,b         # OUT holds a and b
  npz_tool rename A.npz OLD NEW              # in place; NEW comes last, as TPU-MLIR's
  npz_tool to_dat A.npz OUT.bin              # every tensor's bytes, in file order

compare exits with status 1 when any common tensor fails (see tpudsl/cli/compare.py).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from tpudsl.cli.errors import CliArgumentParser, run_cli
from tpudsl.cli.tpu_mlir_flags import Checked, add_checked_flags, check_flags
from tpudsl.ir.diagnostics import TpudslError

if TYPE_CHECKING:  # imported where used: `npz_tool --help` must not wait for numpy
    import numpy as np

# TPU-MLIR's npz_tool subcommands tpudsl does not have (python/tools/npz_tool.py, numpy_helper); `stats` is tpudsl's.
OTHER_SUBCOMMANDS = ("visualize_diff", "to_bin", "to_npy", "int8_to_fp32", "bf16_to_fp32", "fp16_to_fp32", "tranpose",
                     "permute", "reshape", "remove", "merge", "insert", "statistic")
SUBCOMMANDS = ("compare", "dump", "stats", "get_shape", "extract", "rename", "to_dat")
# TPU-MLIR's compare flags tpudsl does not model (python/numpy_helper/npz_compare.py).
COMPARE_CHECKED = (
    Checked("--op_info", (), "reading TPU-MLIR's op info csv is not modelled"),
    Checked("--dequant", (False,), "the files hold float tensors (tpudsl's tools dequantize before writing)"),
    Checked("--full-array", (False,), "printing whole arrays is npz_tool dump FILE NAME"),
    Checked("--int8_tensor_close", ("1",), "int8 pairs are exact or NOT_EQUAL (TPU-MLIR's default 1)"),
    Checked("--save", (), "writing the report as csv is not modelled"),
    Checked("--per_axis_compare", ("-1",), "comparison along one axis is not modelled"),
)

# Rows of a -vv dump: how many of the worst elements to show per failing tensor.
WORST_ELEMENTS = 5


def load_npz(path: str) -> dict[str, np.ndarray]:
    """All arrays of an .npz file, in file order; TpudslError when it is missing or not an npz."""
    from tpudsl.ir.npz import read_npz  # numpy: not needed for --help

    return read_npz(path)


def _split_names(text: str) -> list[str]:
    return [n for n in (s.strip() for s in text.split(",")) if n and n != "-"]


def _worst_elements(target: np.ndarray, reference: np.ndarray) -> list[str]:
    """The largest absolute differences with their indices, for -vv."""
    import numpy as np

    a = np.asarray(target, dtype=np.float64)
    b = np.asarray(reference, dtype=np.float64).reshape(a.shape)
    diff = np.abs(a - b)
    diff[np.isnan(diff)] = np.inf
    order = np.argsort(diff, axis=None)[::-1][:WORST_ELEMENTS]
    return [
        f"    at {[int(j) for j in np.unravel_index(i, a.shape)]}: target {a.flat[i]:.7g} reference {b.flat[i]:.7g}"
        for i in order
    ]


def cmd_compare(args: argparse.Namespace) -> int:
    import numpy as np

    from tpudsl.cli.compare import NUMERIC_KINDS, compare_dicts, format_report, parse_tolerance

    try:
        tolerance = parse_tolerance(args.tolerance)
    except ValueError as e:
        raise TpudslError(str(e)) from None
    target, reference = load_npz(args.target), load_npz(args.reference)
    if args.fuzzy_match:
        return _fuzzy_match(target, reference, tolerance)
    report = compare_dicts(target, reference, tolerance, _split_names(args.excepts))
    if args.verbose >= 2:
        # Before the report, so that the verdict stays the last line.
        for r in report.failed:
            a, b = target[r.name], reference[r.name]
            if a.size == b.size and a.size and a.dtype.kind in NUMERIC_KINDS and b.dtype.kind in NUMERIC_KINDS:
                print(f"worst elements of {r.name}:")
                print("\n".join(_worst_elements(a, b)))
    if args.stats_int8_tensor:
        for r in report.results:
            if target[r.name].dtype == np.int8:
                print(f"int8 statistics of {r.name}:")
                print("\n".join(_int8_stats(target[r.name])))
    print(f"tolerance: cos > {tolerance[0]}, euclid > {tolerance[1]}")
    for line in format_report(report, args.verbose, files=(args.target, args.reference)):
        print(line)
    return 0 if report.passed else 1


def _fuzzy_match(target: dict[str, np.ndarray], reference: dict[str, np.ndarray], tolerance: tuple[float, float]) -> int:
    """TPU-MLIR's --fuzzy_match, for files whose names differ (another framework's): each target tensor
    is matched with the reference tensor of its shape that has the highest cosine (an equal one ends
    the search, as cosine and euclid 1); passes when the worst match reaches both tolerances. A target
    tensor with no numeric reference of its shape matches nothing (0, 0), as in TPU-MLIR."""
    import numpy as np

    from tpudsl.cli.compare import NUMERIC_KINDS, measures

    worst_cos, worst_euclid = 1.0, 1.0
    for name, a in target.items():
        best: tuple[float, float, str] | None = None
        for ref_name, b in reference.items():
            if b.shape != a.shape or a.dtype.kind not in NUMERIC_KINDS or b.dtype.kind not in NUMERIC_KINDS:
                continue
            if np.array_equal(a, b):
                best = (1.0, 1.0, ref_name)
                break
            m = measures(a, b)
            if best is None or m.cosine > best[0]:  # a NaN cosine (NaN or inf in the data) never wins
                best = (m.cosine, m.euclid, ref_name)
        cos, euclid, match = best or (0.0, 0.0, "")
        print(f"find max_cos:{cos:.6f}, max_euc:{euclid:.6f} for {name}" + (f" (reference {match})" if match else
                                                                        f" (no reference of shape {list(a.shape)})"))
        worst_cos, worst_euclid = min(worst_cos, cos), min(worst_euclid, euclid)
    passed = bool(target) and worst_cos >= tolerance[0] and worst_euclid >= tolerance[1]
    print(f"min_similiarity = ({worst_cos:.6f}, {worst_euclid:.6f})")
    print("npz compare PASSED." if passed else "npz compare FAILED.")
    return 0 if passed else 1


def _int8_stats(a: np.ndarray) -> list[str]:
    """TPU-MLIR's saturation statistics of an int8 tensor: how many values sit at 127, -128, 0, |x| <= 8."""
    counts = (("pos(x=127)   ", a == 127), ("neg(x=-128)  ", a == -128), ("zeros(x=0)   ", a == 0),
              ("low(abs(x)<8)", abs(a.astype("int16")) <= 8))
    return [f"    {what} = {int(m.sum()) / a.size:.4f}  [{int(m.sum())}/{a.size}]" for what, m in counts]


def _describe(name: str, a: np.ndarray) -> str:
    return f"{name}: shape {list(a.shape)} dtype {a.dtype}"


def cmd_dump(args: argparse.Namespace) -> int:
    import numpy as np

    tensors = load_npz(args.file)
    if args.name is not None:
        if args.name not in tensors:
            raise TpudslError(
                f"no tensor '{args.name}'; it holds: " + ", ".join(tensors), file=args.file
            )
        print(_describe(args.name, tensors[args.name]))
        with np.printoptions(threshold=sys.maxsize):
            print(tensors[args.name])
        return 0
    for name, a in tensors.items():
        print(_describe(name, a))
        print(a)
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    import numpy as np

    tensors = load_npz(args.file)
    print(f"{'name':<40} {'shape':<20} {'dtype':<8} {'min':>12} {'max':>12} {'mean':>12} {'std':>12} nan inf")
    for name, a in tensors.items():
        shape = "x".join(map(str, a.shape)) or "scalar"
        if a.dtype.kind in "biuf" and a.size:
            v = a.astype(np.float64)
            finite = v[np.isfinite(v)]
            numbers = [finite.min(), finite.max(), finite.mean(), finite.std()] if finite.size else [np.nan] * 4
            cells = " ".join(f"{x:>12.6g}" for x in numbers)
            counts = f"{int(np.isnan(v).sum())} {int(np.isinf(v).sum())}"
        else:
            cells, counts = " ".join(f"{'-':>12}" for _ in range(4)), "- -"
        print(f"{name:<40} {shape:<20} {str(a.dtype):<8} {cells} {counts}")
    return 0


def _tensor(tensors: dict[str, np.ndarray], path: str, name: str) -> np.ndarray:
    if name not in tensors:
        raise TpudslError(f"'{path}' has no tensor '{name}' (it holds: {', '.join(tensors) or 'nothing'})")
    return tensors[name]


def _write_npz(path: str, tensors: dict[str, np.ndarray]) -> None:
    import numpy as np

    from tpudsl.ir.module import write_atomically  # only the writing subcommands pay for its imports

    write_atomically(path, lambda f: np.savez(f, **tensors))


def cmd_get_shape(args: argparse.Namespace) -> int:
    print("[" + ",".join(str(d) for d in _tensor(load_npz(args.file), args.file, args.name).shape) + "]")
    return 0


def cmd_extract(args: argparse.Namespace) -> int:
    tensors = load_npz(args.file)
    names = _split_names(args.names)
    if not names:
        raise TpudslError("extract: no tensor names given")
    picked = {name: _tensor(tensors, args.file, name) for name in names}
    for name in names:
        print("extract", name)
    _write_npz(args.output, picked)
    return 0


def cmd_rename(args: argparse.Namespace) -> int:
    tensors = load_npz(args.file)
    moved = _tensor(tensors, args.file, args.old)
    if args.new in tensors and args.new != args.old:
        raise TpudslError(f"'{args.file}' already holds a tensor '{args.new}'; rename would replace it")
    del tensors[args.old]
    tensors[args.new] = moved
    _write_npz(args.file, tensors)
    return 0


def cmd_to_dat(args: argparse.Namespace) -> int:
    from tpudsl.ir.module import write_atomically

    tensors = load_npz(args.file)

    def write(f) -> None:
        for t in tensors.values():
            f.write(t.tobytes())  # C order, as numpy's tobytes()

    write_atomically(args.output, write)
    return 0


def build_parser() -> CliArgumentParser:
    parser = CliArgumentParser(prog="npz_tool", description="Compare, dump, summarize and edit .npz tensor files.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{" + ",".join(SUBCOMMANDS) + "}")

    compare = sub.add_parser("compare", help="compare two npz files tensor by tensor")
    compare.add_argument("target", help="npz under test")
    compare.add_argument("reference", help="reference npz")
    compare.add_argument("--tolerance", default="0.99,0.99", help="minimum cosine,euclidean similarity (default 0.99,0.99)")
    compare.add_argument("--excepts", "--except", default="", help="comma-separated tensor names to skip")
    compare.add_argument("-v", "--verbose", action="count", default=0,
                         help="-v: every one-sided and excepted name; -vv: worst elements of failures")
    compare.add_argument("--fuzzy_match", action="store_true",
                         help="names differ: match each target tensor with the most similar reference tensor of its shape")
    compare.add_argument("--stats_int8_tensor", action="store_true",
                         help="saturation statistics (127, -128, 0, |x| <= 8) of each int8 target tensor")
    add_checked_flags(compare, COMPARE_CHECKED)
    compare.set_defaults(run=cmd_compare)

    dump = sub.add_parser("dump", help="print tensors (one in full when NAME is given)")
    dump.add_argument("file")
    dump.add_argument("name", nargs="?")
    dump.set_defaults(run=cmd_dump)

    stats = sub.add_parser("stats", help="shape, dtype, min, max, mean, std, NaN/inf counts per tensor")
    stats.add_argument("file")
    stats.set_defaults(run=cmd_stats)

    get_shape = sub.add_parser("get_shape", help="print a tensor's shape as [d0,d1,...] (TPU-MLIR's)")
    get_shape.add_argument("file")
    get_shape.add_argument("name")
    get_shape.set_defaults(run=cmd_get_shape)

    extract = sub.add_parser("extract", help="write the named tensors to another npz (TPU-MLIR's)")
    extract.add_argument("file")
    extract.add_argument("output")
    extract.add_argument("names", help="comma-separated tensor names")
    extract.set_defaults(run=cmd_extract)

    rename = sub.add_parser("rename", help="rename a tensor in place (TPU-MLIR's)")
    rename.add_argument("file")
    rename.add_argument("old")
    rename.add_argument("new")
    rename.set_defaults(run=cmd_rename)

    to_dat = sub.add_parser("to_dat", help="write every tensor's raw bytes, in file order, to one file (TPU-MLIR's)")
    to_dat.add_argument("file")
    to_dat.add_argument("output")
    to_dat.set_defaults(run=cmd_to_dat)
    return parser


def run(argv: Sequence[str]) -> int:
    if argv and argv[0] in OTHER_SUBCOMMANDS:
        raise TpudslError(f"npz_tool: {argv[0]} is not supported: TPU-MLIR's subcommand is not modelled "
                          f"(supported: {', '.join(SUBCOMMANDS)})")
    args = build_parser().parse_args(argv)
    if args.command == "compare":
        check_flags("npz_tool compare", args, COMPARE_CHECKED)
    return args.run(args)


def main(argv: Sequence[str] | None = None) -> NoReturn:
    run_cli(run, argv)

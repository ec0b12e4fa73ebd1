"""npz_tool: compare, dump and summarize .npz tensor files (TPU-MLIR's npz_tool.py).

  npz_tool compare TARGET.npz REFERENCE.npz [--tolerance 0.99,0.99] [--excepts a,b] [-v|-vv]
                   [--stats_int8_tensor] [--fuzzy_match]
  npz_tool dump A.npz [NAME]
  npz_tool stats A.npz
  npz_tool statistic A.npz [--list | NAME [AXIS]]   # TPU-MLIR's per-channel ranges along AXIS (1)

and the file subcommands of tpudsl/cli/npz_files.py (get_shape, extract, remove, rename, merge,
insert, reshape, permute, tranpose, to_dat, to_bin, to_npy, bf16_to_fp32, fp16_to_fp32).
compare exits with status 1 when any common tensor fails (see tpudsl/cli/compare.py).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from tpudsl.cli.errors import CliArgumentParser, run_cli
from tpudsl.cli.npz_files import SUBCOMMANDS as FILE_SUBCOMMANDS
from tpudsl.cli.npz_files import add_subcommands, load_npz, split_names, tensor
from tpudsl.cli.tpu_mlir_flags import Checked, add_checked_flags, check_flags
from tpudsl.ir.diagnostics import TpudslError

if TYPE_CHECKING:  # imported where used: `npz_tool --help` must not wait for numpy
    import numpy as np

# TPU-MLIR's npz_tool subcommands tpudsl does not have (python/tools/npz_tool.py, numpy_helper), and why.
REFUSED = {
    "visualize_diff": "it draws plots of the differences; tpudsl draws none (compare -vv lists the worst elements)",
    "cali_test": "it quantizes tensors with a calibration table's thresholds and writes requant.npz; "
                 "deploy the INT8 model (model_deploy) and compare its tensors instead",
    "int8_to_fp32": "it dequantizes with TPU-MLIR's quantized op info csv, which tpudsl does not write "
                    "(tpudsl's tools write dequantized tensors)",
}
# `stats` is tpudsl's; the rest are TPU-MLIR's.
SUBCOMMANDS = ("compare", "dump", "stats", "statistic", *FILE_SUBCOMMANDS)
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

    from tpudsl.cli.compare import NUMERIC_KINDS, compare_dicts, format_report, fuzzy_match, parse_tolerance

    try:
        tolerance = parse_tolerance(args.tolerance)
    except ValueError as e:
        raise TpudslError(str(e)) from None
    target, reference = load_npz(args.target), load_npz(args.reference)
    if args.fuzzy_match:
        lines, passed = fuzzy_match(target, reference, tolerance)
        print("\n".join(lines))
        print("npz compare PASSED." if passed else "npz compare FAILED.")
        return 0 if passed else 1
    report = compare_dicts(target, reference, tolerance, split_names(args.excepts))
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


def cmd_statistic(args: argparse.Namespace) -> int:
    """TPU-MLIR's statistic (python/numpy_helper/npz_statistic.py), line for line: the tensor's
    channels along AXIS, each channel's mean, variance, max, min and range, the ranges divided by
    their norm and the order that sorts them; then, for 4 or more dimensions, each batch item's
    mean and variance over axes 1-3 (TPU-MLIR fails there for fewer dimensions; tpudsl stops).
    Integers narrower than 64 bits and float16 are widened first, so that a range cannot wrap or
    overflow (int8: 127 - -128)."""
    import numpy as np

    tensors = load_npz(args.file)
    if args.list or args.name is None:
        if args.name is not None:
            raise TpudslError("statistic: --list takes no tensor name")
        print("\n".join(tensors))
        return 0
    d = tensor(tensors, args.file, args.name)
    if d.dtype.kind not in "biuf" or not d.size:
        raise TpudslError(f"statistic: '{args.name}' holds no numbers to measure (dtype {d.dtype}, shape {list(d.shape)})")
    if not 0 <= args.axis < d.ndim:
        raise TpudslError(f"statistic: axis {args.axis} is not an axis of '{args.name}' (shape {list(d.shape)})")
    if d.dtype.kind in "biu" and d.dtype.itemsize < 8:
        d = d.astype(np.int64)
    elif d.dtype == np.float16:
        d = d.astype(np.float32)
    axis = args.axis
    print("data shape:", d.shape)
    new_shape = [axis] + [i for i in range(d.ndim) if i != axis]
    print("new_shape:", new_shape)
    channels = d.transpose(new_shape).reshape([d.shape[axis], -1])
    with np.printoptions(precision=6, suppress=True):
        amax, amin = channels.max(axis=-1), channels.min(axis=-1)
        print("mean", channels.mean(axis=-1))
        print("var", channels.var(axis=-1))
        print("max", amax)
        print("min", amin)
        spread = amax - amin
        print("data range", spread)
        length = np.linalg.norm(spread)
        norm = spread / length if length else spread
        print("data range norm", norm)
        order = np.argsort(norm)
        print("norm_odr", order)
        for i in range(len(spread)):
            print(f"idx:{i}, range:{spread[i]}, range norm:{norm[i]}, norm order:{order[i]}")
        if d.ndim >= 4:
            print("mean", d.mean(axis=(1, 2, 3)))
            print("var", d.var(axis=(1, 2, 3)))
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

    statistic = sub.add_parser("statistic", help="TPU-MLIR's per-channel mean, var, max, min and range of a tensor")
    statistic.add_argument("file")
    statistic.add_argument("name", nargs="?", help="the tensor (without it: the file's tensor names)")
    statistic.add_argument("axis", nargs="?", type=int, default=1, help="the channel axis (default 1)")
    statistic.add_argument("--list", action="store_true", help="print the file's tensor names")
    statistic.set_defaults(run=cmd_statistic)
    add_subcommands(sub)
    return parser


def run(argv: Sequence[str]) -> int:
    if argv and argv[0] in REFUSED:
        raise TpudslError(f"npz_tool: {argv[0]} is not supported: {REFUSED[argv[0]]} "
                          f"(supported: {', '.join(SUBCOMMANDS)})")
    args = build_parser().parse_args(argv)
    if args.command == "compare":
        check_flags("npz_tool compare", args, COMPARE_CHECKED)
    return args.run(args)


def main(argv: Sequence[str] | None = None) -> NoReturn:
    run_cli(run, argv)

"""run_calibration: a calibration table (threshold, min, max per tensor) from sample inputs.

  run_calibration X.mlir (--dataset DIR | --data_list FILE) [--input_num 100]
      [--histogram_bin_num 2048] [--method kld|minmax|percentile9999|mse]
      [--workers N | --scheduler ADDRESS] [--quiet] -o X_cali_table

A sample is an .npz keyed by input name, or one .npy or image per input (a --data_list line
lists them comma-separated, as TPU-MLIR's does); images go through the preprocessing recorded on
`top.Input`. --dataset takes the files of DIR in name order. --workers N splits the samples over
N processes, --scheduler over the workers of a Dask distributed cluster (which must see the same
paths); the table is the same. The algorithms and the table format: docs/quantization.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from tpudsl.cli.errors import CliArgumentParser, run_cli
from tpudsl.lowering.calibration_methods import METHODS


def _parser() -> CliArgumentParser:
    p = CliArgumentParser(prog="run_calibration", description=__doc__.split("\n\n")[0])
    p.add_argument("mlir", help="the Top .mlir (after model_transform)")
    add_sample_source(p)
    p.add_argument("--input_num", type=int, default=100, help="how many samples to use (0: all); default 100")
    p.add_argument("--histogram_bin_num", type=int, default=2048, help="histogram bins (at least 128); default 2048")
    p.add_argument("--method", choices=METHODS, default="kld", help="threshold method; default kld")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=1, help="processes to split the samples over; default 1")
    where.add_argument("--scheduler", help="a Dask distributed scheduler's address (tcp://host:8786) to split the samples over "
                                           "(needs pip install 'tpudsl[distributed]')")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("-o", dest="output", required=True, help="the calibration table to write")
    return p


def add_sample_source(p: CliArgumentParser) -> None:
    """--dataset or --data_list, as run_calibration and run_qtable read samples."""
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--dataset", help="a directory of samples (.npz, .npy or images)")
    source.add_argument("--data_list", help="a file with one sample per line (comma-separated files per input)")


def _main(argv: Sequence[str]) -> None:
    args = _parser().parse_args(argv)
    from tpudsl.cli.calibration_run import run_calibration  # after parsing: --help imports nothing heavy

    run_calibration(args)


def main(argv: Sequence[str] | None = None):
    run_cli(_main, argv)

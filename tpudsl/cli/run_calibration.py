"""run_calibration: a calibration table (threshold, min, max per tensor) from sample inputs.

  run_calibration X.mlir (--dataset DIR | --data_list FILE) [--input_num 100]
      [--histogram_bin_num 2048] [--method kld|minmax|percentile9999|mse]
      [--cali_method use_kl|use_max|use_percentile9999|use_mse]
      [--workers N | --scheduler ADDRESS] [--quiet] -o|--calibration_table X_cali_table
      [--sq [--sq_alpha A]] [--we] [--bc [--bc_inference_num 30] [--expected_cos 0.99] [--min_layer_cos 0.99]]
      [--rewritten_mlir X_sq_we_bc.mlir] [--tune_num N] [--tune_list FILE]
      [--search search_threshold [--inference_num 30] [--post_process FILE.py]]

A sample is an .npz keyed by input name, or one .npy or image per input (a --data_list line
lists them comma-separated, as TPU-MLIR's does); images go through the preprocessing recorded on
`top.Input`. --dataset takes the files of DIR in name order. --workers N splits the samples over
N processes, --scheduler over the workers of a Dask distributed cluster (which must see the same
paths); the table is the same. The algorithms and the table format: docs/quantization.md.

--sq (SmoothQuant) and --we (weight equalization) rewrite the module's weights first; the
rewritten module is a NEW file (--rewritten_mlir, default X_sq.mlir, X_we.mlir or X_sq_we.mlir
beside X.mlir, its weights in <stem>_top_f32_all_weight.npz), the table is the rewritten module's,
and model_deploy must read that module (the original one lacks the renamed tensors of the table,
an error there). --sq searches SmoothQuant's scales per LayerNorm as TPU-MLIR does (alpha 0, 0.05,
..., 1 and its os+ clipping family, the least INT8 MatMul error); --sq_alpha A fixes alpha instead.
docs/quantization.md, "Rewrites before calibration".

--bc (bias correction, after the table as TPU-MLIR's): the module is lowered to symmetric INT8 with
the table and run next to F32 on the first --bc_inference_num samples; until the INT8 output
cosine is above --expected_cos, each Conv (and MatMul) in op order whose INT8 output's cosine is
below --min_layer_cos gets its mean error per channel subtracted from its bias, kept unless the
output cosine drops, and the corrected module (X_bc.mlir, X_sq_we_bc.mlir, ...) is calibrated
again. docs/quantization.md, "--bc".

--tune_num N tunes the thresholds on N samples (the first N of the calibration's, or of
--tune_list's lines) as TPU-MLIR's SimpleTuner does: for each tensor, 22 candidates from its
threshold up to its abs_max, the one whose reading op's float output is closest (L2 / L1) with the
tensor fake-quantized. Not given (tpudsl's default; TPU-MLIR's is 5): no tuning.
docs/quantization.md, "Threshold tuning".

--search search_threshold computes every method's table (kld, minmax, percentile9999, mse; the kld
one tuned with --tune_num), deploys each whole in INT8 for --processor and writes the one whose
output cosine with Top on the first --inference_num samples is the highest, as TPU-MLIR's
SearchThreshold. docs/quantization.md, "Threshold method search". --post_process FILE.py scores
through the user's PostProcess(outputs), as TPU-MLIR's (docs/quantization.md, "--post_process").
TPU-MLIR's other flags are checked (CHECKED below, docs/tools.md).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from tpudsl.cli.errors import CliArgumentParser, run_cli
from tpudsl.cli.tpu_mlir_flags import Checked, add_checked_flags, check_flags
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.lowering.calibration_methods import METHODS

TPU_MLIR_CHIPS = ("bm1684x", "bm1684", "cv183x", "cv182x", "cv181x", "cv180x", "cv186x", "bm1688", "bm1690", "mars3")
# TPU-MLIR's --cali_method names of the methods tpudsl has (docs/quantization.md).
CALI_METHODS = {"use_kl": "kld", "use_max": "minmax", "use_percentile9999": "percentile9999", "use_mse": "mse"}
NO_SEARCH = "only for TPU-MLIR's --search search_qtable, which is not modelled"
QTABLE_SEARCH = "the mixed-precision search is run_qtable"
CHECKED = (
    Checked("--search", ("False", "search_threshold"), QTABLE_SEARCH),
    Checked("--max_float_layers", ("5",), NO_SEARCH),
    Checked("--fp_type", ("auto",), "--bc's reference is F32 (the Top module) whatever the chip; search_qtable "
                                     "is run_qtable"),
    Checked("--quantize_method_list", ("MSE",), NO_SEARCH),
    Checked("--benchmark_method", ("cos",), NO_SEARCH),
    Checked("--quantize_table", (), QTABLE_SEARCH),
    Checked("--transformer", ("False",), "TPU-MLIR's attention-pattern table rules are not modelled"),
    Checked("--kurtosis_analysis", (False,), "kurtosis analysis is not modelled"),
    Checked("--part_quantize", (False,), "partial quantization is not modelled"),
    Checked("--part_asymmtric", (False,), "asymmetric patterns are chosen by model_deploy --asymmetric"),
    Checked("--debug_cmd", ("", "dump_list"), "of TPU-MLIR's debug commands only dump_list is modelled"),
    Checked("--debug_log", (False,), "run_calibration has no log levels (--quiet hides the progress bar)"),
)


def _parser() -> CliArgumentParser:
    p = CliArgumentParser(prog="run_calibration", description=__doc__.split("\n\n")[0])
    p.add_argument("mlir", help="the Top .mlir (after model_transform)")
    add_sample_source(p)
    p.add_argument("--input_num", type=int, default=100, help="how many samples to use (0: all); default 100")
    p.add_argument("--histogram_bin_num", type=int, default=2048, help="histogram bins (at least 128); default 2048")
    method = p.add_mutually_exclusive_group()
    method.add_argument("--method", choices=METHODS, default=None, help="threshold method; default kld")
    method.add_argument("--cali_method", choices=tuple(CALI_METHODS), default=None,
                        help="TPU-MLIR's name of the method: " + ", ".join(f"{k} is {v}" for k, v in CALI_METHODS.items()))
    p.add_argument("--processor", "--chip", dest="processor", default="bm1684x", choices=TPU_MLIR_CHIPS,
                   help="accepted: the table does not depend on the chip (TPU-MLIR's default bm1684x)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=1, help="processes to split the samples over; default 1")
    where.add_argument("--scheduler", help="a Dask distributed scheduler's address (tcp://host:8786) to split the samples over "
                                           "(needs pip install 'tpudsl[distributed]')")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("-o", "--calibration_table", dest="output", required=True, help="the calibration table to write")
    p.add_argument("--sq", action="store_true",
                   help="SmoothQuant: LayerNorm -> MatMul outlier channels moved into the MatMul weights")
    p.add_argument("--sq_alpha", type=float, default=None,
                   help="SmoothQuant's migration strength in [0, 1], fixed (tpudsl's flag); without it the scales "
                        "are searched per LayerNorm, as TPU-MLIR's --sq")
    p.add_argument("--we", action="store_true", help="cross-layer weight equalization of Conv pairs")
    p.add_argument("--bc", action="store_true",
                   help="bias correction: after the table, each Conv/MatMul bias minus its INT8 output's mean error, "
                        "then the table again")
    p.add_argument("--bc_inference_num", type=int, default=30, help="--bc: how many samples it measures; default 30")
    p.add_argument("--expected_cos", type=float, default=0.99,
                   help="--bc: no more corrections once the INT8 output cosine is above it; default 0.99")
    p.add_argument("--min_layer_cos", type=float, default=0.99,
                   help="--bc: only layers whose INT8 cosine is below it are corrected; default 0.99")
    p.add_argument("--tune_num", type=int, default=None,
                   help="tune the thresholds on this many samples (default: no tuning; with --tune_list 5, 0: all its lines)")
    p.add_argument("--inference_num", type=int, default=30,
                   help="--search search_threshold: how many samples each method's INT8 model runs; default 30")
    p.add_argument("--tune_list", default="", help="a file of tuning samples, one per line as --data_list's")
    add_compare_layers(p)
    add_post_process(p)
    p.add_argument("--rewritten_mlir", default=None,
                   help="where --sq/--we write the rewritten module (default X_sq.mlir, X_we.mlir or X_sq_we.mlir)")
    add_checked_flags(p, CHECKED)
    return p


def add_sample_source(p: CliArgumentParser) -> None:
    """--dataset or --data_list, as run_calibration and run_qtable read samples."""
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--dataset", help="a directory of samples (.npz, .npy or images)")
    source.add_argument("--data_list", help="a file with one sample per line (comma-separated files per input)")


def add_compare_layers(p: CliArgumentParser) -> None:
    """TPU-MLIR's --global_compare_layers, as every tool that scores a model reads it (cli/model_score.py)."""
    p.add_argument("--global_compare_layers", default="",
                   help="score these tensors instead of the outputs: 'a,b' (their mean) or 'a:0.3,b:0.7' (weights "
                        "summing to 1), TPU-MLIR's weighted mean of their cosines")


def add_post_process(p: CliArgumentParser) -> None:
    """TPU-MLIR's --post_process, as every tool that scores a model through it reads it (cli/post_process.py)."""
    p.add_argument("--post_process", default=None, metavar="FILE.py",
                   help="score what this file's PostProcess(outputs) returns (a dict of arrays keyed by name) "
                        "instead of the outputs (or --global_compare_layers' tensors), as TPU-MLIR")


def _main(argv: Sequence[str]) -> None:
    parser = _parser()
    args = parser.parse_args(argv)
    check_flags("run_calibration", args, CHECKED)
    args.dump_list = args.debug_cmd == "dump_list"  # TPU-MLIR's: the samples used, in ./selected_image_list.txt
    _check_search(args, parser)
    args.method = CALI_METHODS[args.cali_method] if args.cali_method else (args.method or "kld")
    if args.sq_alpha is not None and not args.sq:
        raise TpudslError("run_calibration: --sq_alpha needs --sq")
    if args.rewritten_mlir is not None and not (args.sq or args.we or args.bc):
        raise TpudslError("run_calibration: --rewritten_mlir needs --sq, --we or --bc (nothing else rewrites the module)")
    _check_bc(args, parser)
    if args.global_compare_layers and not (args.bc or args.search == "search_threshold"):
        raise TpudslError("run_calibration: --global_compare_layers needs --search search_threshold or --bc (what "
                          "scores a model)")
    if args.post_process and args.search != "search_threshold":
        raise TpudslError("run_calibration: --post_process needs --search search_threshold (TPU-MLIR's --bc and "
                          "calibration do not run it)")
    if args.tune_num is not None and args.tune_num < 0:
        raise TpudslError(f"run_calibration: --tune_num must be 0 or more, not {args.tune_num}")
    if args.sq_alpha is not None and not 0.0 <= args.sq_alpha <= 1.0:
        raise TpudslError(f"run_calibration: --sq_alpha must lie in [0, 1], not {args.sq_alpha:g}")
    from tpudsl.cli.calibration_run import run_calibration  # after parsing: --help imports nothing heavy

    run_calibration(args)


def _changed(args: argparse.Namespace, parser: CliArgumentParser, *flags: str) -> list[str]:
    """Those of `flags` whose values are not the parser's defaults."""
    return [f for f in flags if getattr(args, f.lstrip("-")) != parser.get_default(f.lstrip("-"))]


def _check_search(args: argparse.Namespace, parser: CliArgumentParser) -> None:
    """--search search_threshold's flags: it tries every method on the module as its file holds it."""
    if args.search != "search_threshold":
        if _changed(args, parser, "--inference_num"):
            raise TpudslError("run_calibration: --inference_num needs --search search_threshold "
                              "(the samples it deploys)")
        return
    if args.method or args.cali_method:
        raise TpudslError("run_calibration: --search search_threshold tries every method (kld, minmax, percentile9999, "
                          "mse): --method and --cali_method choose one")
    if args.sq or args.we or args.bc:
        raise TpudslError("run_calibration: --search search_threshold with --sq, --we or --bc is not modelled (the "
                          "search deploys the module from its file; the rewritten one is written at the end)")
    if args.inference_num < 1:
        raise TpudslError(f"run_calibration: --inference_num must be at least 1, not {args.inference_num}")


def _check_bc(args: argparse.Namespace, parser: CliArgumentParser) -> None:
    """--bc's settings: TPU-MLIR's defaults, other values only with --bc (they are also search_qtable's)."""
    given = _changed(args, parser, "--bc_inference_num", "--expected_cos", "--min_layer_cos")
    if not args.bc:
        if given:
            raise TpudslError(f"run_calibration: {given[0]} needs --bc (TPU-MLIR's search_qtable setting is run_qtable's)")
        return
    if args.bc_inference_num < 1:
        raise TpudslError(f"run_calibration: --bc_inference_num must be at least 1, not {args.bc_inference_num}")
    for flag, value in (("--expected_cos", args.expected_cos), ("--min_layer_cos", args.min_layer_cos)):
        if not 0.0 < value <= 1.0:
            raise TpudslError(f"run_calibration: {flag} must be in (0, 1], not {value:g}")


def main(argv: Sequence[str] | None = None):
    run_cli(_main, argv)

"""run_sensitive_layer: each layer's best threshold method, the layers ranked by how much INT8 hurts them.

  run_sensitive_layer X.mlir (--dataset DIR | --data_list FILE) --calibration_table T --processor bm1684x
      [--input_num 10] [--inference_num 10] [--max_float_layers 5] [--expected_cos 0.99]
      [--tune_num 5] [--tune_list FILE] [--histogram_bin_num 2048] [--fp_type auto|F16|F32|BF16]
      [--global_compare_layers a:0.5,b:0.5] [--post_process FILE.py]
      [--new_cali_table new_cali_table.txt] [--loss_table sensitive_layer_loss_table.txt] [--quiet]
      -o X_qtable

TPU-MLIR's sensitive-layer search (python/calibration/sensitive_layer.py):

1. the model in INT8 with T: if its output cosine with Top is already above --expected_cos, nothing
   is searched and nothing is written;
2. one calibration pass on the first --input_num samples gives every method's thresholds (max,
   percentile9999, kl, mse: tpudsl's minmax, percentile9999, kld, mse), each tuned on --tune_num
   samples (0: no tuning);
3. each layer that has an INT8 form, in op order, is lowered alone in INT8 (every other layer in
   --fp_type) with each method's threshold for its output in turn, the other thresholds those of T
   as chosen so far; its loss is 1 - the output cosine on the first --inference_num samples, and
   the method of the least loss keeps its threshold;
4. the layers ranked by that loss, worst first; the worst ones go to --fp_type, one at a time,
   until the model (the rest INT8 with the new thresholds) reaches --expected_cos or
   --max_float_layers are float.

Writes the qtable (-o, for model_deploy --quantize_table), the new calibration table (T with each
layer's best threshold, for model_deploy --calibration_table) and the loss table, all or none.
docs/quantization.md, "Sensitive layers"; TPU-MLIR's other flags are checked (CHECKED below,
docs/tools.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from tpudsl.cli import run_qtable
from tpudsl.cli.errors import CliArgumentParser, run_cli
from tpudsl.cli.run_qtable import add_search_arguments
from tpudsl.cli.tpu_mlir_flags import Checked, add_checked_flags, check_flags

CHECKED = (
    Checked("--cali_method", ("use_kl",), "the search tries every method (max, percentile9999, kl, mse) per layer"),
    *run_qtable.CHECKED,  # the same flags for the same reasons
)


def _parser() -> CliArgumentParser:
    p = CliArgumentParser(prog="run_sensitive_layer", description=__doc__.split("\n\n")[0])
    add_search_arguments(p)
    p.add_argument("--input_num", type=int, default=10, help="samples of the calibration pass (0: all); default 10")
    p.add_argument("--inference_num", type=int, default=10,
                   help="samples each INT8 model of the search runs (at least 1); default 10")
    p.add_argument("--max_float_layers", type=int, default=5, help="at most this many layers in float; default 5")
    p.add_argument("--tune_num", type=int, default=5,
                   help="tune every method's thresholds on this many samples (0: no tuning); default 5")
    p.add_argument("--tune_list", default="", help="a file of tuning samples, one per line as --data_list's")
    p.add_argument("--histogram_bin_num", type=int, default=2048, help="histogram bins (at least 128); default 2048")
    p.add_argument("--new_cali_table", default="new_cali_table.txt",
                   help="where to write the calibration table with each layer's best threshold (TPU-MLIR's name)")
    p.add_argument("--loss_table", default="sensitive_layer_loss_table.txt",
                   help="where to write every layer's loss and best method, worst first")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("-o", "--quantize_table", dest="output", required=True, help="the qtable to write")
    add_checked_flags(p, CHECKED)
    return p


def _main(argv: Sequence[str]) -> None:
    args = _parser().parse_args(argv)
    check_flags("run_sensitive_layer", args, CHECKED)
    from tpudsl.cli.sensitive_layer import run_sensitive_layer  # after parsing: --help imports nothing heavy

    run_sensitive_layer(args)


def main(argv: Sequence[str] | None = None):
    run_cli(_main, argv)

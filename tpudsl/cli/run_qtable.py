"""run_qtable: the fewest layers to keep in a float type so that INT8 reaches an output cosine.

  run_qtable X.mlir (--dataset DIR | --data_list FILE) --calibration_table T --processor bm1684x
      [--input_num 10] [--expected_cos 0.99] [--min_layer_cos 0.99] [--fp_type auto|F16|F32|BF16]
      [--asymmetric] [--global_compare_layers a:0.5,b:0.5] [--post_process FILE.py]
      [--loss_table full_loss_table.txt] [--quiet] -o X_qtable

TPU-MLIR's mixed-precision search (python/calibration/search_qtable.py), in its cheap form:

1. each layer that has an INT8 form is lowered alone in INT8, every other one in --fp_type, and
   its loss is the model's output cosine against Top on the samples (the loss table, worst first);
2. the layers whose cosine is below --min_layer_cos go to --fp_type at once; then, worst first,
   one more layer at a time until the whole INT8 model's cosine reaches --expected_cos.

A model's cosine is the smallest, over its outputs and the parts a Concat assembles into one
(YOLOv8's boxes and class scores), of the mean over samples of the cosine with Top's; with
--global_compare_layers a:0.3,b:0.7 the weighted mean of those tensors' (TPU-MLIR's); with
--post_process FILE.py, of the arrays the file's PostProcess(outputs) returns instead. With
--asymmetric every INT8 run quantizes as model_deploy --asymmetric will (the table imported
asymmetric, uint8/int8 with zero points). The qtable (`name MODE`
lines, tpudsl/lowering/qtable.py) is what model_deploy --quantize INT8 --quantize_table
reads. docs/quantization.md, "Mixed precision". TPU-MLIR's other flags are checked (CHECKED below,
docs/tools.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from tpudsl.cli.errors import CliArgumentParser, run_cli
from tpudsl.cli.run_calibration import add_compare_layers, add_post_process, add_sample_source
from tpudsl.cli.tpu_mlir_flags import Checked, add_checked_flags, check_flags
from tpudsl.lowering.qtable import QTABLE_MODES

FP_TYPES = ("auto", *(m for m in QTABLE_MODES if m != "INT8"))
CHECKED = (  # run_sensitive_layer checks these too
    Checked("--debug_cmd", ("",), "TPU-MLIR's debug commands are not modelled"),
)


def _parser() -> CliArgumentParser:
    p = CliArgumentParser(prog="run_qtable", description=__doc__.split("\n\n")[0])
    add_search_arguments(p)
    p.add_argument("--input_num", type=int, default=10, help="how many samples to use (0: all); default 10")
    p.add_argument("--min_layer_cos", type=float, default=0.99,
                   help="a layer whose INT8-alone cosine is below this is kept float at once; default 0.99")
    p.add_argument("--asymmetric", action="store_true",
                   help="search for model_deploy --asymmetric: INT8 with zero points (uint8 for ranges >= 0)")
    p.add_argument("--loss_table", default="full_loss_table.txt", help="where to write every layer's cosine")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument("-o", dest="output", required=True, help="the qtable to write")
    add_checked_flags(p, CHECKED)
    return p


def add_search_arguments(p: CliArgumentParser) -> None:
    """What run_qtable and run_sensitive_layer both read: the module, its samples, the table, the
    chip, the float type of the float layers and the cosine to reach."""
    p.add_argument("mlir", help="the Top .mlir (after model_transform)")
    add_sample_source(p)
    p.add_argument("--calibration_table", required=True, help="run_calibration's table")
    p.add_argument("--processor", "--chip", dest="processor", required=True, help="the chip, e.g. bm1684x")
    p.add_argument("--fp_type", type=str.upper, default="AUTO", choices=[t.upper() for t in FP_TYPES],
                   help="the float type of the float layers; auto: F16 where the chip has it, else F32")
    p.add_argument("--expected_cos", type=float, default=0.99, help="the output cosine to reach; default 0.99")
    add_compare_layers(p)
    add_post_process(p)


def _main(argv: Sequence[str]) -> None:
    args = _parser().parse_args(argv)
    check_flags("run_qtable", args, CHECKED)
    from tpudsl.cli.qtable_search import run_qtable  # after parsing: --help imports nothing heavy

    run_qtable(args)


def main(argv: Sequence[str] | None = None):
    run_cli(_main, argv)

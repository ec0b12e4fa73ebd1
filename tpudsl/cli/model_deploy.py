"""model_deploy: Top .mlir -> Tpu .mlir in one precision, checked against Top (TPU-MLIR's flags).

  model_deploy --mlir NAME.mlir --quantize F32|F16|BF16|INT8|W8F16|W8BF16|W4F16|W4BF16 --processor bm1684x
      --model NAME.bmodel
      [--quantize_table Q] [--calibration_table T] [--asymmetric] [--q_group_size N [--q_symmetric]]
      [--test_input NAME_in_f32.npz] [--test_reference NAME_top_outputs.npz]
      [--tolerance 0.8,0.5] [--compare_all] [--excepts a,b] [--fazzy_match] [--skip_validation]
      [--disable_layer_group] [--opt 1|2|3] [--ignore_f16_overflow] [--not_gen_bmodel] [--cache_skip] [--debug]
      [TPU-MLIR's --do_winograd, --includeWeight, --patterns_count and --quantize INT4|F8E4M3|F8E5M2 are
       refused by name: docs/tools.md, model_deploy]
      [TPU-MLIR's --num_device --num_core --addr_mode --quant_input --quant_output --quant_input_list
       --quant_output_list --quant_output_bf16 --dynamic --op_divide --disable_topo_sort
       --opt_post_processor --weight_deduplicate --merge_weight --group_by_cores --compress_mode
       --model_version --fuse_preprocess --customization_format --aligned_input:
       accepted at the values tpudsl models, else an error naming the pass option; docs/tpuc-opt.md]

Writes PREFIX_tpu.mlir and PREFIX_tpu_weights.npz next to --model, PREFIX being
NAME_<processor>_<quantize> (INT8: NAME_<processor>_int8_sym, or _int8_asym with --asymmetric), as TPU-MLIR names them. With
--test_input it runs the Tpu interpreter (PREFIX_tpu_outputs.npz) and compares with
--test_reference, or with the Top interpreter's results on the same input, and names the first
tensor below tolerance (INT8: int8 tensors compared as (stored - zero point) * scale; the saved outputs keep the
raw integers; --fuse_preprocess: the inputs take raw uint8 data, compared by name from the preprocessed input on;
--quant_input/--quant_output: int8 (f16/bf16 in F16/BF16) IO, float test data quantized
(rounded) as the stripped casts would, a stripped output compared under its Top name; docs/tools.md). INT8 imports
--calibration_table first (symmetric; --asymmetric: uint8/int8 with zero points); a QDQ model's module (TOP_CALIBRATED:
model_transform gave it the ranges of its Q/DQ nodes) needs none, and --quantize QDQ is TPU-MLIR's spelling of that. In F16/BF16, a
run that produced inf/NaN where Top did not names the first op that did and
prints the qtable lines that keep the overflowing ops in F32. F16, W8F16 and W4F16 lower average pools
in F32, as TPU-MLIR, unless --ignore_f16_overflow. Every mode but F32 keeps the ops that compute or read
attention-mask fill values (|x| >= 1e30, finfo(float32).min; INT8 also |x| >= 127 at a Softmax's input,
LLM-TPU's -10000) in F32, and says which on stderr as qtable
lines (a --quantize_table line naming one wins; docs/quantization.md, "Attention masks"). --fazzy_match compares each tensor with the
reference tensor of its shape that is closest (TPU-MLIR's fuzzy match, for references named otherwise).
--not_gen_bmodel stops once PREFIX_tpu.mlir is written, without any check (TPU-MLIR's).

Then it goes on (docs/backend.md): --weight-reorder, --core-parallel (with --num_core 2: each A16MatMul
split into per-core column parts), --address-assign and --layer-group give
PREFIX_final.mlir (layer groups of several ops unless --disable_layer_group or --opt 1; --debug also writes
the group decisions to PREFIX_layer_groups.txt), --codegen writes --model, and with --test_input the .bmodel runs on the cmodel
and is compared with the Tpu interpreter's outputs: INT8 bit-exact, F32 within 1e-5 relative (to
the tensor's largest magnitude), F16/BF16 bit-exact (--skip_validation: the .bmodel is written, not run). A model with an
op the backend has no instructions for stops after
the Tpu check and says so (naming the op); --model is then not written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NoReturn

from tpudsl.cli.errors import CliArgumentParser, run_cli
from tpudsl.cli.tpu_mlir_flags import Checked, add_checked_flags, check_flags
from tpudsl.ir.diagnostics import TpudslError

# W8F16/W8BF16 (W4...): weight-only 8-bit (4-bit) MatMul weights, F16/BF16 activations (tpu.A16MatMul,
# docs/quantization.md)
# QDQ: TPU-MLIR's spelling of INT8 with the ranges of a QDQ model's Q/DQ nodes (no --calibration_table)
MODES = ("F32", "F16", "BF16", "INT8", "QDQ", "W8F16", "W8BF16", "W4F16", "W4BF16")
# TPU-MLIR's other --quantize modes: parsed, then refused by name with why (not argparse's choices error).
REFUSED_MODES = {
    "INT4": "4-bit activations are not modelled (W4F16 and W4BF16 quantize the MatMul weights to 4 bits)",
    "F8E4M3": "float8 types are not modelled",
    "F8E5M2": "float8 types are not modelled",
}

# TPU-MLIR's model_deploy flags tpudsl parses only to check (docs/tools.md, model_deploy).
CHECKED = (
    Checked("--do_winograd", (False,), "Winograd convolution (TPU-MLIR's BM1684 INT8 Conv form) is not modelled"),
    Checked("--includeWeight", (False,), "it puts the weights into the TOSA module of --processor cpu, "
            "which tpudsl does not write"),
    Checked("--patterns_count", (), "a regression check of TPU-MLIR's pattern counts; "
            "tpuc-opt --debug-only=pattern-application prints tpudsl's"),
)


def _parser() -> CliArgumentParser:
    p = CliArgumentParser(prog="model_deploy", description="Lower a Top .mlir to the Tpu level and check it against Top.")
    p.add_argument("--mlir", required=True, help="the Top .mlir (model_transform's output)")
    p.add_argument("--quantize", default="F32", type=str.upper, choices=(*MODES, *REFUSED_MODES),
                   help=f"precision (default F32; {', '.join(REFUSED_MODES)} are refused)")
    p.add_argument("--processor", "--chip", dest="processor", required=True, help="the chip, e.g. bm1684x")
    p.add_argument("--model", required=True, help="the .bmodel to write (its directory receives the .mlir files)")
    p.add_argument("--calibration_table", default=None, help="run_calibration's table (INT8)")
    p.add_argument("--quantize_table", default=None, help="per-op precision, TPU-MLIR's qtable format")
    p.add_argument("--asymmetric", action="store_true", help="INT8 with zero points (uint8 for ranges >= 0)")
    p.add_argument("--test_input", default=None, help="inputs .npz (model_transform's NAME_in_f32.npz)")
    p.add_argument("--test_reference", default=None, help="reference .npz; default: the Top interpreter on --test_input")
    p.add_argument("--tolerance", default="0.8,0.5", help="min cosine,euclid similarity vs the reference")
    p.add_argument("--compare_all", action="store_true", help="compare every tensor, not only the outputs")
    p.add_argument("--excepts", default=None, help="comma-separated tensors not to compare")
    p.add_argument("--disable_layer_group", action="store_true",
                   help="every op its own layer group (--layer-group=\"opt=1\"), whatever --opt")
    p.add_argument("--opt", type=int, default=2, choices=(1, 2, 3),
                   help="the layer-group strategy (--layer-group=\"opt=N\"): 1 every op its own group, 2 (default) "
                        "and 3 the group search")
    p.add_argument("--ignore_f16_overflow", action="store_true",
                   help="F16/W8F16/W4F16: average pools in F16 too (default: F32, as TPU-MLIR)")
    p.add_argument("--skip_validation", action="store_true",
                   help="with --test_input: no cmodel run of the .bmodel nor its comparison (the Tpu check runs)")
    p.add_argument("--not_gen_bmodel", action="store_true",
                   help="stop after PREFIX_tpu.mlir: no check, no final.mlir, no .bmodel (TPU-MLIR's QAT use)")
    p.add_argument("--fazzy_match", action="store_true",
                   help="the Tpu check matches each tensor with the reference tensor of its shape that is closest "
                        "(npz_tool compare --fuzzy_match)")
    p.add_argument("--cache_skip", action="store_true", help="accepted: tpudsl caches nothing, every step runs")
    p.add_argument("--no_concat_in_place", action="store_true",
                   help="tpudsl's: every Concat moves its inputs (address-assign merge_concat=false; default: the "
                        "Concats TPU-MLIR merges in place are, docs/backend.md \"Concats merged in place\")")
    # TPU-MLIR's flags of its deploy passes (docs/tpuc-opt.md): the values tpudsl models are
    # accepted, others fail naming the pass option, before any file is written.
    t = p.add_argument_group("TPU-MLIR's flags of its passes (docs/tpuc-opt.md: the values tpudsl models)")
    t.add_argument("--q_group_size", type=int, default=0,
                   help="W8/W4 modes: a scale and zero point per group of this many K (default 0: per output channel)")
    t.add_argument("--q_symmetric", action="store_true", help="with --q_group_size: symmetric groups (zero point 128)")
    t.add_argument("--num_device", type=int, default=1, help="devices (only 1)")
    t.add_argument("--num_core", type=int, default=1, help="cores: 1 up to the chip's (bm1688: 2; docs/backend.md \"Several cores\")")
    t.add_argument("--addr_mode", default="auto",
                   help="auto or basic: inputs and outputs among the activations in one neuron region; "
                        "io_alone: inputs and outputs in an IO region of their own; io_tag (bm1688): each in a "
                        "memory tag of its own; io_tag_fuse (bm1688): the inputs in tag 3, the outputs in tag 4")
    t.add_argument("--quant_input", action="store_true",
                   help="int8/uint8 (INT8) or f16/bf16 (F16/BF16) inputs: their casts stripped")
    t.add_argument("--quant_output", action="store_true", help="int8/uint8 or f16/bf16 outputs: their casts stripped")
    t.add_argument("--quant_input_list", default="", help="which inputs to strip, 1-based (1,3; default all)")
    t.add_argument("--quant_output_list", default="", help="which outputs to strip, 1-based (1,3; default all)")
    t.add_argument("--quant_output_bf16", action="store_true",
                   help="without --quant_output: each f32 output cast to bf16")
    t.add_argument("--dynamic", action="store_true", help="dynamic subnets (not supported)")
    t.add_argument("--op_divide", action="store_true", help="divide large ops along H (not supported)")
    t.add_argument("--disable_topo_sort", action="store_true", help="skip --topo-sort (tpudsl's order is kept either way)")
    t.add_argument("--opt_post_processor", action="store_true", help="run --opt-post-processor (no work in tpudsl)")
    t.add_argument("--weight_deduplicate", action="store_true", help="identical weights share one (--weight-deduplicate)")
    t.add_argument("--merge_weight", action="store_true", help="share coefficients with an earlier model (not supported)")
    t.add_argument("--group_by_cores", default="auto",
                   help="layer-group group_by_cores: auto or false, the same here (each op's slices are dealt to "
                        "the --num_core cores either way; groups are not forced to the cores)")
    t.add_argument("--compress_mode", default="none", help="layer-group compress_mode (only none)")
    t.add_argument("--model_version", default="latest", help="codegen model_version (latest)")
    t.add_argument("--fuse_preprocess", action="store_true",
                   help="the model takes raw uint8 images: the preprocessing model_transform recorded runs inside it "
                        "(--fuse-preprocess); --test_input then is image files (one per input) or an .npz of "
                        "the raw data under the inputs' NAME_raw")
    t.add_argument("--customization_format", default="",
                   help="with --fuse_preprocess: the raw data's format, RGB_PLANAR, RGB_PACKED, BGR_PLANAR, "
                        "BGR_PACKED or GRAYSCALE (default: the model's pixel_format and channel_format)")
    t.add_argument("--aligned_input", action="store_true", help="CV18xx aligned input rows (not supported)")
    add_checked_flags(p, CHECKED)
    return p


def run(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    if args.quantize in REFUSED_MODES:
        raise TpudslError(f"model_deploy: --quantize {args.quantize} is not supported: {REFUSED_MODES[args.quantize]} "
                          f"(supported: {', '.join(MODES)})")
    check_flags("model_deploy", args, CHECKED)
    from tpudsl.cli.deploy import deploy  # after parsing: --help imports nothing heavy

    return deploy(args)


def main(argv: Sequence[str] | None = None) -> NoReturn:
    run_cli(run, argv)

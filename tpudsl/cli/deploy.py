"""What model_deploy does once its arguments are parsed: lower, check against Top, then go on through
the backend to the .bmodel and check the cmodel (docs in tpudsl/cli/model_deploy.py).

Kept apart from the argument parser so that `model_deploy --help` imports nothing heavy."""


from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tpudsl.cli.compare import bmodel_mismatch, compare_dicts, format_report, fuzzy_match, tolerance_flag
from tpudsl.cli.model_runner import dequantized, module_half_io, module_quant_io, save_npz, stored_inputs, widened
from tpudsl.dialects import make_context
from tpudsl.dialects.opdef import describe, loc_name
from tpudsl.interp import run_module
from tpudsl.ir.diagnostics import TpudslError
from tpudsl.ir.module import TopModule, load_module, read_npz, save_module, write_atomically
from tpudsl.lowering.overflow import LARGEST, first_non_finite, ops_needing_f32
from tpudsl.lowering.top_to_tpu_int8 import int8_params
from tpudsl.lowering.weight_only import WEIGHT_ONLY_MODES
from tpudsl.passes import pass_class

if TYPE_CHECKING:
    from tpudsl.backend.bmodel import Bmodel


def _module_name(top: TopModule) -> str:
    attr = top.module.attributes.get("module.name")
    return getattr(attr, "data", None) or Path(top.path or "model").stem


def _fuse_preprocess(args):
    """--fuse-preprocess with model_deploy's flags for it, its options checked (None without --fuse_preprocess)."""
    if not args.fuse_preprocess:
        if args.customization_format or args.aligned_input:
            raise TpudslError("--customization_format and --aligned_input need --fuse_preprocess")
        return None
    fuse = pass_class("fuse-preprocess")(mode=args.quantize, customization_format=args.customization_format,
                                         align=args.aligned_input)
    fuse.check_options()
    return fuse


def _check_calibration(top: TopModule, args, qdq_spelling: bool) -> bool:
    """Where INT8's ranges come from: --calibration_table on a TOP_F32 module, or the module itself
    when model_transform gave a QDQ model's tensors their Q/DQ ranges (TOP_CALIBRATED); --quantize
    QDQ (TPU-MLIR's spelling, `qdq_spelling`) is INT8 from those ranges. True for a QDQ model."""
    qdq = top.state == "TOP_CALIBRATED"
    if qdq_spelling and not qdq:
        raise TpudslError(f"--quantize QDQ needs a QDQ model (model_transform of an ONNX model with "
                          f"QuantizeLinear/DequantizeLinear: module.state TOP_CALIBRATED); {args.mlir} is {top.state}")
    if qdq and args.quantize != "INT8":
        raise TpudslError(f"{args.mlir} is a QDQ model (TOP_CALIBRATED: its ranges came from its Q/DQ nodes): "
                          f"it deploys in INT8 (or QDQ), not {args.quantize}")
    if qdq and args.calibration_table:
        raise TpudslError(f"--calibration_table {args.calibration_table}: {args.mlir} is a QDQ model, calibrated by "
                          "its Q/DQ nodes already (TOP_CALIBRATED)")
    if args.quantize == "INT8" and not qdq and not args.calibration_table:
        raise TpudslError("--quantize INT8 needs --calibration_table (run_calibration's output), or a QDQ model")
    return qdq


def _prepare(top: TopModule, args) -> None:
    """mlir_shell.py's lowering line up to the conversion: calibration, processor, fused preprocessing.
    It runs before the Top interpreter's run, so that a fused model's Top run reads the same raw inputs."""
    ctx = make_context()
    if args.quantize == "INT8" and top.state == "TOP_F32":
        pass_class("import-calibration-table")(file=args.calibration_table, asymmetric=args.asymmetric).apply(
            ctx, top.module)
    pass_class("processor-assign")(chip=args.processor, mode=args.quantize, num_device=args.num_device,
                                   num_core=args.num_core, addr_mode=args.addr_mode).apply(ctx, top.module)
    fuse = _fuse_preprocess(args)
    if fuse is not None:
        fuse.apply(ctx, top.module)


def _test_inputs(top: TopModule, args) -> dict[str, np.ndarray]:
    """--test_input: an .npz keyed by input name; with --fuse_preprocess also image files, one per input
    (TPU-MLIR's form), decoded and resized as model_transform recorded, in the customization format's order
    and layout, without mean and scale: the raw data, rounded to bytes by stored_inputs (scale 1)."""
    from tpudsl.cli.calibration_run import recorded_preprocess
    from tpudsl.cli.model_runner import input_shapes
    from tpudsl.frontend.preprocess import is_image
    from tpudsl.frontend.test_inputs import check_test_input_files, load_test_inputs

    files = check_test_input_files(args.test_input)
    if args.fuse_preprocess and files and all(is_image(f) for f in files):
        if args.customization_format.startswith("YUV"):
            raise TpudslError(f"--test_input {args.test_input}: making {args.customization_format} frames from an "
                              "image (RGB -> YUV 4:2:0) is not modelled; give the raw frames as .npz (<input>_raw)")
        shapes = input_shapes(top)
        return load_test_inputs(files, list(shapes), list(shapes.values()), recorded_preprocess(top))  # type: ignore[arg-type]
    return read_npz(args.test_input)


def _lower(top: TopModule, args, weight_file: str, qdq: bool) -> None:
    ctx = make_context()
    pass_class("convert-top-to-tpu")(qtable=args.quantize_table or "", weightFileName=weight_file,
                                     asymmetric=args.asymmetric, q_group_size=args.q_group_size,
                                     # a QDQ model's MatMul weights per output column, as its Conv filters
                                     # (frontend/qdq.py checked that both give back the ONNX int8 values)
                                     matmul_perchannel=qdq, ignore_f16_overflow=args.ignore_f16_overflow,
                                     q_symmetric=args.q_symmetric).apply(ctx, top.module)
    # mlir_shell.py's passes before the groups, with model_deploy's flags for them: where tpudsl
    # accepts the flags they change nothing, else they fail naming the option (docs/tpuc-opt.md).
    stages = [pass_class("strip-io-quant")(quant_input=args.quant_input, quant_output=args.quant_output,
                                           quant_input_list=args.quant_input_list,
                                           quant_output_list=args.quant_output_list,
                                           quant_output_bf16=args.quant_output_bf16),
              pass_class("processor-tpu-optimize")(),  # splits the Permutes the backend cannot load at once
              pass_class("dev-parallel")(), *([pass_class("op-divide")()] if args.op_divide else []),
              pass_class("subnet-divide")(dynamic=args.dynamic),
              *([] if args.disable_topo_sort else [pass_class("topo-sort")()])]
    for stage in stages:
        stage.apply(ctx, top.module)
    top.module.verify()


def _tell_mask_ops(top: TopModule, args, mode: str) -> None:
    """Name the ops the lowering keeps in F32 for attention-mask fills (those the user's qtable does not name)."""
    from tpudsl.lowering.overflow import fill_rule, mask_ops_kept_f32
    from tpudsl.lowering.qtable import read_qtable

    named = read_qtable(args.quantize_table, {loc_name(o) for o in top.main_func().walk()}) if args.quantize_table \
        else {}
    kept = [name for name in mask_ops_kept_f32(top, mode) if name not in named]
    if kept:
        why = "no int8 scale keeps them with the other values" if mode == "INT8" else f"they are beyond {mode}'s range"
        print(f"model_deploy: these ops compute or read attention-mask fill values ({fill_rule(mode)}; {why}): "
              "they stay F32 (a --quantize_table line naming one wins):",
              *(f"{name} F32" for name in kept), sep="\n", file=sys.stderr)


def _overflow_report(tpu: TopModule, tensors: dict[str, np.ndarray], top_tensors: dict[str, np.ndarray],
                     keep_f32: list[str], mode: str) -> list[str]:
    """What went wrong in an F16/BF16 run with inf/NaN (where Top is finite), and the qtable lines that fix it."""
    first = first_non_finite(list(tpu.main_func().body.block.ops), tensors, top_tensors)
    if first is None:
        return []
    return [f"model_deploy: '{first}' is the first op whose {mode} result is inf/NaN (beyond "
            f"{LARGEST[mode]:g}); these qtable lines keep the ops that overflow in F32:",
            *(f"{name} F32" for name in keep_f32)]


def deploy(args: argparse.Namespace) -> int:
    """model_deploy's work, once its arguments are parsed (tpudsl/cli/model_deploy.py)."""
    tolerance = tolerance_flag(args.tolerance)
    qdq_spelling = args.quantize == "QDQ"
    if qdq_spelling:
        args.quantize = "INT8"
    if args.asymmetric and args.quantize != "INT8":
        raise TpudslError("--asymmetric needs --quantize INT8")
    _fuse_preprocess(args)  # TPU-MLIR's flags of the passes: a refused one fails here
    _backend_passes(args)
    out_dir = Path(args.model).parent
    if not out_dir.is_dir():
        raise TpudslError(f"cannot write --model '{args.model}': directory '{out_dir}' does not exist")
    top = load_module(args.mlir)
    qdq = _check_calibration(top, args, qdq_spelling)
    name = _module_name(top)
    suffix = ("_asym" if args.asymmetric else "_sym") if args.quantize == "INT8" else ""
    prefix = f"{name}_{args.processor.lower()}_{args.quantize.lower()}{suffix}"
    tpu_mlir = out_dir / f"{prefix}_tpu.mlir"
    weight_file = f"{prefix}_tpu_weights.npz"
    _prepare(top, args)
    if args.test_input and args.not_gen_bmodel:  # TPU-MLIR's QAT use: the Tpu module only, unchecked
        print(f"model_deploy: --not_gen_bmodel: --test_input {args.test_input} is not run (no Top, Tpu or bmodel "
              "check)", file=sys.stderr)
    inputs = _test_inputs(top, args) if args.test_input and not args.not_gen_bmodel else None
    half = WEIGHT_ONLY_MODES.get(args.quantize, args.quantize)  # W8F16's activations are F16

    reference, keep_f32 = None, []
    if inputs is not None:
        # The Top run comes first: lowering changes the module in place.
        top_tensors = run_module(top.module, top.weights, inputs, keep_all=True) if args.test_reference is None or half in LARGEST else {}
        reference = read_npz(args.test_reference) if args.test_reference else top_tensors
        if half in LARGEST:
            keep_f32 = ops_needing_f32(list(top.main_func().body.block.ops), top_tensors, half)
    returned = top.output_names()
    _tell_mask_ops(top, args, half)
    _lower(top, args, weight_file, qdq)
    save_module(top, tpu_mlir, out_dir / weight_file)
    print(f"model_deploy: wrote {tpu_mlir} and {out_dir / weight_file}", file=sys.stderr)
    if args.not_gen_bmodel:
        print(f"model_deploy: --not_gen_bmodel: stopped after {tpu_mlir}; no final module, {args.model} is not written",
              file=sys.stderr)
        return 0
    ours = None
    if inputs is not None:
        # int8 / f16 / bf16 inputs (--quant_input) take the float data quantized or rounded as
        # their stripped casts would
        inputs = stored_inputs(inputs, module_quant_io(top)[0], module_half_io(top)[0])
        ours = run_module(top.module, top.weights, inputs, keep_all=True)
        save_npz(out_dir / f"{prefix}_tpu_outputs.npz", ours if args.compare_all else
                 {k: ours[k] for k in top.output_names()})
        if half in LARGEST:
            report = _overflow_report(top, ours, top_tensors, keep_f32, half)
            if report:
                print("\n".join(report), file=sys.stderr)
        compared = widened(ours)  # f16/bf16 outputs (--quant_output) as float32, as the reference
        if args.quantize == "INT8":  # int8 tensors are compared as the values they stand for
            compared = dequantized(compared, int8_params(top))
        # an output whose cast --quant_output stripped is its cast's operand: compared under the
        # name the reference gives the output (position by position in the return)
        renamed = {new: old for old, new in zip(returned, top.output_names(), strict=True) if new != old}
        compared = {**compared, **{old: compared[new] for new, old in renamed.items()}}
        _compare(compared, reference, args, tolerance, [renamed.get(n, n) for n in top.output_names()])
    from tpudsl.backend import coverage
    from tpudsl.backend.codegen import without_instructions

    missing = without_instructions(top.module)
    if missing is not None:
        what = coverage.refusal(missing) or f"{describe(missing)} in INT8"
        print(f"model_deploy: stopped after the Tpu check: the backend has no instructions for {what} yet, "
              f"so {args.model} is not written", file=sys.stderr)
        return 0
    # Its own weight file: --weight-reorder replaces filters, and PREFIX_tpu.mlir must still load.
    bmodel = _backend(top, args, out_dir / f"{prefix}_final.mlir", out_dir / f"{prefix}_final_weights.npz")
    if inputs is not None and ours is not None:
        if args.skip_validation:
            print(f"model_deploy: --skip_validation: {args.model} is not run on the cmodel nor compared with the Tpu "
                  "interpreter", file=sys.stderr)
        else:
            _check_bmodel(bmodel, inputs, ours, args.quantize)
    return 0


def _backend_passes(args) -> dict:
    """The backend passes, in order, with model_deploy's TPU-MLIR flags for them, their values
    checked: deploy calls this before writing anything, so a refused flag leaves no file behind."""
    passes = {"weight-reorder": pass_class("weight-reorder")(),
              **({"weight-deduplicate": pass_class("weight-deduplicate")()} if args.weight_deduplicate else {}),
              **({"opt-post-processor": pass_class("opt-post-processor")()} if args.opt_post_processor else {}),
              "core-parallel": pass_class("core-parallel")(),  # several cores: A16MatMuls split by columns
              "address-assign": pass_class("address-assign")(merge_weight=args.merge_weight,
                                                              merge_concat=not args.no_concat_in_place),
              "layer-group": pass_class("layer-group")(opt=1 if args.disable_layer_group else args.opt,
                                                       group_by_cores=args.group_by_cores,
                                                       compress_mode=args.compress_mode),
              "codegen": pass_class("codegen")(model_file=str(args.model), embed_debug_info=True,
                                               model_version=args.model_version)}
    passes["address-assign"].check_options()
    passes["layer-group"].check_options()
    passes["codegen"].check_options()
    return passes


def _backend(top: TopModule, args, final_mlir: Path, weights: Path) -> Bmodel:
    """The backend passes and codegen; the .bmodel written, read back once (its cycles printed)."""
    from tpudsl.backend.bmodel import read_bmodel

    ctx = make_context()
    passes = _backend_passes(args)
    codegen = passes.pop("codegen")
    for p in passes.values():
        p.apply(ctx, top.module)
    top.module.verify()
    if args.debug:  # the group decisions, one line per group, next to the outputs
        from tpudsl.backend.layer_group import describe_groups

        text = describe_groups(top.module).encode()
        write_atomically(final_mlir.with_name(final_mlir.name.replace("_final.mlir", "_layer_groups.txt")),
                         lambda f: f.write(text))
    save_module(top, final_mlir, weights)
    codegen.apply(ctx, top.module)
    print(f"model_deploy: wrote {final_mlir} and {args.model}", file=sys.stderr)
    bmodel = read_bmodel(args.model)
    _print_cycles(bmodel.header)
    return bmodel


def _print_cycles(h: dict) -> None:
    """The cost model's estimate from the header; with several cores each one's busy cycles (each
    phase takes its slowest core's, backend/cores.py)."""
    cores = (f" on {h['core_num']} cores (busy: {', '.join(map(str, h['core_cycles']))})"
             if "core_num" in h else "")
    print(f"model_deploy: cost model: {h['overlapped_cycles']} cycles with GDMA and BDC overlapped{cores}",
          file=sys.stderr)


def _check_bmodel(bmodel: Bmodel, inputs: dict[str, np.ndarray], tpu: dict[str, np.ndarray], mode: str) -> None:
    """The third comparison: the cmodel's outputs against the Tpu interpreter's, by compare.bmodel_mismatch
    (bmodel_checker holds every tensor to the same rule)."""
    from tpudsl.backend.cmodel import run_bmodel

    # f16/bf16 outputs (--quant_output) compared as float32, exactly: the cmodel reads bf16 as
    # ml_dtypes.bfloat16, the interpreter holds it in float32 or bfloat16
    outputs = widened(run_bmodel(bmodel, inputs)[0])
    tpu = widened({k: tpu[k] for k in outputs})
    for name, got in outputs.items():
        problem = bmodel_mismatch(got, tpu[name], mode)
        if problem is not None:
            raise TpudslError(f"bmodel check failed at tensor '{name}': {problem}")
    how = f"equal the Tpu interpreter's ({mode}, bit-exact)" if mode != "F32" else "match the Tpu interpreter (1e-5 relative)"
    print(f"model_deploy: bmodel check passed: {len(outputs)} outputs of the cmodel {how}", file=sys.stderr)


def _compare(ours, reference, args, tolerance, outputs: list[str]) -> None:
    names = list(ours) if args.compare_all else outputs
    if args.fazzy_match:  # TPU-MLIR's: by the closest reference tensor of each shape, names aside
        lines, passed = fuzzy_match({k: ours[k] for k in names if k in ours}, reference, tolerance)
        print("\n".join(lines))
        if not passed:
            raise TpudslError(f"Tpu check failed (--fazzy_match): {lines[-1]}; tolerance {tolerance[0]},{tolerance[1]}")
        return
    excepts = [n for n in (args.excepts or "").split(",") if n]
    report = compare_dicts({k: ours[k] for k in names if k in ours}, reference, tolerance, excepts)
    print("\n".join(format_report(report, brief=True)))
    if not report.results:
        raise TpudslError("Tpu check failed: no tensor of the Tpu module is in the reference")
    if not report.passed:
        bad = report.failed[0]
        raise TpudslError(
            f"Tpu check failed at tensor '{bad.name}': {bad.verdict} (cosine {bad.cosine:.6f}, euclid "
            f"{bad.euclid:.6f}; tolerance {tolerance[0]},{tolerance[1]}); {len(report.failed)} of "
            f"{len(report.results)} tensors failed")
